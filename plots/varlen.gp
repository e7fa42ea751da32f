# <gpu>-varlen.png: rung 06 run once per split planner (fa, greedy, balanced) over the varlen decode
# batches of sweeps/varlen.txt; a group of bars per batch.
# Top: each planner's median time over the reference planner's (balanced: the line at 1), solid,
#      beside the makespan its plan has in the cost model over the reference's, hatched: where the
#      model's ordering holds on the GPU, and by how much. Bars grow from 1: up is slower.
# Bottom: the bandwidth each planner achieved (GB/s), the copy ceiling dashed (right axis: % of it).
# A planner without an ok row on a batch leaves a gap with its status at the bottom of the slot.
# DIR/vl.gp sets PLANNERS, REF, OTHERS (the planners compared with REF), NOTES and COPY;
# DIR/p1.gp and DIR/p2.gp each panel's title, tics, ranges, gap notes, HAVE, BARW and BARS:
#   p1: "x ratio ylow yhigh planner meas|sim label"     p2: "x GB/s planner label".
load "plots/common.gp"
load DIR . "/meta.gp"
HEIGHT = 1000
eval start(1400, HEIGHT)
load DIR . "/vl.gp"

set multiplot title TITLE font F13
set style textbox opaque noborder margins 1, 1
LEFT = 0.07; RIGHT = 0.80; KEYX = 0.865

# --- top: time and simulated makespan over the reference planner's ---
set lmargin at screen LEFT; set rmargin at screen RIGHT
set tmargin at screen top(0.88); set bmargin at screen 0.58
eval SUBTITLE_CMD
set title font F11
set xtics scale 0 font F9 nomirror
set ytics font F9 nomirror
set mytics 2
set grid noxtics ytics mytics lc rgb GRIDC
set format y "%.2fx"
set ylabel sprintf("over %s's (1 = as fast as %s; up: slower)", REF, REF) font F10
load DIR . "/p1.gp"
set key at screen KEYX, screen top(0.88) left top Left reverse samplen 2.5 spacing 1.2 font F10
if (strlen(REF) > 0) { set arrow from graph 0, first 1 to graph 1, first 1 nohead lw 2.5 lc rgb hex(REF) front }
if (HAVE) {
  sel(p, k) = (strcol(5) eq p && strcol(6) eq k) ? $2 : NaN
  plot for [i = 1:words(OTHERS)] BARS using 1:(sel(word(OTHERS, i), "meas")):($1 - BARW / 2):($1 + BARW / 2):3:4 \
         with boxxyerror fs solid 1.0 border lc rgb INK lc rgb hex(word(OTHERS, i)) \
         title word(OTHERS, i) . ": time", \
       for [i = 1:words(OTHERS)] BARS using 1:(sel(word(OTHERS, i), "sim")):($1 - BARW / 2):($1 + BARW / 2):3:4 \
         with boxxyerror fs pattern 5 border lc rgb hex(word(OTHERS, i)) lw 1.5 lc rgb hex(word(OTHERS, i)) \
         title word(OTHERS, i) . ": cost model", \
       NaN with lines lw 2.5 lc rgb hex(REF) title REF . " = 1 (both)", \
       BARS using 1:($2 >= 1 ? $4 : NaN):7 with labels rotate by 90 left offset 0, 0.35 font F8 tc rgb INK notitle, \
       BARS using 1:($2 < 1 ? $3 : NaN):7 with labels rotate by 90 right offset 0, -0.35 font F8 tc rgb INK notitle
} else {
  unset ylabel
  plot NaN notitle
}

# --- bottom: achieved bandwidth ---
unset label; unset arrow; unset key; unset mytics
set tmargin at screen 0.43; set bmargin at screen 0.10
set format y "%g"
set ylabel "GB/s (higher is better)" font F10
load DIR . "/p2.gp"
if (COPY > 0 && HAVE) {
  set y2tics font F9 nomirror format "%g%%"
  set y2label "% of the copy ceiling" font F10
  set ytics nomirror
}
set grid noxtics ytics
set key at screen KEYX, screen 0.43 left top Left reverse samplen 2.5 spacing 1.2 font F10
if (HAVE) {
  bw(p) = strcol(3) eq p ? $2 : NaN
  plot for [i = 1:words(PLANNERS)] BARS using 1:(bw(word(PLANNERS, i))):($1 - BARW / 2):($1 + BARW / 2):(0):(bw(word(PLANNERS, i))) \
         with boxxyerror fs solid 1.0 border lc rgb INK lc rgb hex(word(PLANNERS, i)) title word(PLANNERS, i), \
       NaN with lines dt 2 lw 1.5 lc rgb hex("ceiling") title (COPY > 0 ? "copy ceiling" : ""), \
       BARS using 1:2:4 with labels rotate by 90 left offset 0, 0.35 font F8 tc rgb INK notitle
} else {
  unset ylabel
  plot NaN notitle
}

# what was left out, and where the batch names come from
unset label; unset arrow; unset title; unset xlabel; unset ylabel; unset y2label; unset y2tics
unset border; unset tics; unset grid; unset key
set lmargin at screen KEYX; set rmargin at screen 0.99; set tmargin at screen 0.5; set bmargin at screen 0.02
set xrange [0:1]; set yrange [0:1]
if (strlen(NOTES) > 0) {
  set label NOTES at screen KEYX, screen top(0.88) - 170.0 / HEIGHT left front tc rgb MUTED font F9
}
plot NaN notitle
unset multiplot
