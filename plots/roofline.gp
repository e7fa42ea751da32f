# csv: +profile tour prefill decode
# <gpu>-roofline.png, where results/<gpu>-profile.csv exists (make profile): each rung variant at the
# FLOPs per DRAM byte and the TFLOP/s of its "total" row (every kernel of one launch, tools/profile.sh),
# prefill and decode marked apart, under the roof min(GEMM ceiling, FLOP/byte x copy ceiling) (as
# tools/roofline.awk's attainable()), the ceilings from the first of the tour, prefill, decode CSVs with both.
load "plots/common.gp"
COPY = 0; GEMM = 0; CS = ""
do for [s in "tour prefill decode"] { if (value(s) ne "" && (COPY <= 0 || GEMM <= 0)) { eval meta(value(s)); CS = s } }
SUBTITLE = "numbers from the committed " . sub_profile . (CS eq "" ? "" : "\nand the ceilings of " . value("sub_" . CS))
TITLE = DEVICE . ": the roofline, each rung variant through Nsight Compute"
eval start(1200, 800)
tot(_) = strcol("kernel") eq "total" && column("flop_per_byte") > 0 && column("tflops") > 0
PSH = ""; DSH = ""; RIDGE = COPY > 0 ? GEMM * 1e3 / COPY : NaN; NP = 0
stats profile using (tot(0) ? column("flop_per_byte") : NaN):(tot(0) ? (NP = NP + 1, column("N") == 1 ? DSH = shape(0) : \
  PSH = shape(0), column("tflops")) : NaN) nooutput
if (NP == 0) { eval emptynote("no total rows in " . profile); plot [1:10][1:10] NaN notitle; exit }
XLO = declo(min(STATS_min_x, RIDGE) / 3); XHI = 10 * declo(max(STATS_max_x, RIDGE) * 3); YLO = declo(STATS_min_y / 3)
YHI = 10 * declo(max(STATS_max_y, GEMM) * 2)
set lmargin at screen 0.08; set rmargin at screen 0.96; set tmargin at screen top(0.88); set bmargin at screen 0.09
set key inside right bottom Left reverse samplen 2 spacing 1.3 font F10 box lc rgb GRIDC opaque
set logscale xy; set format x "%g"; set format y "%g"; set grid xtics ytics mxtics mytics lc rgb GRIDC
set xlabel "FLOPs per byte read or written in DRAM (ncu), log scale" font F11
set ylabel "TFLOP/s: the course's FLOP count over the kernels' time (ncu), log scale" font F11
if (COPY > 0) { set label sprintf("ridge: %s FLOP/byte", fmt(RIDGE)) at first RIDGE, first GEMM center offset 0, 1 font F9 tc rgb MUTED }
roof(x) = min(GEMM > 0 ? GEMM : 1e30, x * COPY / 1e3)

# ---- the labels: each variant's id beside its point. Variants of one rung sit almost on one spot
# (06a/06b/06c, 07b/07c/07d), so a label that would overlap another label or a point goes to the
# point's left, or a label height down or up, the smallest move first, and a thin line joins it to its
# point. Sizes in decades (log10 units) from the plot's pixels: a character CW wide, a line H high.
array PX[NP]; array PY[NP]; array PID[NP]; array LY[NP]; array SIDE[NP]; array DONE[NP]
do for [j = 1:NP] { DONE[j] = 0; LY[j] = 0; SIDE[j] = 1 }
K = 0
stats profile using (tot(0) ? (K = K + 1, PX[K] = log10(column("flop_per_byte")), PY[K] = log10(column("tflops")), \
  PID[K] = strcol(1), 0) : 0) nooutput
WPX = (0.96 - 0.08) * 1200; HPX = (top(0.88) - 0.09) * 800
CW = 7.5 * log10(XHI / XLO) / WPX; H = 13.0 * log10(YHI / YLO) / HPX; R = 6.0 * log10(XHI / XLO) / WPX
O = 1.2 * CW                                              # the gap between a point and its label
w(k) = strlen(PID[k]) * CW
x0(k, side) = side > 0 ? PX[k] + O : PX[k] - O - w(k)     # the text's left end
x0p(j) = SIDE[j] > 0 ? PX[j] + O : PX[j] - O - w(j)      # a placed label's
hits_label(k, side, y, j) = DONE[j] && x0(k, side) < x0p(j) + w(j) && x0p(j) < x0(k, side) + w(k) && abs(y - LY[j]) < H
hits_point(k, side, y, j) = j != k && x0(k, side) - R < PX[j] && PX[j] < x0(k, side) + w(k) + R && abs(y - PY[j]) < H / 2 + R
clash(k, side, y) = x0(k, side) < log10(XLO) || (sum [j = 1:NP] ((hits_label(k, side, y, j) || hits_point(k, side, y, j)) ? 1 : 0)) > 0
do for [n = 1:NP] {
  K = 0
  do for [j = 1:NP] { if (!DONE[j] && (K == 0 || PY[j] > PY[K])) { K = j } }      # the highest left
  FOUND = 0
  do for [step = 0:2 * NP] {
    DY = step == 0 ? 0 : (step % 2 == 1 ? -1 : 1) * int((step + 1) / 2) * H      # 0, -H, +H, -2H, ...
    do for [side in "1 -1"] {
      if (!FOUND && !clash(K, int(side), PY[K] + DY)) { FOUND = 1; SIDE[K] = int(side); LY[K] = PY[K] + DY }
    }
  }
  if (!FOUND) { SIDE[K] = 1; LY[K] = PY[K] }
  DONE[K] = 1
  eval sprintf('set label %d "%s" at first %.6g, first %.6g %s font F9 tc rgb INK front', 100 + K, PID[K], \
    10 ** (PX[K] + SIDE[K] * O), 10 ** LY[K], SIDE[K] > 0 ? "left" : "right")
  if (LY[K] != PY[K]) {
    eval sprintf('set arrow %d from first %.6g, first %.6g to first %.6g, first %.6g nohead lw 0.8 lc rgb MUTED back', \
      100 + K, 10 ** PX[K], 10 ** PY[K], 10 ** (PX[K] + SIDE[K] * 0.8 * O), 10 ** LY[K])
  }
}
plot [XLO:XHI][YLO:YHI] (COPY > 0 ? roof(x) : NaN) with lines lw 2 lc rgb hex("ceiling") title (COPY > 0 ? \
       sprintf("roof: min(cuBLAS GEMM %s TFLOP/s, FLOP/byte × copy %s GB/s)", fmt(GEMM), fmt(COPY)) : "no ceilings: no roof"), \
     profile using (tot(0) ? column("flop_per_byte") : NaN):"tflops":(column("N") == 1 ? 9 : 7):(colour(strcol(1))) \
       with points pt variable ps 1.8 lc rgb variable notitle, \
     keyentry with points pt 7 ps 1.6 lc rgb INK title "prefill: " . PSH, \
     keyentry with points pt 9 ps 1.6 lc rgb INK title "decode: " . DSH
unset multiplot
