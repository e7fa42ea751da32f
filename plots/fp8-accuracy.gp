# csv: fp8-accuracy
# <gpu>-fp8-accuracy.png: rung 07's FP8 step (07g) against the float64 reference on FlashAttention-3's
# outlier inputs (results/<gpu>-fp8-accuracy.csv: method,d,N,rmse,rel_l2): O's RMSE per method, a
# group of bars per head dim, one panel per N (1024 left, 4096 right), log scale; 07f in float16 for
# scale, the issue's target (RMSE 1e-2 for block + Hadamard) dashed; cuDNN's FP8 (lab/fp8_accuracy.py)
# where the CSV has it. A method the CSV has no row for has no place in a group; a missing bar is a
# method that has rows, but none at that d and N.
load "plots/common.gp"
F = fp8_accuracy
TITLE = DEVICE . ": FP8 (07g) accuracy, O's RMSE against the float64 reference, 0.1% outliers"
ALL = "07f-f16 fp8-tensor fp8-block fp8-block-hadamard cudnn-fp8"
ALLNAME = "07f in float16|FP8, one scale per tensor|FP8, a scale per block|FP8, a scale per block + Hadamard (07g)|cuDNN's FP8 (a scale per tensor, O in e4m3)"
ALLCOL = "1556175 14034728 16744206 2924588 9725885"   # 0x17becf 0xd62728 0xff7f0e 0x2ca02c 0x9467bd
_nth(s, n) = n <= 1 ? s[1:strstrt(s, "|") - 1] : _nth(s[strstrt(s, "|") + 1:], n - 1)
array HAS[words(ALL)]
do for [k = 1:|HAS|] { HAS[k] = 0 }
stats F using (_a = pos(ALL, strcol("method")), _a == _a ? HAS[_a] = 1 : 0, 0) nooutput
METHODS = ""; MNAME = ""; MCOLS = ""
do for [k = 1:|HAS|] { if (HAS[k]) { METHODS = METHODS . " " . word(ALL, k); MNAME = MNAME . _nth(ALLNAME . "|", k) . "|"; MCOLS = MCOLS . " " . word(ALLCOL, k) } }
mcol(m) = int(word(MCOLS, m) + 0)
mname(i) = _nth(MNAME, i)
DS = "64 128 256"; NS = "1024 4096"; TARGET = 1e-2
NMth = words(METHODS); ND = words(DS)
array V[2 * ND * NMth]
do for [k = 1:|V|] { V[k] = NaN }
K(p, di, m) = ((p - 1) * ND + di - 1) * NMth + m
stats F using (_m = pos(METHODS, strcol("method")), _d = pos(DS, strcol("d")), _p = pos(NS, strcol("N")), \
  _m == _m && _d == _d && _p == _p && column("rmse") > 0 ? V[K(_p, _d, _m)] = column("rmse") : 0, 0) nooutput
LO = 1e9; HI = 0
do for [k = 1:|V|] { if (V[k] == V[k]) { LO = min(LO, V[k]); HI = max(HI, V[k]) } }
eval start(1200, 640)
W = 0.8 / NMth                                        # a bar's width; a group spans 0.8
set logscale y 10; set format y "%g"; set grid noxtics ytics mytics lc rgb GRIDC
set yrange [declo(LO) / 2 : HI * 4]; set xrange [0.4 : ND + 0.6]
set xtics ("d = 64" 1, "d = 128" 2, "d = 256" 3) nomirror; set ytics nomirror
set ylabel "RMSE of O (log scale)"
set style fill solid 1.0 border lc rgb INK
do for [p = 1:2] {
  unset label; unset arrow
  set arrow from graph 0, first TARGET to graph 1, first TARGET nohead dt 2 lw 1.5 lc rgb hex("ceiling") back
  set label 999 SUBTITLE at screen 0.5, screen 1 - 38.0 / 640 center font F10 tc rgb INK
  set size 0.48, top(0.86) - 0.14; set origin (p == 1 ? 0.01 : 0.5), 0.14
  set title sprintf("N = M = %s keys, B = 1, H = 4, not causal", word(NS, p)) font F11
  if (p == 1) { set ylabel "RMSE of O (log scale)" } else { unset ylabel }
  do for [di = 1:ND] { do for [m = 1:NMth] { _v = V[K(p, di, m)]; if (_v == _v) {
    set label sprintf("%.3g", _v) at di - 0.4 + (m - 0.5) * W, _v * 1.12 rotate by 90 left font F8 tc rgb INK front } } }
  set print $BARS
  do for [di = 1:ND] { do for [m = 1:NMth] { _v = V[K(p, di, m)]; if (_v == _v) { print sprintf("%g,%g,%d", di - 0.4 + (m - 0.5) * W, _v, m) } } }
  set print
  plot $BARS using 1:(sqrt($2 * declo(LO) / 2)):($1 - W * 0.45):($1 + W * 0.45):(declo(LO) / 2):2:(mcol(int($3))) \
       with boxxyerror lc rgb variable notitle
}
# the key: one line per method, under the panels
unset label; unset arrow; unset title; unset tics; unset border; unset grid; unset logscale
set size 1, 0.12; set origin 0, 0; set xrange [0:1]; set yrange [0:1]
set key horizontal maxrows 2 center bottom width 1 samplen 1.5 font F10 tc rgb INK
plot for [m = 1:NMth] NaN with boxes lc rgb mcol(m) title mname(m), \
     NaN with lines dt 2 lw 1.5 lc rgb hex("ceiling") title "the target for block + Hadamard: RMSE 1e-2"
unset multiplot
