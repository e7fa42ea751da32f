# csv: prefill
# <gpu>-prefill-tflops.png: TFLOP/s against N (= M) for every rung and peer of the prefill sweep, a
# row of panels per head dim (64, 128), non-causal left and causal right, float16 (the sweep's bfloat16
# rows, and the float8 e4m3 rows of rung 07's FP8 step 07g, are left out: the note says so, 07's NOTES.md
# has them); the cuBLAS GEMM ceiling
# dashed. Causal TFLOP/s count only the unmasked half of the work (common/attn.h).
load "plots/common.gp"
F = prefill; eval meta(F)
TITLE = DEVICE . ": prefill throughput against sequence length"
HEIGHT = 820; NP = 4; NR = 2; NC = 2; XCOL = "N"
ptitle(p) = sprintf("d = %d, %s", p <= 2 ? 64 : 128, p % 2 ? "non-causal" : "causal")
sel(p) = column("d") == (p <= 2 ? 64 : 128) && column("causal") == 1 - p % 2 && strcol("dtype") eq "f16"
yv(p) = ok(0) ? column("tflops") : NaN
REFY = GEMM; REFTEXT = sprintf("cuBLAS GEMM ceiling %s TFLOP/s", fmt(GEMM))
XLABEL = sprintf("N = M (tokens per sequence; B·N = %d)", TOKENS); YLABEL = "TFLOP/s (log scale)"
set logscale x 2; set logscale y 10; set format y "%g"; set grid xtics ytics mytics lc rgb GRIDC
NOTEX = "bfloat16 and float8 e4m3 rows\n(07g, rung 07's FP8 step) left out:\n07's NOTES.md has them"
load "plots/series.gp"
