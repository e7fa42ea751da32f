# Shared by tflops.gp, workspace.gp and decode.gp: a grid of NR x NC line panels (NP of them) and
# a legend column on the right. The calling script sets the axes (log scales, labels, formats).
# DIR/p<k>.gp sets panel k's title, ranges, tics, reference lines and notes, and SERIES: the ids
# drawn there, each from PREFIX.<id>.".dat" ("x y" lines; a blank line is a gap: a shape that was
# not ok). DIR/p-legend.gp sets LEGEND (ids), NOTES (what was left out, and why) and lab_<id>.
load DIR . "/p-legend.gp"

LEFT = 0.07; RIGHT = 0.80; TOP = top(0.86); BOTTOM = 0.08
HGAP = 0.075; VGAP = 0.10
PW = (RIGHT - LEFT - (NC - 1) * HGAP) / NC
PH = (TOP - BOTTOM - (NR - 1) * VGAP) / NR

set multiplot title TITLE font F13
do for [p = 1:NP] {
  r = (p - 1) / NC; c = (p - 1) % NC
  unset label; unset arrow
  set lmargin at screen LEFT + c * (PW + HGAP); set rmargin at screen LEFT + c * (PW + HGAP) + PW
  set tmargin at screen TOP - r * (PH + VGAP); set bmargin at screen TOP - r * (PH + VGAP) - PH
  set title font F12
  set xtics font F9 nomirror
  set ytics font F9
  if (r == NR - 1) { set xlabel XLABEL font F10 } else { unset xlabel }
  if (c == 0) { set ylabel YLABEL font F10 } else { unset ylabel }
  if (p == 1) { eval SUBTITLE_CMD }
  load sprintf("%s/p%d.gp", DIR, p)
  if (HAVE) {
    plot for [i = 1:words(SERIES)] PREFIX . word(SERIES, i) . ".dat" using 1:2 with linespoints \
           lc rgb hex(word(SERIES, i)) dt dtype(word(SERIES, i)) lw lwidth(word(SERIES, i)) \
           pt ptype(word(SERIES, i)) ps psize(word(SERIES, i)) notitle
  } else {
    plot NaN notitle
  }
}

# the legend column: the same entries for every panel, then what was left out
unset label; unset arrow; unset title; unset xlabel; unset ylabel; unset logscale
unset border; unset tics; unset grid
set lmargin at screen 0.81; set rmargin at screen 0.99; set tmargin at screen TOP; set bmargin at screen 0.02
set xrange [0:1]; set yrange [0:1]
set key at screen 0.815, screen TOP left top Left reverse noautotitle samplen 3.5 spacing 1.15 font F10
NOTEY = TOP - (words(LEGEND) + 1) * 19.0 / HEIGHT
if (strlen(NOTES) > 0) {
  set label NOTES at screen 0.815, screen NOTEY left front tc rgb MUTED font F9
}
if (words(LEGEND) > 0) {
  plot for [i = 1:words(LEGEND)] NaN with linespoints lc rgb hex(word(LEGEND, i)) dt dtype(word(LEGEND, i)) \
         lw lwidth(word(LEGEND, i)) pt ptype(word(LEGEND, i)) ps psize(word(LEGEND, i)) \
         title legend_label(word(LEGEND, i))
} else {
  plot NaN notitle
}
unset multiplot
