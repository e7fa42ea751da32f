# csv: prefill decode
# <gpu>-progression.png: a bar per rung and variant at its speedup over rung 00 on one shape (log),
# with its rate; the ceiling and the peers dashed, named in the key; a rung without an ok row says
# why. Top: prefill, TFLOP/s; bottom: decode, GB/s (decode is memory-bound). From the prefill and
# decode sweeps: the CSVs of the top README's ladder table, which this plot sits under, so that the
# two show the same numbers (the tour's CSV, one run of make, is printed by make, not drawn).
load "plots/common.gp"
TITLE = DEVICE . ": each rung's speedup over rung 00 (the cuBLAS baseline)"
eval start(1500, 820)
sel(p) = (p == 1 ? column("d") == 128 && column("N") == 4096 && column("causal") == 0 : column("B") == 8 && column("M") == 16384) && strcol("dtype") eq "f16"
SWEEP = "prefill decode"; RATE = "tflops gbps"; UNIT = "TFLOP/s GB/s"
ceilname(p) = p == 1 ? "cuBLAS GEMM ceiling" : "copy ceiling"
RUNGS = ""; do for [w in IDS] { if (!is_peer(w)) { RUNGS = RUNGS . " " . w } }
x(id) = pos(RUNGS, id)
set grid noxtics ytics
set lmargin at screen 0.08; set rmargin at screen 0.77
do for [p = 1:2] {
  F = value(word(SWEEP, p)); R = word(RATE, p); U = word(UNIT, p)
  if (p > 1) { unset label }
  unset arrow; unset logscale; set autoscale        # stats (below) would honour the ranges
  set tmargin at screen (p == 1 ? top(0.87) : 0.42); set bmargin at screen (p == 1 ? 0.55 : 0.10)
  set key at screen 0.775, screen (p == 1 ? top(0.87) : 0.42) left top Left reverse samplen 1.5 spacing 1.2 font F10
  if (F eq "") {
    set title word(SWEEP, p) . ": no CSV yet (make ladder on a GPU)" font F12
    eval emptynote("nothing to draw"); unset xtics; unset ytics; unset ylabel; plot [0:1][0:1] NaN notitle; continue
  }
  set xtics () scale 0 font F10 nomirror; set ytics font F10
  do for [i = 1:words(RUNGS)] { w = word(RUNGS, i); set xtics add ((rungname(w) eq "" ? w : w . "\n" . wrap(rungname(w), 10, "\n")) i) }
  eval meta(F)
  CEIL = p == 1 ? GEMM : COPY
  BASE = 0; SHAPE = ""; HAS = ""; ST = ""; PV = ""; LO = CEIL > 0 ? CEIL : 1e300; HI = CEIL
  stats F using (has(IDS, strcol(1)) && sel(p) ? (HAS = add(HAS, strcol(1)), SHAPE = SHAPE eq "" || strcol(1) eq "00" ? \
    shape(0) : SHAPE, !ok(0) || !(column(R) > 0) ? ST = ST . " " . strcol(1) . "=" . status(0) : (LO = min(LO, column(R)), \
    HI = max(HI, column(R)), BASE = strcol(1) eq "00" ? column(R) : BASE, PV = PV . sprintf(" %s=%g", strcol(1), column(R)))) : 0, 0) nooutput
  NOBASE = BASE <= 0; BASE = NOBASE ? 1 : BASE
  YLO = declo(LO / BASE / 3); YHI = 10 ** (log10(HI / BASE) + 0.3 * (log10(HI / BASE) - log10(YLO)) + 0.15)
  set title word(SWEEP, p) . ": " . SHAPE font F12
  set logscale y; set xrange [0.4:words(RUNGS) + 0.6]; set yrange [YLO:YHI]; set format y (NOBASE ? "%g" : "%gx")
  set ylabel (NOBASE ? U . " (log; no ok row of rung 00: no speedups)" : "speedup over rung 00 (log scale)") font F11
  do for [w in RUNGS] {     # why a rung has no bar
    s = has(HAS, w) ? get(ST, w) : "no row"; s = s eq "unsupported" ? "n/a\nunsupported" : s
    if (s ne "") { set label s at first x(w), graph 0.09 center tc rgb MUTED font F8 front }
  }
  v(w) = w eq "ceiling" ? CEIL : real(get(PV, w))
  REFS = CEIL > 0 ? "ceiling" : ""; do for [w in IDS] { if (is_peer(w) && get(PV, w) ne "") { REFS = REFS . " " . w } }
  do for [w in REFS] { set arrow from graph 0, first v(w) / BASE to graph 1, first v(w) / BASE nohead dt 2 lw 2 lc rgb hex(w) back }
  bar(_) = has(RUNGS, strcol(1)) && sel(p) && ok(0) ? column(R) / BASE : NaN
  plot F using (x(strcol(1))):(bar(0)):(x(strcol(1)) - 0.38):(x(strcol(1)) + 0.38):(YLO):(bar(0)):(colour(strcol(1))) \
         with boxxyerror lc rgb variable notitle, \
       F using (x(strcol(1))):(bar(0)):(NOBASE ? fmt(bar(0)) . " " . U : fmt(bar(0)) . "x\n" . fmt(column(R)) . " " . U) \
         with labels boxed offset 0, 1.5 font (words(RUNGS) > 10 ? F8 : F9) notitle, \
       for [w in REFS] keyentry with lines dt 2 lw 2 lc rgb hex(w) title (w eq "ceiling" ? ceilname(p) . " " . \
         fmt(CEIL) . " " . U : w . " " . (NOBASE ? "" : fmt(v(w) / BASE) . "x · ") . fmt(v(w)) . " " . U)
}
unset multiplot
