# <gpu>-article.png: the seed article's four shapes, a group of bars per shape, a bar per rung and
# peer (hatched), its median time in ms on a log scale. A rung that did not run a shape shows why
# ("n/a" = unsupported, "skipped", "FAIL") at the bottom of its slot.
# DIR/bars.gp sets ranges, tics, notes, LEGEND (ids with a bar) and BARS: "x ms index id label".
load "plots/common.gp"
load DIR . "/meta.gp"
HEIGHT = 700
eval start(1200, HEIGHT)
load DIR . "/bars.gp"

eval TITLE_CMD
eval SUBTITLE_CMD
set lmargin at screen 0.08; set rmargin at screen 0.80; set tmargin at screen top(0.88); set bmargin at screen 0.13
set ylabel "median time per call, ms (log scale; lower is better)" font F10
set xtics scale 0 font F10 nomirror
set ytics font F10
set grid noxtics ytics
set key at screen 0.815, screen top(0.88) left top Left reverse samplen 2 spacing 1.15 font F10
if (HAVE) {
  set logscale y
  set format y "%g"
  # rungs solid, peers hatched; one plot per id so each gets its key entry
  LR = ""; LP = ""
  do for [i = 1:words(LEGEND)] { w = word(LEGEND, i); if (is_peer(w)) { LP = LP . " " . w } else { LR = LR . " " . w } }
  bar(id) = strcol(4) eq id ? $2 : NaN
  plot for [i = 1:words(LR)] BARS using 1:(bar(word(LR, i))):($1 - BARW / 2):($1 + BARW / 2):(YLO):(bar(word(LR, i))) \
         with boxxyerror fs solid 1.0 border lc rgb INK lc rgb hex(word(LR, i)) title legend_label(word(LR, i)), \
       for [i = 1:words(LP)] BARS using 1:(bar(word(LP, i))):($1 - BARW / 2):($1 + BARW / 2):(YLO):(bar(word(LP, i))) \
         with boxxyerror fs pattern 4 border lc rgb INK lc rgb hex(word(LP, i)) title legend_label(word(LP, i)), \
       BARS using 1:2:(strcol(5)) with labels rotate by 90 left offset 0, 0.4 font F8 tc rgb INK notitle
} else {
  unset ytics; unset ylabel
  eval emptynote("no rung or peer has an ok row in this CSV")
  plot NaN notitle
}
