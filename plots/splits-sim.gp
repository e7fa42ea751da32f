# csv: splits-sim
# splits-sim.png: rung 06's split planners on the cost model (06_split_kv/planner.h, run by
# tools/splits_sim.c: make splits, no GPU); a panel per SM count and distribution: fa's and greedy's
# makespan over balanced's (the lower bound) against B, the mean over the seeds with bars from the
# smallest to the largest. The article's worked example (B = 32 on 78 SMs) is ringed.
load "plots/common.gp"
F = splits_sim
TITLE = "rung 06's split planners on the cost model (simulated, not measured): makespan over balanced's"
SUBTITLE = "from " . F . ": tools/splits_sim.c plans random batches with 06_split_kv/planner.c; no GPU ran"
SMS = "132 78"; SHIFT = 1.07
desc(d) = d eq "equal" ? "one length per batch" : d eq "uniform" ? "uniform in 1..32k tokens" : d eq "longtail" ? \
  "log-normal, median 2k" : d eq "bimodal" ? "7 in 8 short, 1 in 8 ~32k" : d eq "article" ? "all 4096 tokens (176-token blocks)" : ""
gpu(m) = m == 132 ? " (H100 SXM, H200)" : m == 114 ? " (H100 PCIe)" : m == 78 ? " (H20)" : ""
fa(_) = column("fa") / column("balanced"); gr(_) = column("greedy") / column("balanced")
DISTS = ""; BS = ""; LO = 1e300; HI = 0; EXN = 0
stats F using (column("balanced") > 0 ? (DISTS = add(DISTS, strcol("dist")), BS = add(BS, strcol("B")), \
  LO = min(LO, min(fa(0), gr(0))), HI = max(HI, max(fa(0), gr(0))), !EXN && strcol("dist") eq "article" && \
  column("sms") == 78 && column("B") == 32 ? (EXN = 1, EXFA = column("fa"), EXGR = column("greedy"), \
  EXBAL = column("balanced"), EXTOT = column("total_blocks")) : 0) : 0, 0) nooutput
