# csv: varlen
# <gpu>-varlen.png: rung 06 once per split planner (planner= of the extra field) on the varlen decode
# batches of sweeps/varlen.txt; a batch is B, M and dist= (without one: seqlens_sum), in CSV order.
# Top: each planner's median time (solid) and its plan's cost-model makespan (hatched) over the
# reference planner's (balanced: the line at 1); up is slower. Bottom: GB/s, the copy ceiling dashed.
load "plots/common.gp"
F = varlen; eval meta(F)
TITLE = DEVICE . ": rung 06's split planners on varlen decode batches (" . DSHAPE . ")"
x(k) = kv(strcol("extra"), k)
pl(_) = x("planner")
bk(_) = sprintf("%d/%d/%s", column("B"), column("M"), x("dist") ne "" ? x("dist") : "sum" . x("seqlens_sum"))
kfmt(v) = v >= 1e6 ? sprintf("%.3gM", v / 1e6) : v >= 1e3 ? sprintf("%.3gk", v / 1e3) : sprintf("%d", v)
usfmt(ms) = ms >= 1 ? fmt(ms) . " ms" : fmt(ms * 1000) . " µs"
array GT[64]; BS = ""; PL = ""; NOPL = 0; NBAD = 0; SLOTS = ""; HI = COPY     # GT: each batch's tic label
stats F using (is_peer(strcol(1)) ? 0 : pl(0) eq "" ? NOPL = NOPL + 1 : (PL = add(PL, pl(0)), SLOTS = x("slots"), \
  NBAD = NBAD + !ok(0), HI = ok(0) ? max(HI, column("gbps")) : HI, has(BS, bk(0)) ? 0 : (BS = BS . " " . bk(0), \
  GT[words(BS)] = sprintf("B=%d %s\nM=%s\nsum=%s", column("B"), x("dist") ne "" ? x("dist") : real(x("seqlens_sum")) == \
  column("B") * column("M") ? "equal" : "mixed", int(column("M")) % 1024 ? strcol("M") : \
  sprintf("%dk", column("M") / 1024), kfmt(real(x("seqlens_sum")))))), 0) nooutput
REF = has(PL, "balanced") ? "balanced" : word(PL, words(PL))
OTHERS = ""; do for [w in PL] { OTHERS = OTHERS . (w eq REF ? "" : " " . w) }
RMS = ""; RMK = ""                    # the reference planner's time and makespan per batch
stats F using (pl(0) eq REF && ok(0) ? (RMS = RMS . " " . bk(0) . "=" . strcol("ms_median"), \
  RMK = RMK . " " . bk(0) . "=" . x("makespan")) : 0, 0) nooutput
g(_) = pos(BS, bk(0))
r(k) = has(OTHERS, pl(0)) && ok(0) ? (k ? real(x("makespan")) / real(get(RMK, bk(0))) : column("ms_median") / real(get(RMS, bk(0)))) : NaN
W1 = 0.84 / max(1, 2 * words(OTHERS)); W2 = 0.84 / max(1, words(PL))
x1(k) = g(0) - 0.42 + ((pos(OTHERS, pl(0)) - 1) * 2 + k + 0.5) * W1
x2(_) = g(0) - 0.42 + (pos(PL, pl(0)) - 0.5) * W2
bad(X, Y) = NBAD == 0 ? "NaN notitle" : sprintf('F using (%s):(ok(0) || pl(0) eq "" ? NaN : %g):(pl(0) . " " . ' . \
  '(status(0) eq "unsupported" ? "n/a" : status(0))) with labels rotate by 90 left font F8 tc rgb MUTED notitle', X, Y)
BAD1 = bad("x1(0)", 1); BAD2 = bad("x2(0)", HI * 0.02)
eval start(1400, 1000); KEYX = 0.865
set lmargin at screen 0.07; set rmargin at screen 0.80; set xrange [0.5:words(BS) + 0.5]
set xtics () scale 0 font F9 nomirror; set ytics font F9 nomirror
# --- top: time and simulated makespan over the reference planner's ---
set tmargin at screen top(0.88); set bmargin at screen 0.58
set title "time (solid) and cost-model makespan (hatched) over " . REF . "'s, per batch" . \
  (SLOTS ne "" ? " (planned for " . SLOTS . " CTA slots)" : "") font F11
