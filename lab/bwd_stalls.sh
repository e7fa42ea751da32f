#!/usr/bin/env bash
# Warp-state stalls of 08d in two or more builds, one profiled launch each (Nsight Compute's
# WarpStateStats, clocks free), at d = 128 and 64, N = 8192 not causal: where a build with fewer
# instructions ran slower (l36/cwconst), whether the warps waited on the instruction fetch
# (no_instruction) or elsewhere.
#   OUT=<dir> lab/bwd_stalls.sh name:<08-binary> name:<08-binary> ...
#   -> $OUT/<name>-d<d>.ncu-rep and $OUT/stalls.csv (each report's raw page, after a "### name d" line)
set -u
OUT=${OUT:-build/out}
case $OUT in /*) ;; *) OUT=$PWD/$OUT ;; esac
cd "$(dirname "$0")/.." || exit 1
mkdir -p "$OUT"
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
for d in 128 64; do
  h=16; [ "$d" = 64 ] && h=32
  for nb in "$@"; do n=${nb%%:*} b=${nb#*:}
    timeout 100 "$NCU" --profile-from-start off --clock-control none --kernel-name regex:bwd_sm90 --section WarpStateStats \
      --metrics gpu__time_duration.sum,smsp__inst_executed.sum -o "$OUT/$n-d$d" \
      "$b" --variant 08d --b 2 --h $h --n 8192 --d $d --profile --quiet >> "$OUT/stalls.log" 2>&1
    echo "### $n d=$d" >> "$OUT/stalls.csv"
    "$NCU" -i "$OUT/$n-d$d.ncu-rep" --page raw --csv >> "$OUT/stalls.csv" 2>> "$OUT/stalls.log"
  done
done
