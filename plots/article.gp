# csv: article
# <gpu>-article.png: the seed article's shapes, a group of bars per shape, a bar per rung and peer
# (peers hatched) at its median time in ms, log scale; without an ok row, why ("n/a": unsupported).
load "plots/common.gp"
F = article
TITLE = DEVICE . ": the seed article's shapes, time per rung (lower is better)"
W = 0.84 / words(IDS)
key(_) = sprintf("%d/%d/%d/%d/%d/%d/%d", column("B"), column("Hq"), column("Hkv"), column("N"), column("M"), column("d"), column("causal"))
x(_) = pos(GS, key(0)) - 0.42 + (pos(IDS, strcol(1)) - 0.5) * W
ms(_) = ok(0) && column("ms_median") > 0 ? column("ms_median") : NaN
array GT[64]                       # the shapes' tic labels, in order of appearance
GS = ""; LR = ""; LP = ""; NBAD = 0; LO = 1e300; HI = 0
stats F using (!has(IDS, strcol(1)) ? 0 : (has(GS, key(0)) ? 0 : (GS = GS . " " . key(0), GT[words(GS)] = shape(0)), \
  ms(0) > 0 ? (LO = min(LO, ms(0)), HI = max(HI, ms(0)), is_peer(strcol(1)) ? LP = add(LP, strcol(1)) : LR = add(LR, strcol(1))) : \
  NBAD = NBAD + 1), 0) nooutput
YLO = declo(LO / 3); YHI = 10 ** (log10(HI) + 0.15 * (log10(HI) - log10(YLO)) + 0.1)
L = ""; do for [w in IDS] { L = L . (has(LR, w) ? " " . w : "") }; LR = L    # the key in ladder order
L = ""; do for [w in IDS] { L = L . (has(LP, w) ? " " . w : "") }; LP = L
eval start(1200, 700)
set lmargin at screen 0.08; set rmargin at screen 0.80; set tmargin at screen top(0.88); set bmargin at screen 0.13
set ylabel "median time per call, ms (log scale; lower is better)" font F10
set xtics () scale 0 font F10 nomirror
do for [g = 1:words(GS)] { s = GT[g]; set xtics add (s[1:strstrt(s, " N") - 1] . "\n" . s[strstrt(s, " N") + 1:] g) }
set ytics font F10; set grid noxtics ytics
set key at screen 0.815, screen top(0.88) left top Left reverse samplen 2 spacing 1.15 font F10
set logscale y; set format y "%g"; set xrange [0.5:words(GS) + 0.5]; set yrange [YLO:YHI]
bar(w) = strcol(1) eq w ? ms(0) : NaN
BADS = NBAD == 0 ? "NaN notitle" : 'F using (x(0)):(ms(0) > 0 ? NaN : YLO * (YHI / YLO) ** 0.015):(strcol(1) . " " . ' . \
  '(status(0) eq "unsupported" ? "n/a" : status(0))) with labels rotate by 90 left font F8 tc rgb MUTED notitle'
plot for [w in LR] F using (x(0)):(bar(w)):(x(0) - W * 0.46):(x(0) + W * 0.46):(YLO):(bar(w)) \
       with boxxyerror fs solid 1.0 border lc rgb INK lc rgb hex(w) title label(w), \
     for [w in LP] F using (x(0)):(bar(w)):(x(0) - W * 0.46):(x(0) + W * 0.46):(YLO):(bar(w)) \
       with boxxyerror fs pattern 4 border lc rgb INK lc rgb hex(w) title label(w), \
     F using (x(0)):(ms(0)):(fmt(ms(0))) with labels rotate by 90 left offset 0, 0.4 font F8 tc rgb INK notitle, @BADS
unset multiplot
