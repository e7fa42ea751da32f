#!/usr/bin/env bash
# Rung 06's two performance targets, judged on one decode CSV (one run, one machine):
#   1. achieved bandwidth >= 80% of the copy ceiling measured in the same run, on every shape whose
#      KV cache is >= 64 MB;
#   2. faster than torch-flash and torch-cudnn on every shape.
#
#   lab/decode_targets.sh [results/h100-decode.csv] [rung, default 06c]
#
# Prints one line per shape (times in µs; cuDNN's share of the copy ceiling beside the rung's) and
# a verdict per target; exit 0 when both are met.
set -u
csv=${1:-results/h100-decode.csv}
rung=${2:-06c}
[ -f "$csv" ] || { echo "no $csv" >&2; exit 2; }
awk -F, -v rung="$rung" '
  /^#/ || $1 == "rung" { next }
  $1 == "ceiling-copy" { ceil = $15; commit = $21; next }
  $10 != "ok" { next }
  $22 ~ /(^|;)page=/ { next }            # a paged line: these targets are the contiguous cache'"'"'s (lab/decode38.sh pairs them)
  {
    key = $2 "x" $6 "x" $3 "x" $4 "x" $5 "x" $7
    if (!(key in seen)) { seen[key] = 1; order[++n] = key; B[key] = $2; M[key] = $6
                          kv[key] = 2.0 * $2 * $4 * $6 * $7 * 2 }
    t[key, $1] = $11 * 1000; bw[key, $1] = $15
  }
  END {
    if (ceil == "") { print "no ceiling-copy row in the CSV"; exit 2 }
    printf "copy ceiling %.0f GB/s (commit %s); target 1 needs %.0f GB/s on KV >= 64 MB\n", ceil, commit, 0.8 * ceil
    printf "%5s %6s %8s %9s %8s %8s %8s %8s %9s %s\n", "B", "M", "KV MB", rung " µs", "%copy", "flash", "cudnn", "%copy", "floor", "verdict"
    bad1 = 0; bad2 = 0; n1 = 0; n2 = 0
    for (i = 1; i <= n; i++) {
      k = order[i]
      if (!((k SUBSEP rung) in t)) continue
      pct = 100 * bw[k, rung] / ceil
      v = ""
      if (kv[k] >= 64 * 1048576) { n1++; if (pct < 80) { bad1++; v = v " below-80%" } }
      f = ((k SUBSEP "torch-flash") in t) ? t[k, "torch-flash"] : -1
      c = ((k SUBSEP "torch-cudnn") in t) ? t[k, "torch-cudnn"] : -1
      fl = ((k SUBSEP "floor-read") in t) ? sprintf("%9.1f", t[k, "floor-read"]) : sprintf("%9s", "-")
      if (f > 0 || c > 0) {
        n2++
        if ((f > 0 && t[k, rung] >= f) || (c > 0 && t[k, rung] >= c)) { bad2++; v = v " slower-than-peer" }
      }
      fs = "-"; if (f > 0) fs = sprintf("%.1f", f)
      cs = "-"; if (c > 0) cs = sprintf("%.1f", c)
      cp = "-"; if (c > 0) cp = sprintf("%.1f%%", 100 * bw[k, "torch-cudnn"] / ceil)
      if (v == "") v = "ok"
      printf "%5d %6d %8.1f %9.1f %7.1f%% %8s %8s %8s %s %s\n", B[k], M[k], kv[k] / 1e6, t[k, rung], pct, fs, cs, cp, fl, v
    }
    verdict1 = "met"; if (bad1) verdict1 = "NOT met"
    printf "target 1 (>= 80%% of the copy ceiling, KV >= 64 MB): %s (%d of %d shapes below)\n", verdict1, bad1, n1
    verdict2 = "met"; if (bad2) verdict2 = "NOT met"; if (n2 == 0) verdict2 = "no peer rows"
    printf "target 2 (faster than both peers): %s (%d of %d shapes not faster)\n", verdict2, bad2, n2
    exit (bad1 || bad2 || n2 == 0) ? 1 : 0
  }' "$csv"
