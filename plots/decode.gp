# <gpu>-decode-bandwidth.png: decode (one query token, GQA 8:1, d = 128) bytes moved per second as a
# share of the device-to-device copy ceiling, against the KV length M; a panel per batch size.
# Without a ceiling-copy row it falls back to plain GB/s.
load "plots/common.gp"
load DIR . "/meta.gp"
HEIGHT = 820
eval start(1200, HEIGHT)
load DIR . "/p-legend.gp"
set logscale x 2
set logscale y 10
set grid xtics ytics mytics lc rgb GRIDC
if (YUNIT eq "GB/s") { set format y "%g"; YLABEL = "GB/s (log scale; no copy ceiling in the CSV)" } \
else                 { set format y "%g%%"; YLABEL = "% of the copy ceiling (log scale)" }
XLABEL = "M (KV tokens per request)"
load "plots/series.gp"
