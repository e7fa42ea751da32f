# csv: models
# <gpu>-models.png: the open models' attention shapes (sweeps/models.txt), a group of bars per model:
# the best variant of each rung and each peer that ran it. Top: prefill, TFLOP/s; bottom: decode on
# one shape (B = 16, M = 4096 keys), GB/s; log scales. A paged KV cache, or a storage type other
# than bfloat16, is a bar of its own (rung 06 is the one rung that reads pages). A missing bar is a
# refusal, a skip or a failure: the models table in NOTES.md says which and why.
load "plots/common.gp"
F = models
TITLE = DEVICE . ": the open models' attention shapes, the best variant of each rung"
DB = 16; DM = 4096                                   # the decode panel's shape
PANEL = "prefill decode"; RATE = "tflops gbps"; UNIT = "TFLOP/s GB/s"
ptitle(p) = p == 1 ? sprintf("prefill, %s, B = %d, N = M = %d (B·N = %d tokens)", PC ? "causal" : "not causal", PB, PN, PB * PN) : \
  sprintf("decode, one query token, B = %d, M = %d", DB, DM)
sel(p) = p == 1 ? column("N") > 1 : column("N") == 1 && column("B") == DB && column("M") == DM
# a row's model (model= of the extra field) and its bar: the rung (not the variant) or the peer,
# "/paged" on a paged KV cache, "/f16" etc. in a storage type other than bfloat16
model(_) = kv(strcol("extra"), "model")
bar(_) = (is_peer(strcol(1)) ? strcol(1) : strcol(1)[1:2]) . (kv(strcol("extra"), "page") ne "" ? "/paged" : "") . \
  (strcol("dtype") eq "bf16" ? "" : "/" . strcol("dtype"))
barbase(b) = strstrt(b, "/") ? b[1:strstrt(b, "/") - 1] : b
barname(b) = barbase(b) . (!is_peer(b) && exists("name_" . b[1:2]) ? " " . value("name_" . b[1:2]) : "") . \
  (strstrt(b, "/paged") ? ", paged" : "") . (strstrt(b, "/f16") ? " (float16)" : strstrt(b, "/f32") ? " (float32)" : "")
barcolour(b) = (_c = colour(barbase(b)), _f = strstrt(b, "/") ? 0.45 : 0, \
  (_mix((_c >> 16) & 255, _f) << 16) | (_mix((_c >> 8) & 255, _f) << 8) | _mix(_c & 255, _f))
# the models of the CSV, in the order of sweeps/models.txt (then any other, in the CSV's order)
SWEEPM = ""
if (system("test -f sweeps/models.txt && echo y") eq "y") {
  set datafile separator "\t"                     # (a sweep line has no tab: the whole line is column 1)
  mtok(s) = strstrt(s, "model=") ? word(s[strstrt(s, "model=") + 6:], 1) : ""
  stats "sweeps/models.txt" using (_m = mtok(strcol(1)), SWEEPM = _m eq "" ? SWEEPM : add(SWEEPM, _m), 0) nooutput
  set datafile separator ","
}
BARS = ""; array SB[2]; SB[1] = ""; SB[2] = ""; CSVM = ""; PB = 0; PN = 0; PC = 0
stats F using (model(0) ne "" && ok(0) ? (CSVM = add(CSVM, model(0)), _p = sel(1) ? 1 : sel(2) ? 2 : 0, \
  _p == 1 && PB == 0 ? (PB = int(column("B")), PN = int(column("N")), PC = int(column("causal"))) : 0, \
  _p > 0 && column(word(RATE, _p)) > 0 ? (BARS = add(BARS, bar(0)), SB[_p] = add(SB[_p], bar(0))) : 0) : 0, 0) nooutput
