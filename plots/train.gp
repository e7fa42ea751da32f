# csv: train
# <gpu>-train.png: make train's two runs of one small GPT from the same seed and batches, its
# attention by the ladder (rung 07's forward, rung 08's backward) and by PyTorch's SDPA
# (results/<gpu>-train.csv: attention,step,split,loss,tokens_per_s, from python/train_gpt.py): the
# training loss of each logged interval (left; each run's held-out loss at the end in the key) and
# the tokens per second (right).
load "plots/common.gp"
F = train
TITLE = DEVICE . ": a small byte-level GPT trained on rungs 07 and 08, and on PyTorch's SDPA"
RUNS = "ladder sdpa"
RNAME = "ladder.attention (07 forward, 08 backward)|PyTorch's scaled_dot_product_attention"
rname(i) = _nth(RNAME . "|", i)
_nth(s, n) = n <= 1 ? s[1:strstrt(s, "|") - 1] : _nth(s[strstrt(s, "|") + 1:], n - 1)
rcol(i) = i == 1 ? hex("08") : hex("torch-cudnn")
array EV[2]
EV[1] = NaN; EV[2] = NaN
stats F using (_r = pos(RUNS, strcol("attention")), _r == _r && strcol("split") eq "eval" ? EV[_r] = column("loss") : 0, 0) nooutput
in(i, split) = strcol("attention") eq word(RUNS, i) && strcol("split") eq split
eval start(1200, 560)
set grid xtics ytics lc rgb GRIDC; set xtics nomirror; set ytics nomirror
set key top right font F10 tc rgb INK samplen 2
set size 0.48, top(0.88) - 0.04; set origin 0.01, 0.04
set title "training loss (cross-entropy per byte, nats)" font F11
set xlabel "step"
plot for [i = 1:2] F using (in(i, "train") ? column("step") : NaN):"loss" with linespoints lw 2 pt 7 ps 0.5 \
     lc rgb rcol(i) title sprintf("%s; held-out %.4f", word(RUNS, i), EV[i])
set origin 0.5, 0.04
set title "training throughput (tokens per second)" font F11
set key bottom right
set yrange [0:*]
plot for [i = 1:2] F using (in(i, "train") ? column("step") : NaN):"tokens_per_s" with linespoints lw 2 pt 7 ps 0.5 \
     lc rgb rcol(i) title rname(i)
unset multiplot
