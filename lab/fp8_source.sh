#!/usr/bin/env bash
# 07g and cuDNN's FP8 attention under Nsight Compute on one shape (issue 38: "find what cuDNN's FP8
# kernel does that 07g does not"): one profiled launch each, clocks free. The tile shapes (grid,
# block, registers, shared memory), the pipes, the warp states and the instruction mix.
#   OUT=<dir> lab/fp8_source.sh [07-binary]   FP8_SHAPE "B H N d causal" (default 2 16 8192 128 0)
#   -> $OUT/fp8-07g.txt and $OUT/fp8-cudnn.txt (each report's raw page, every section below), and
#      $OUT/fp8-07g-source.csv.gz, $OUT/fp8-cudnn-source.csv.gz (the SASS source page: instructions
#      executed and warp-stall samples per instruction; lab/fp8_source_mix.py sums them by opcode).
#      cuDNN's needs PyTorch and its frontend (../shared/peers/cudnn_fp8.sh); without them only 07g's.
set -u
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-build/out}; mkdir -p "$OUT"
BIN=${1:-build/bin/07_fa3_wgmma_tma}
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
read -r b h n d c <<< "${FP8_SHAPE:-2 16 8192 128 0}"
args="--b $b --h $h --n $n --d $d"; [ "$c" = 1 ] && args="$args --causal"
S="--section LaunchStats --section Occupancy --section SpeedOfLight --section ComputeWorkloadAnalysis"
S="$S --section WarpStateStats --section InstructionStats --section SchedulerStats --section SourceCounters"
prof() {   # name, kernel filter, command...
  local t=$1 k=$2; shift 2
  rm -f "build/fp8-$t.ncu-rep"
  timeout 240 "$NCU" --profile-from-start off --clock-control none $k $S --import-source yes -o "build/fp8-$t" "$@" \
    > "$OUT/fp8-$t.log" 2>&1
  "$NCU" -i "build/fp8-$t.ncu-rep" --page raw --csv 2>>"$OUT/fp8-$t.log" > "$OUT/fp8-$t.txt"
  "$NCU" -i "build/fp8-$t.ncu-rep" --page source --csv --print-source sass 2>>"$OUT/fp8-$t.log" | gzip > "$OUT/fp8-$t-source.csv.gz"
  echo "fp8-$t: $b $h $n $d $c: $(grep -c . "$OUT/fp8-$t.txt") raw lines, $(zcat "$OUT/fp8-$t-source.csv.gz" | wc -l) source rows"
}
prof 07g "--kernel-name regex:fa3" "$BIN" --variant 07g --dtype e4m3 $args --profile --quiet
python3 -c 'import torch, cudnn' 2>/dev/null || exit 0
prof cudnn "" python3 lab/fp8_cudnn_one.py "$b" "$h" "$h" "$n" "$n" "$d" "$c"
