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
plot [XLO:XHI][YLO:YHI] (COPY > 0 ? roof(x) : NaN) with lines lw 2 lc rgb hex("ceiling") title (COPY > 0 ? \
       sprintf("roof: min(cuBLAS GEMM %s TFLOP/s, FLOP/byte × copy %s GB/s)", fmt(GEMM), fmt(COPY)) : "no ceilings: no roof"), \
     profile using (tot(0) ? column("flop_per_byte") : NaN):"tflops":(column("N") == 1 ? 9 : 7):(colour(strcol(1))) \
       with points pt variable ps 1.8 lc rgb variable notitle, \
     profile using (tot(0) ? column("flop_per_byte") : NaN):"tflops":1 with labels left offset 1.2, 0 font F9 tc rgb INK notitle, \
     keyentry with points pt 7 ps 1.6 lc rgb INK title "prefill: " . PSH, \
     keyentry with points pt 9 ps 1.6 lc rgb INK title "decode: " . DSH
unset multiplot