do for [i = 1:words(BS)] { set xtics add (GT[i] . (get(RMS, word(BS, i)) ne "" ? "\n(" . usfmt(real(get(RMS, word(BS, i)))) . ")" : "") i) }
set mytics 2; set grid noxtics ytics mytics lc rgb GRIDC; set format y "%.2fx"
set ylabel sprintf("over %s's (1 = as fast as %s; up: slower)", REF, REF) font F10
set autoscale yfix; set offsets 0, 0, graph 0.28, graph 0.25
set key at screen KEYX, screen top(0.88) left top Left reverse samplen 2.5 spacing 1.2 font F10
set arrow from graph 0, first 1 to graph 1, first 1 nohead lw 2.5 lc rgb hex(REF) front
plot for [w in OTHERS] F using (x1(0)):(pl(0) eq w ? r(0) : NaN):(x1(0) - W1 * 0.45):(x1(0) + W1 * 0.45):(min(r(0), 1)):(max(r(0), 1)) \
       with boxxyerror fs solid 1.0 border lc rgb INK lc rgb hex(w) title w . ": time", \
     for [w in OTHERS] F using (x1(1)):(pl(0) eq w ? r(1) : NaN):(x1(1) - W1 * 0.45):(x1(1) + W1 * 0.45):(min(r(1), 1)):(max(r(1), 1)) \
       with boxxyerror fs pattern 5 border lc rgb hex(w) lw 1.5 lc rgb hex(w) title w . ": cost model", \
     keyentry with lines lw 2.5 lc rgb hex(REF) title REF . " = 1 (both)", \
     for [k = 0:1] F using (x1(k)):(r(k) + (r(k) >= 1 ? 0.01 : -0.01)):(sprintf("%.2f", r(k))):(r(k) >= 1 ? 90 : 270) \
       with labels rotate variable left font F8 tc rgb INK notitle, @BAD1
# --- bottom: achieved bandwidth ---
unset arrow; unset mytics; unset label
set tmargin at screen 0.43; set bmargin at screen 0.10
set title "achieved bandwidth: Q, K, V (the valid KV rows), O and LSE moved once, over the median time" font F11
set xtics (); do for [i = 1:words(BS)] { set xtics add (GT[i] i) }
set offsets 0, 0, 0, 0; set yrange [0:HI * 1.18]; set format y "%g"; set grid noxtics ytics
set ylabel "GB/s (higher is better)" font F10
if (COPY > 0) {
  set y2range [0:HI * 1.18 / COPY * 100]; set y2tics font F9 nomirror format "%g%%"; set y2label "% of the copy ceiling" font F10
  eval inlineref(COPY, sprintf("copy ceiling %s GB/s", fmt(COPY)))
}
set key at screen KEYX, screen 0.43 left top Left reverse samplen 2.5 spacing 1.2 font F10
set label "a batch: B requests with KV\nlengths up to M, drawn from\nthe distribution dist= of its\nrows; sum: the KV tokens of\n" . \
  "all requests (in brackets:\n" . REF . "'s median time\nper call)" . (NOPL ? sprintf("\n\n%d row(s) without a planner\n" . \
  "(failed before planning):\nnot placed", NOPL) : "") at screen KEYX, screen top(0.88) - 170.0 / HEIGHT left front tc rgb MUTED font F9
plot for [w in PL] F using (x2(0)):(pl(0) eq w && ok(0) ? column("gbps") : NaN):(x2(0) - W2 * 0.45):(x2(0) + W2 * 0.45):(0):(column("gbps")) \
       with boxxyerror fs solid 1.0 border lc rgb INK lc rgb hex(w) title w, \
     keyentry with lines dt 2 lw 1.5 lc rgb hex("ceiling") title (COPY > 0 ? "copy ceiling" : ""), \
     F using (x2(0)):(has(PL, pl(0)) && ok(0) ? column("gbps") : NaN):(fmt(column("gbps"))) \
       with labels rotate by 90 left offset 0, 0.35 font F8 tc rgb INK notitle, @BAD2
unset multiplot
