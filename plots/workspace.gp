# <gpu>-workspace.png: device memory a rung needs beyond its inputs and outputs, against N
# (prefill, d = 128, non-causal). The baseline holds S and P, B·H·N·M of each: O(N²) per sequence.
# FA1-order rungs keep l and m per row in HBM: O(N). FA2 rungs keep everything on chip: none,
# which a log axis cannot show, so those are listed under the legend. Q, K, V, O, LSE dotted, for scale.
load "plots/common.gp"
load DIR . "/meta.gp"
HEIGHT = 700
eval start(1200, HEIGHT)
set logscale x 2
set logscale y 2
set grid xtics ytics lc rgb GRIDC
lab_ref_io = "Q+K+V+O+LSE bytes"
XLABEL = "N = M (tokens per sequence)"
YLABEL = "bytes (log scale)"
load "plots/series.gp"
