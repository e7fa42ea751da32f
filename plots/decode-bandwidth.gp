# csv: decode
# <gpu>-decode-bandwidth.png: decode bytes moved per second as a share of the device-to-device copy
# ceiling, against the KV length M; a panel per batch size (1, 8, 32, 128). Without a ceiling-copy
# row it falls back to plain GB/s.
load "plots/common.gp"
F = decode; eval meta(F)
TITLE = DEVICE . ": decode bandwidth against KV length (" . DSHAPE . ")"
HEIGHT = 820; NP = 4; NR = 2; NC = 2; XCOL = "M"; BS = "1 8 32 128"
ptitle(p) = "B = " . word(BS, p)
# the first rung row's heads and head dim, contiguous: the sweep's other lines (multi-head, paged) are not this plot's
FAM = ""; stats F using (FAM eq "" && !is_peer(strcol(1)) ? FAM = sprintf("%d %d %d", column("Hq"), column("Hkv"), column("d")) : 0, 0) nooutput
sel(p) = column("B") == real(word(BS, p)) && sprintf("%d %d %d", column("Hq"), column("Hkv"), column("d")) eq FAM && strstrt(strcol("extra"), "page=") == 0
yv(p) = ok(0) ? column("gbps") * (COPY > 0 ? 100 / COPY : 1) : NaN
REFY = COPY > 0 ? 100 : 0; REFTEXT = sprintf("copy ceiling = 100%% (%s GB/s)", fmt(COPY))
XLABEL = "M (KV tokens per request)"; YLABEL = COPY > 0 ? "% of the copy ceiling (log scale)" : "GB/s (log scale; no copy ceiling in the CSV)"
set logscale x 2; set logscale y 10; set format y (COPY > 0 ? "%g%%" : "%g"); set grid xtics ytics mytics lc rgb GRIDC
load "plots/series.gp"