NB = words(BS); NR = words(SMS); NC = min(words(DISTS), 6); NSEED = 0
array SUM[2 * NB]; array CNT[2 * NB]; array MN[2 * NB]; array MX[2 * NB]     # fa at i, greedy at NB + i
acc(i, r) = (SUM[i] = SUM[i] + r, CNT[i] = CNT[i] + 1, MN[i] = min(MN[i], r), MX[i] = max(MX[i], r), NSEED = max(NSEED, CNT[i]))
eval start(1500, 780)
LEFT = 0.075; RIGHT = 0.835; TOP = top(0.85); BOTTOM = 0.085; HGAP = 0.012; VGAP = 0.115
PW = (RIGHT - LEFT - (NC - 1) * HGAP) / NC; PH = (TOP - BOTTOM - (NR - 1) * VGAP) / NR
set xtics () font F8 nomirror       # B: a label at the powers of two, a minor tic between
do for [b in BS] { v = int(b); if ((v & (v - 1)) == 0) { set xtics add (b v) } else { set xtics add ("" v 1) } }
set ytics font F9 nomirror; set mytics 2; set grid xtics ytics mytics lc rgb GRIDC
do for [p = 1:NR * NC] {
  r = (p - 1) / NC; c = (p - 1) % NC; d = word(DISTS, c + 1); m = int(word(SMS, r + 1))
  if (p > 1) { unset label }
  unset arrow; unset object; unset logscale; set autoscale      # stats (below) would honour the ranges
  do for [i = 1:2 * NB] { SUM[i] = 0; CNT[i] = 0; MN[i] = 1e300; MX[i] = 0 }
  stats F using (strcol("dist") eq d && column("sms") == m && column("balanced") > 0 ? \
    (acc(pos(BS, strcol("B")), fa(0)), acc(NB + pos(BS, strcol("B")), gr(0))) : 0, 0) nooutput
  set print $DAT
  do for [i = 1:NB] { if (CNT[i] > 0) { print sprintf("%s,%g,%g,%g,%g,%g,%g", word(BS, i), SUM[i] / CNT[i], MN[i], MX[i], \
    SUM[NB + i] / CNT[NB + i], MN[NB + i], MX[NB + i]) } }
  unset print
  set lmargin at screen LEFT + c * (PW + HGAP); set rmargin at screen LEFT + c * (PW + HGAP) + PW
  set tmargin at screen TOP - r * (PH + VGAP); set bmargin at screen TOP - r * (PH + VGAP) - PH
  set logscale x 2; set xrange [real(word(BS, 1)) / 1.5:real(word(BS, NB)) * 1.5]
  set yrange [LO >= 1 ? 0.95 : floor((LO - 0.05) * 20) / 20.0:max(1.3, ceil(HI * 1.08 * 10) / 10.0)]
  set title sprintf("%s, %d SMs", d, m) . (r == 0 && desc(d) ne "" ? "\n" . desc(d) : "") font F10
  if (c == 0) { set format y "%.1fx"; set ylabel sprintf("%d SMs", m) . gpu(m) . "\nmakespan over balanced's" font F10 } else { set format y ""; unset ylabel }
  if (r == NR - 1) { set xlabel "B (requests in the batch)" font F9 } else { unset xlabel }
  if (d eq "article" && m == 78 && EXN) {
    do for [k = 0:1] { X = 32 * SHIFT ** (2 * k - 1); Y = (k ? EXGR : EXFA) / EXBAL
      set object circle at first X, first Y size char 0.9 front fs empty border lc rgb INK lw 1.5
      set label sprintf("%s %d", k ? "greedy" : "fa", k ? EXGR : EXFA) at first X, first Y right offset -1.6, 0 boxed font F9 tc rgb INK front }
    set label sprintf("the article's worked example:\nB = 32, %d blocks, 78 SMs;\nmakespans fa %d, greedy %d,\nbalanced %d blocks", \
      EXTOT, EXFA, EXGR, EXBAL) at graph 0.04, graph 0.96 left front font F9 tc rgb INK
  }
  set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 2 lc rgb hex("balanced") back
  plot $DAT using ($1 / SHIFT):2:3:4 with yerrorlines lc rgb hex("fa") lw 2 pt 7 ps 0.8 notitle, \
       $DAT using ($1 * SHIFT):5:6:7 with yerrorlines lc rgb hex("greedy") lw 2 pt 5 ps 0.8 notitle
}
# the legend column
unset label; unset arrow; unset object; unset title; unset xlabel; unset ylabel; unset logscale; unset border; unset tics; unset grid
set lmargin at screen 0.845; set rmargin at screen 0.99; set tmargin at screen TOP; set bmargin at screen 0.02
set key at screen 0.845, screen TOP left top Left reverse samplen 3 spacing 1.25 font F10
set label "makespan: the longest an SM\nworks, in KV blocks, with\nCTAs list-scheduled in launch\norder, one per SM at a time." . \
  "\nbalanced reaches\nceil(total blocks / SMs),\nthe lower bound: 1.0 is best." \
  . (NSEED > 1 ? sprintf("\n\nEach point: the mean of %d seeds;\nbars: smallest..largest.\n(article: one batch per B)", NSEED) : "") \
  at screen 0.845, screen TOP - 150.0 / HEIGHT left front font F9 tc rgb MUTED
plot [0:1][0:1] NaN notitle, keyentry with linespoints lc rgb hex("fa") lw 2 pt 7 ps 0.8 title "fa (FA3's heuristic)", \
     keyentry with linespoints lc rgb hex("greedy") lw 2 pt 5 ps 0.8 title "greedy (article's re-split)", \
     keyentry with lines dt 2 lw 2 lc rgb hex("balanced") title "balanced = 1 (lower bound)", \
     keyentry with points pt 6 ps 2 lw 1.5 lc rgb INK title (EXN ? "article's worked example" : "")
unset multiplot
