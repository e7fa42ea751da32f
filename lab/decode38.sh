#!/usr/bin/env bash
# Issue 38's decode targets, judged on one decode CSV (one run, one machine):
#   1. the best rung-06 step (the fastest of 06a, 06b, 06c) >= 0.98x torch-cudnn on every shape
#      (its time <= cuDNN's / 0.98; a paged line against cuDNN on its contiguous twin);
#   2. every paged line within 3% of its contiguous twin (best step against best step).
#
#   lab/decode38.sh [results/h200-decode.csv]
#
# One line per sweep line (times in µs, the median of each row); exit 0 when both are met.
set -u
csv=${1:-results/h200-decode.csv}
[ -f "$csv" ] || { echo "no $csv" >&2; exit 2; }
awk -F, '
  /^#/ || $1 == "rung" || $10 != "ok" { next }
  {
    P = 0; if (match($22, /page=[0-9]+/)) P = substr($22, RSTART + 5, RLENGTH - 5) + 0
    shape = $2 "x" $3 "x" $4 "x" $5 "x" $6 "x" $7 "x" $8 "x" $9
    key = shape SUBSEP P
    if (!(key in seen)) { seen[key] = 1; order[++n] = key; sh[key] = shape; pg[key] = P }
    us = $11 * 1000
    if ($1 ~ /^06[a-z]$/ && (!((key) in best) || us < best[key])) { best[key] = us; who[key] = $1 }
    if ($1 == "torch-cudnn") cudnn[shape] = us
    if ($1 == "floor-read") floor[shape] = us
  }
  END {
    printf "%-30s %5s %8s %5s %8s %8s %7s %7s %s\n", "B x Hq x Hkv x N x M x d x causal x dtype", "page", "best 06", "step", "cudnn", "floor", "cud/06", "pg/ctg", "verdict"
    bad1 = bad2 = 0
    for (i = 1; i <= n; i++) {
      k = order[i]
      if (!(k in best)) continue
      s = sh[k]; v = ""
      c = (s in cudnn) ? cudnn[s] : -1
      r = c > 0 ? c / best[k] : -1
      if (c > 0 && r < 0.98) { bad1++; v = v " below-0.98x-cudnn" }
      ctg = s SUBSEP 0; q = -1
      if (pg[k] && (ctg in best)) { q = best[k] / best[ctg]; if (q > 1.03) { bad2++; v = v " paged>3%" } }
      ps = "-"; if (pg[k]) ps = pg[k]
      cs = "-"; if (c > 0) cs = sprintf("%.1f", c)
      fs = "-"; if (s in floor) fs = sprintf("%.1f", floor[s])
      rs = "-"; if (r > 0) rs = sprintf("%.3f", r)
      qs = "-"; if (q > 0) qs = sprintf("%.3f", q)
      if (v == "") v = "ok"
      printf "%-30s %5s %8.1f %5s %8s %8s %7s %7s %s\n", s, ps, best[k], who[k], cs, fs, rs, qs, v
    }
    printf "target 1 (best 06 step >= 0.98x torch-cudnn): %s (%d below)\n", bad1 ? "NOT met" : "met", bad1
    printf "target 2 (paged within 3%% of contiguous): %s (%d above)\n", bad2 ? "NOT met" : "met", bad2
    exit (bad1 || bad2) ? 1 : 0
  }' "$csv"
