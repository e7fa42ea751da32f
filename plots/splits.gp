# splits-sim.png: rung 06's split planners on the cost model of 06_split_kv/planner.h (simulated by
# tools/splits_sim.c: no GPU, no measurement). A row of panels per SM count (132, 78), a column per
# distribution of KV lengths; in each, fa's and greedy's makespan over balanced's (balanced reaches
# the lower bound ceil(total / SMs), so 1.0 is the best any plan can do) against the batch size B:
# the mean over the seeds, the bars spanning the seeds' smallest to largest ratio. The two planners
# are drawn a little apart in x so that their bars do not hide each other. The article's worked
# example (B = 32 on 78 SMs) is ringed and labelled.
# DIR/grid.gp sets NR, NC, NP, the ranges, XTICS and NSEED; DIR/p<k>.gp panel k's title, YLAB
# (its row's axis label), HAVE, DAT ("B fa_mean fa_min fa_max greedy_mean greedy_min greedy_max")
# and EX/EXDAT (the worked example's points, "x ratio label").
load "plots/common.gp"
load DIR . "/meta.gp"
HEIGHT = 780
eval start(1500, HEIGHT)
load DIR . "/grid.gp"

LEFT = 0.075; RIGHT = 0.835; TOP = top(0.85); BOTTOM = 0.085
HGAP = 0.012; VGAP = 0.115
PW = (RIGHT - LEFT - (NC - 1) * HGAP) / NC
PH = (TOP - BOTTOM - (NR - 1) * VGAP) / NR
SHIFT = 1.07     # fa drawn at B / SHIFT, greedy at B * SHIFT

set multiplot title TITLE font F13
do for [p = 1:NP] {
  r = (p - 1) / NC; c = (p - 1) % NC
  if (p > 1) { unset label }
  unset arrow; unset object
  set lmargin at screen LEFT + c * (PW + HGAP); set rmargin at screen LEFT + c * (PW + HGAP) + PW
  set tmargin at screen TOP - r * (PH + VGAP); set bmargin at screen TOP - r * (PH + VGAP) - PH
  set logscale x 2
  set xrange [XLO:XHI]; set yrange [YLO:YHI]
  eval XTICS
  set xtics font F8 nomirror
  set ytics font F9 nomirror
  set mytics 2
  set grid xtics ytics mytics lc rgb GRIDC
  set title font F10
  set style textbox opaque noborder margins 1, 1
  load sprintf("%s/p%d.gp", DIR, p)
  if (c == 0) { set format y "%.1fx"; set ylabel YLAB font F10 } else { set format y ""; unset ylabel }
  if (r == NR - 1) { set xlabel "B (requests in the batch)" font F9 } else { unset xlabel }
  if (p == 1) { eval SUBTITLE_CMD }
  if (HAVE) {
    set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 2 lc rgb hex("balanced") back
    if (EX) {
      plot DAT using ($1 / SHIFT):2:3:4 with yerrorlines lc rgb hex("fa") lw 2 pt 7 ps 0.8 notitle, \
           DAT using ($1 * SHIFT):5:6:7 with yerrorlines lc rgb hex("greedy") lw 2 pt 5 ps 0.8 notitle, \
           EXDAT using 1:2 with points pt 6 ps 2.6 lw 1.5 lc rgb INK notitle, \
           EXDAT using 1:2:3 with labels boxed right offset -1.6, 0 font F9 tc rgb INK notitle
    } else {
      plot DAT using ($1 / SHIFT):2:3:4 with yerrorlines lc rgb hex("fa") lw 2 pt 7 ps 0.8 notitle, \
           DAT using ($1 * SHIFT):5:6:7 with yerrorlines lc rgb hex("greedy") lw 2 pt 5 ps 0.8 notitle
    }
  } else {
    unset ytics; unset ylabel
    plot NaN notitle
  }
}

# the legend column
unset label; unset arrow; unset object; unset title; unset xlabel; unset ylabel; unset logscale
unset border; unset tics; unset grid
set lmargin at screen 0.845; set rmargin at screen 0.99; set tmargin at screen TOP; set bmargin at screen 0.02
set xrange [0:1]; set yrange [0:1]
set key at screen 0.845, screen TOP left top Left reverse noautotitle samplen 3 spacing 1.25 font F10
MEAN = NSEED > 1 ? sprintf("mean of %d seeds;\nbars: smallest..largest", NSEED) : ""
set label 1 "makespan: the longest an SM\nworks, in KV blocks, with\nCTAs list-scheduled in launch\norder, one per SM at a time.\nbalanced reaches\nceil(total blocks / SMs),\nthe lower bound: 1.0 is best." \
  at screen 0.845, screen TOP - 150.0 / HEIGHT left front font F9 tc rgb MUTED
if (strlen(MEAN) > 0) {
  set label 2 "Each point: the " . MEAN . ".\n(article: one batch per B)" \
    at screen 0.845, screen TOP - 300.0 / HEIGHT left front font F9 tc rgb MUTED
}
plot NaN with linespoints lc rgb hex("fa") lw 2 pt 7 ps 0.8 title "fa (FA3's heuristic)", \
     NaN with linespoints lc rgb hex("greedy") lw 2 pt 5 ps 0.8 title "greedy (article's re-split)", \
     NaN with lines dt 2 lw 2 lc rgb hex("balanced") title "balanced = 1 (lower bound)", \
     NaN with points pt 6 ps 2 lw 1.5 lc rgb INK title (EXANY ? "article's worked example" : "")
unset multiplot
