# Loaded by prefill-tflops.gp, decode-bandwidth.gp and workspace.gp: NR x NC panels (NP), a line per
# rung and peer of F with a value there, and a legend column saying what was left out and why. They
# set sel(p), ptitle(p), yv(p) (panel p's rows, title, a row's value), XCOL, XLABEL, YLABEL, the axes;
# optional: REFY, REFTEXT (a dashed line), SHAREY = 0 (y autoscaled per panel), ENDS = 1 (name lines
# where they end), EXTRA, EXTRAKEY (a plot clause, its key), NOTEX (a last note), NOVAL (ok, no value).
REFY = exists("REFY") ? REFY : 0; SHAREY = exists("SHAREY") ? SHAREY : 1; ENDS = exists("ENDS") ? ENDS : 0; NOTEX = exists("NOTEX") ? NOTEX : ""
EXTRA = exists("EXTRA") ? EXTRA : "NaN notitle"; EXTRAKEY = exists("EXTRAKEY") ? EXTRAKEY : EXTRA; NOVAL = exists("NOVAL") ? NOVAL : "no value"
NI = words(IDS)
K(p, w) = (p - 1) * NI + pos(IDS, w)                               # (panel, id) -> array index
array NT[(NP + 1) * NI]; array EX[NP * NI]; array EY[NP * NI]     # notes; where each line ends
array LEGP[NP]; array LO[NP]; array HI[NP]                         # ids with a line; y range
do for [k = 1:(NP + 1) * NI] { NT[k] = ""; if (k <= NP * NI) { EX[k] = 0; EY[k] = 0 } }
do for [p = 1:NP] { LEGP[p] = ""; LO[p] = 1e300; HI[p] = REFY }; XS = ""
_x(x) = sprintf("%g", x)
_row(p, w, x, y) = (XS = add(XS, _x(x)), y > 0 ? (LEGP[p] = add(LEGP[p], w), LO[p] = min(LO[p], y), \
  HI[p] = max(HI[p], y), x >= EX[K(p, w)] ? (EX[K(p, w)] = x, EY[K(p, w)] = y) : 0) : (_r = ok(0) ? NOVAL : status(0), \
  NT[K(p, w)] = NT[K(p, w)] eq "" ? _r . " at " . XCOL . "=" . _x(x) : NT[K(p, w)] . " " . _x(x), \
  NT[K(NP + 1, w)] = NT[K(NP + 1, w)] eq "" ? _r : NT[K(NP + 1, w)]), 0)
do for [p = 1:NP] { stats F using (has(IDS, strcol(1)) && sel(p) ? _row(p, strcol(1), column(XCOL), yv(p)) : 0) nooutput }
LEGEND = ""
do for [w in IDS] { do for [p = 1:NP] { if (has(LEGP[p], w)) { LEGEND = add(LEGEND, w) } } }
if (SHAREY) { do for [p = 2:NP] { LO[1] = min(LO[1], LO[p]); HI[1] = max(HI[1], HI[p]) }; do for [p = 2:NP] { LO[p] = LO[1]; HI[p] = HI[1] } }
# what was left out: ids without any value (block 0), then per panel the shapes without one;
# consecutive ids with the same note share a line; panel notes that every panel has, said once
array BL[NP + 1]
do for [b = 0:NP] { B = ""; G = ""; T = ""
  do for [w in IDS . " ~"] {
    t = w eq "~" ? "" : b == 0 ? (has(LEGEND, w) ? "" : NT[K(NP + 1, w)]) : has(LEGEND, w) ? NT[K(b, w)] : ""
    if (t ne T) { if (T ne "") { B = B . "\n  " . wrap(G . ": " . T, 30, "\n    ") }; G = w; T = t } else { G = G . " " . w }
  }
  BL[b + 1] = B }
same = 1; do for [p = 2:NP] { same = same && BL[p + 1] eq BL[2] }
NOTES = BL[1] . (same ? BL[2] : "")
if (!same) { do for [p = 1:NP] { NOTES = NOTES . (BL[p + 1] eq "" ? "" : "\n" . ptitle(p) . ":" . BL[p + 1]) } }
NOTES = (NOTES eq "" ? "" : "not plotted:" . NOTES . "\n") . NOTEX
eval start(1200, HEIGHT)
LEFT = 0.07; RIGHT = 0.80; TOP = top(0.86); BOTTOM = 0.08; HGAP = 0.075; VGAP = 0.10
PW = (RIGHT - LEFT - (NC - 1) * HGAP) / NC; PH = (TOP - BOTTOM - (NR - 1) * VGAP) / NR
set xtics () font F9 nomirror
do for [x in XS] { set xtics add (x real(x)) }
set ytics font F9
if (strlen(XS) > 0) { set xrange [real(word(XS, 1)) / 1.35:real(word(XS, words(XS))) * 1.35] }
do for [p = 1:NP] {
  r = (p - 1) / NC; c = (p - 1) % NC
  if (p > 1) { unset label }
  unset arrow
  set lmargin at screen LEFT + c * (PW + HGAP); set rmargin at screen LEFT + c * (PW + HGAP) + PW
  set tmargin at screen TOP - r * (PH + VGAP); set bmargin at screen TOP - r * (PH + VGAP) - PH
  set title ptitle(p) font F12
  if (r == NR - 1) { set xlabel XLABEL font F10 } else { unset xlabel }
  if (c == 0) { set ylabel YLABEL font F10 } else { unset ylabel }
  if (REFY > 0) { eval inlineref(REFY, REFTEXT) }
  if (words(LEGP[p]) == 0) { eval emptynote("no ok rows for this panel"); plot NaN notitle; continue }
  if (SHAREY) { set yrange [declo(LO[p]):HI[p] * 2.5] } else { set autoscale y }
  if (ENDS) { do for [w in LEGP[p]] {        # several rungs often need exactly the same bytes
    T = ""; do for [v in LEGP[p]] { if (EX[K(p, v)] == EX[K(p, w)] && EY[K(p, v)] == EY[K(p, w)]) { T = T . " " . v } }
    if (word(T, 1) eq w) { set label T[2:] at first EX[K(p, w)], first EY[K(p, w)] right offset 0, 0.9 font F9 tc rgb INK front }
  } }
  plot for [w in LEGP[p]] F using (column(XCOL)):(strcol(1) eq w && sel(p) ? yv(p) : NaN) smooth unique \
         with linespoints lc rgb hex(w) dt dtype(w) lw lwidth(w) pt ptype(w) ps 1.1 notitle, @EXTRA
}
# the legend column: the same entries for every panel, then what was left out
unset label; unset arrow; unset title; unset xlabel; unset ylabel; unset logscale; unset border; unset tics; unset grid
set lmargin at screen 0.81; set rmargin at screen 0.99; set tmargin at screen TOP; set bmargin at screen 0.02
set key at screen 0.815, screen TOP left top Left reverse samplen 3.5 spacing 1.15 font F10
set label NOTES at screen 0.815, screen TOP - (words(LEGEND) + 2) * 19.0 / HEIGHT left front tc rgb MUTED font F9
plot [0:1][0:1] NaN notitle, for [w in LEGEND] keyentry with linespoints lc rgb hex(w) dt dtype(w) lw lwidth(w) \
       pt ptype(w) ps 1.1 title label(w), @EXTRAKEY
unset multiplot
