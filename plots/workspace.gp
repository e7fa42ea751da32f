# csv: prefill
# <gpu>-workspace.png: device memory a rung needs beyond inputs and outputs against N (prefill, d = 128,
# non-causal): S and P for the baseline, O(N²) per sequence; l and m for FA1-order rungs, O(N); none for
# FA2 rungs (listed under the legend: 0 has no place on a log axis). Q, K, V, O, LSE dotted, for scale.
load "plots/common.gp"
F = prefill; eval meta(F)
TITLE = DEVICE . ": workspace (device memory beyond inputs and outputs), prefill d = 128, non-causal"
HEIGHT = 700; NP = 2; NR = 1; NC = 2; XCOL = "N"
ptitle(p) = p == 1 ? sprintf("the whole batch (B·N = %d tokens)", TOKENS) : "per sequence (÷ B): S, P ∝ N², l, m ∝ N"
sel(p) = column("d") == 128 && column("causal") == 0 && !is_peer(strcol(1)) && strcol("dtype") eq "f16"      # peers report none
per(p) = p == 1 ? 1 : column("B")
yv(p) = column("workspace_bytes") / per(p)
io(p) = ((2 * column("Hq") * column("N") + 2 * column("Hkv") * column("M")) * column("d") * 2 + \
         4 * column("Hq") * column("N")) * column("B") / per(p)
SHAREY = 0; ENDS = 1; NOVAL = "no workspace"
EXTRA = 'F using (column("N")):(sel(p) ? io(p) : NaN) smooth unique with lines dt 3 lw 1.5 lc rgb hex("ref-io") notitle'
EXTRAKEY = 'keyentry with lines dt 3 lw 1.5 lc rgb hex("ref-io") title "Q+K+V+O+LSE bytes"'
NOTEX = "(0 bytes has no place on a\nlog axis)\npeers: not drawn (they do\nnot report a workspace)"
XLABEL = "N = M (tokens per sequence)"; YLABEL = "bytes (log scale)"
set logscale x 2; set logscale y 4; set format y "%.0b %BB"; set grid xtics ytics lc rgb GRIDC
load "plots/series.gp"
