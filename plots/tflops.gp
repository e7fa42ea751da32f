# <gpu>-prefill-tflops.png: TFLOP/s against N (= M) for every rung and peer on the prefill sweep,
# a row of panels per head dim, non-causal left and causal right; the cuBLAS GEMM ceiling dashed.
# Causal TFLOP/s count only the unmasked half of the work (common/attn.h).
load "plots/common.gp"
load DIR . "/meta.gp"
HEIGHT = 820
eval start(1200, HEIGHT)
set logscale x 2
set logscale y 10
set format y "%g"
set grid xtics ytics mytics lc rgb GRIDC
XLABEL = TOKENS > 0 ? sprintf("N = M (tokens per sequence; B·N = %d)", TOKENS) : "N = M (tokens per sequence)"
YLABEL = "TFLOP/s (log scale)"
load "plots/series.gp"
