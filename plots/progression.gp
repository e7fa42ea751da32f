# <gpu>-progression.png: one bar per rung, its speedup over rung 00 on the same shape (log scale),
# labelled with the speedup and the rate; the PyTorch peers and the device ceiling as dashed lines.
# Top: prefill (TFLOP/s); bottom: decode (GB/s: decode is memory-bound).
# DIR/p1.gp and DIR/p2.gp (written by tools/plots.sh) set each panel's title, ranges, tics, notes,
# reference lines and BARS, a file of "x speedup id label1 label2".
load "plots/common.gp"
load DIR . "/meta.gp"
HEIGHT = 820
eval start(1200, HEIGHT)

set multiplot title TITLE font F13
do for [p = 1:2] {
  unset label; unset arrow; unset logscale; unset ylabel; set format y "%g"
  set lmargin at screen 0.08; set rmargin at screen 0.79
  if (p == 1) { set tmargin at screen top(0.87); set bmargin at screen 0.55 } \
  else        { set tmargin at screen 0.42; set bmargin at screen 0.10 }
  set xtics scale 0 font F10 nomirror
  set ytics font F10
  set title font F12
  set grid noxtics ytics
  set style textbox opaque noborder margins 1, 1
  if (p == 1) { eval SUBTITLE_CMD }
  load sprintf("%s/p%d.gp", DIR, p)
  if (HAVE) {
    set logscale y
    plot BARS using 1:2:($1 - 0.38):($1 + 0.38):(YLO):2:(colour(strcol(3))) \
           with boxxyerror lc rgb variable notitle, \
         '' using 1:2:(strcol(4) . "\n" . strcol(5)) with labels boxed offset 0, 1.5 font F9 notitle
  } else {
    plot NaN notitle
  }
}
unset multiplot
