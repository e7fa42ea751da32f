#!/usr/bin/env bash
# A rung 07 step and cuDNN's attention under Nsight Compute on one shape (issue 38: what cuDNN's
# kernels do that 07's do not): one profiled launch each, clocks free; the tile shapes (grid, block,
# registers, shared memory), the pipes, the warp states and the SASS source page.
#   OUT=<dir> lab/fwd_source.sh [07-binary]   FWD_SHAPE "B H N d causal" (default 32 32 512 64 1)
#   FWD_DTYPE f16 (default: 07f beside PyTorch's cuDNN backend, lab/sdpa_one.py) or e4m3 (07g beside
#   cuDNN's FP8 attention, lab/fp8_cudnn_one.py: needs its frontend, ../shared/peers/cudnn_fp8.sh)
#   FWD_PEER=fa4 (f16 only): FlashAttention-4's forward instead of cuDNN's (lab/fa4_fwd.py: needs
#   flash-attn-4, ../shared/peers/fa4.sh); its pages are <p>-fa4*
#   -> $OUT/<p>-<step>.txt, $OUT/<p>-cudnn.txt (raw pages) and *-source.csv.gz (source pages;
#      lab/fp8_source_mix.py sums them by opcode); <p> is fwd, or fp8 with e4m3. cuDNN's needs PyTorch.
set -u
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-build/out}; mkdir -p "$OUT"
BIN=${1:-build/bin/07_fa3_wgmma_tma}
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
read -r b h n d c <<< "${FWD_SHAPE:-32 32 512 64 1}"
args="--b $b --h $h --n $n --d $d"; [ "$c" = 1 ] && args="$args --causal"
if [ "${FWD_DTYPE:-f16}" = e4m3 ]; then
  pre=fp8 step=07g pname=cudnn args="$args --dtype e4m3" peer="lab/fp8_cudnn_one.py $b $h $h $n $n $d $c" need="import torch, cudnn"
elif [ "${FWD_PEER:-cudnn}" = fa4 ]; then
  pre=fwd step=07f pname=fa4 peer="lab/fa4_fwd.py $b $h $n $d $c" need="from flash_attn.cute import flash_attn_func"
else
  pre=fwd step=07f pname=cudnn peer="lab/sdpa_one.py cudnn $b $h $n $d $c" need="import torch"
fi
S="--section LaunchStats --section Occupancy --section SpeedOfLight --section ComputeWorkloadAnalysis"
S="$S --section WarpStateStats --section InstructionStats --section SchedulerStats --section SourceCounters"
prof() {   # name, kernel filter, command...
  local t=$pre-$1 k=$2; shift 2
  rm -f "build/$t.ncu-rep"
  timeout 240 "$NCU" --profile-from-start off --clock-control none $k $S --import-source yes -o "build/$t" "$@" \
    > "$OUT/$t.log" 2>&1
  "$NCU" -i "build/$t.ncu-rep" --page raw --csv 2>>"$OUT/$t.log" > "$OUT/$t.txt"
  "$NCU" -i "build/$t.ncu-rep" --page source --csv --print-source sass 2>>"$OUT/$t.log" | gzip > "$OUT/$t-source.csv.gz"
  echo "$t: $b $h $n $d $c: $(grep -c . "$OUT/$t.txt") raw lines, $(zcat "$OUT/$t-source.csv.gz" | wc -l) source rows"
}
prof "$step" "--kernel-name regex:fa3" "$BIN" --variant "$step" $args --profile --quiet
python3 -c "$need" 2>/dev/null || exit 0
prof "$pname" "" python3 $peer
