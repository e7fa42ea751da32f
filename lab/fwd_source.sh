#!/usr/bin/env bash
# A rung 07 step and PyTorch's cuDNN attention under Nsight Compute on one shape (issue 38: the
# short rows, N = 512, where cuDNN leads): one profiled launch each, clocks free; the tile shapes
# (grid, block, registers, shared memory), the pipes, the warp states and the source page.
#   OUT=<dir> lab/fwd_source.sh [07-binary]   FWD_SHAPE "B H N d causal" (default 32 32 512 64 1),
#   FWD_STEP (default 07f)
#   -> $OUT/fwd-<step>.txt, $OUT/fwd-cudnn.txt (raw pages) and *-source.csv.gz (SASS source pages;
#      lab/fp8_source_mix.py sums them by opcode). cuDNN's needs PyTorch.
set -u
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-build/out}; mkdir -p "$OUT"
BIN=${1:-build/bin/07_fa3_wgmma_tma}
STEP=${FWD_STEP:-07f}
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
read -r b h n d c <<< "${FWD_SHAPE:-32 32 512 64 1}"
args="--b $b --h $h --n $n --d $d"; [ "$c" = 1 ] && args="$args --causal"
S="--section LaunchStats --section Occupancy --section SpeedOfLight --section ComputeWorkloadAnalysis"
S="$S --section WarpStateStats --section InstructionStats --section SchedulerStats --section SourceCounters"
prof() {   # name, kernel filter, command...
  local t=$1 k=$2; shift 2
  rm -f "build/fwd-$t.ncu-rep"
  timeout 240 "$NCU" --profile-from-start off --clock-control none $k $S --import-source yes -o "build/fwd-$t" "$@" \
    > "$OUT/fwd-$t.log" 2>&1
  "$NCU" -i "build/fwd-$t.ncu-rep" --page raw --csv 2>>"$OUT/fwd-$t.log" > "$OUT/fwd-$t.txt"
  "$NCU" -i "build/fwd-$t.ncu-rep" --page source --csv --print-source sass 2>>"$OUT/fwd-$t.log" | gzip > "$OUT/fwd-$t-source.csv.gz"
  echo "fwd-$t: $b $h $n $d $c: $(grep -c . "$OUT/fwd-$t.txt") raw lines, $(zcat "$OUT/fwd-$t-source.csv.gz" | wc -l) source rows"
}
prof "$STEP" "--kernel-name regex:fa3" "$BIN" --variant "$STEP" $args --profile --quiet
python3 -c 'import torch' 2>/dev/null || exit 0
prof cudnn "" python3 lab/sdpa_one.py cudnn "$b" "$h" "$n" "$d" "$c"
