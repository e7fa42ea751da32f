# csv: backward
# <gpu>-backward.png: rung 08's backward pass, TFLOP/s against N (= M) for rung 08's steps (08a-08d) and PyTorch's
# backward (torch-flash, torch-cudnn) over the backward sweep (sweeps/backward.txt, 16k tokens), a
# row of panels per head dim (64 and 128; 64, 96, 128 and 256 where the CSV has d = 96 or 256 rows),
# non-causal left and causal right, float16 (the sweep's two
# bfloat16 lines are left out: the note says so, 08's NOTES.md has them). TFLOP/s count 2.5x the
# forward's FLOPs, causal only the unmasked half (common/attn.h: attn_bwd_flops).
load "plots/common.gp"
F = backward; eval meta(F)
TITLE = DEVICE . ": backward pass (dQ, dK, dV) throughput against sequence length"
stats F using (column("d") == 96 || column("d") == 256 ? 1 : 0) name "MORE" nooutput
DS = MORE_sum > 0 ? "64 96 128 256" : "64 128"
NR = words(DS); NC = 2; NP = 2 * NR; HEIGHT = 410 * NR; XCOL = "N"
pd(p) = int(word(DS, (p + 1) / 2))
ptitle(p) = sprintf("d = %d, %s", pd(p), p % 2 ? "non-causal" : "causal")
sel(p) = column("d") == pd(p) && column("causal") == 1 - p % 2 && strcol("dtype") eq "f16"
yv(p) = ok(0) ? column("tflops") : NaN
XLABEL = sprintf("N = M (tokens per sequence; B·N = %d)", TOKENS); YLABEL = "TFLOP/s (2.5x the forward's FLOPs, log scale)"
set logscale x 2; set logscale y 10; set format y "%g"; set grid xtics ytics mytics lc rgb GRIDC
NOTEX = "bfloat16 rows (N = 4096)\nleft out: 08's NOTES.md\nhas them"
load "plots/series.gp"