MODELS = ""
do for [w in SWEEPM . " " . CSVM] { if (has(CSVM, w)) { MODELS = add(MODELS, w) } }
# bars in lesson order (a rung's paged bar after its own), then the peers as the CSV has them
bkey(b) = is_peer(barbase(b)) ? 100 + pos(BARS, b) : real(b[1:2]) + (strstrt(b, "/") ? 0.5 : 0)
SORTED = ""
do for [i = 1:words(BARS)] {
  _best = ""; do for [w in BARS] { if (!has(SORTED, w) && (_best eq "" || bkey(w) < bkey(_best))) { _best = w } }
  SORTED = SORTED . " " . _best
}
BARS = SORTED
MODELS = MODELS[2:]; BARS = BARS[2:]
NM = words(MODELS); NB = words(BARS)
K(p, m, b) = ((p - 1) * NM + m - 1) * NB + b
array V[2 * max(NM, 1) * max(NB, 1)]; array VID[2 * max(NM, 1) * max(NB, 1)]
do for [k = 1:|V|] { V[k] = NaN; VID[k] = "" }
_put(p, k, v) = (V[k] == V[k] && V[k] >= v) ? 0 : (V[k] = v, VID[k] = strcol(1))
stats F using (model(0) ne "" && ok(0) ? (_p = sel(1) ? 1 : sel(2) ? 2 : 0, \
  _p > 0 && column(word(RATE, _p)) > 0 ? _put(_p, K(_p, pos(MODELS, model(0)), pos(BARS, bar(0))), column(word(RATE, _p))) : 0) : 0, 0) nooutput
eval start(1200, 860)
set lmargin at screen 0.08; set rmargin at screen 0.78
set grid noxtics ytics
do for [p = 1:2] {
  if (p > 1) { unset label }
  unset arrow
  set tmargin at screen (p == 1 ? top(0.87) : 0.44); set bmargin at screen (p == 1 ? 0.56 : 0.13)
  set title ptitle(p) font F12
  n = words(SB[p])
  if (n == 0 || NM == 0) {
    eval emptynote("no ok row of this shape"); unset xtics; unset ytics; unset ylabel; unset logscale
    plot [0:1][0:1] NaN notitle; set xtics; set ytics; continue
  }
  LO = 1e300; HI = 0
  do for [k = 1:|V|] { if (V[k] == V[k] && (k - 1) / (NM * NB) == p - 1) { LO = min(LO, V[k]); HI = max(HI, V[k]) } }
  set logscale y; set yrange [declo(LO / 2):HI * 8]; set format y "%g"
  set ylabel word(UNIT, p) . " (log scale)" font F11
  set xrange [0.5:NM + 0.5]
  set xtics () scale 0 font F10 nomirror; set ytics font F10
  do for [m = 1:NM] { _l = word(MODELS, m); set xtics add ((strstrt(_l, "+") ? _l[1:strstrt(_l, "+") - 1] . "\n" . \
    _l[strstrt(_l, "+") + 1:] : _l) m) }
  W = 0.84 / n                                     # the bars of panel p, side by side in each group
  xb(m, j) = m - 0.42 + (j - 0.5) * W
  plot for [j = 1:n] [m = 1:NM:1] '+' using (xb(m, j)):(V[K(p, m, pos(BARS, word(SB[p], j)))]): \
         (xb(m, j) - W * 0.45):(xb(m, j) + W * 0.45):(declo(LO / 2)):(V[K(p, m, pos(BARS, word(SB[p], j)))]) \
         with boxxyerror lc rgb barcolour(word(SB[p], j)) notitle, \
       for [j = 1:n] [m = 1:NM:1] '+' using (xb(m, j)):(V[K(p, m, pos(BARS, word(SB[p], j)))]): \
         (fmt(V[K(p, m, pos(BARS, word(SB[p], j)))]) . (VID[K(p, m, pos(BARS, word(SB[p], j)))] eq \
         barbase(word(SB[p], j)) ? "" : " " . VID[K(p, m, pos(BARS, word(SB[p], j)))])) \
         with labels rotate by 90 left offset 0, 0.4 font F8 tc rgb INK notitle
}
# the legend column: every bar of either panel
unset label; unset arrow; unset title; unset xlabel; unset ylabel; unset logscale; unset border; unset tics; unset grid
set lmargin at screen 0.80; set rmargin at screen 0.99; set tmargin at screen top(0.87); set bmargin at screen 0.02
set key at screen 0.805, screen top(0.87) left top Left reverse samplen 1.5 spacing 1.25 font F10
set label "each bar: the best variant of the rung\n(its id over the bar when the rung has\nseveral); no bar: refused, skipped or\nfailed (NOTES.md's models table\nsays why)" \
  at screen 0.805, screen top(0.87) - (NB + 2) * 21.0 / HEIGHT left front tc rgb MUTED font F9
plot [0:1][0:1] NaN notitle, for [j = 1:NB] keyentry with boxes fs solid 1.0 lc rgb barcolour(word(BARS, j)) \
       title barname(word(BARS, j))
unset multiplot
