#!/usr/bin/env bash
# Rung 08's main kernel under Nsight Compute, instruction by instruction (issue 36: which of 08d's
# shared-memory accesses cost the wavefronts it moves beyond FlashAttention-4's). One profiled launch
# of 08d, clocks free; the build has -lineinfo, so each SASS instruction carries its source line.
#   OUT=<dir> lab/bwd_source.sh [08-binary]   SOURCE_SHAPE "B H N d causal" (default 2 16 8192 128 0)
#   -> $OUT/source08.csv.gz (ncu's source page: SASS, instructions executed, shared-memory wavefronts
#      and their ideal, warp-stall samples) and $OUT/source08.txt (the kernel's totals: shared-memory
#      wavefronts by operation, bank conflicts); where FlashAttention-4 imports (../shared/peers/fa4.sh),
#      the same for its backward on the same shape: $OUT/source-fa4.csv.gz and .txt (every kernel of
#      its backward; lab/bwd_source_top.sh reads the one that executes the most instructions)
set -u
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-build/out}; mkdir -p "$OUT"
BIN=${1:-build/bin/08_backward}
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
read -r b h n d c <<< "${SOURCE_SHAPE:-2 16 8192 128 0}"
args="--b $b --h $h --n $n --d $d"; [ "$c" = 1 ] && args="$args --causal"
m=gpu__time_duration.sum,smsp__inst_executed.sum
m=$m,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum
m=$m,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum
m=$m,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,smsp__inst_executed_op_shared_ld.sum
m=$m,smsp__inst_executed_op_shared_st.sum,smsp__inst_executed_op_ldsm.sum,l1tex__data_bank_reads.sum
m=$m,l1tex__data_bank_writes.sum,l1tex__data_pipe_lsu_wavefronts.sum
rm -f build/source08.ncu-rep
timeout 200 "$NCU" --profile-from-start off --clock-control none --kernel-name regex:bwd_sm90 \
  --section SourceCounters --section WarpStateStats --metrics "$m" --import-source yes -o build/source08 \
  "$BIN" --variant 08d $args --profile --quiet > "$OUT/source08.log" 2>&1
"$NCU" -i build/source08.ncu-rep --page source --csv --print-source sass 2>>"$OUT/source08.log" | gzip > "$OUT/source08.csv.gz"
"$NCU" -i build/source08.ncu-rep --page raw --csv --metrics "$m" 2>>"$OUT/source08.log" > "$OUT/source08.txt"
echo "source08: 08d $b $h $n $d $c: $(zcat "$OUT/source08.csv.gz" | wc -l) rows"
python3 -c 'from flash_attn.cute import flash_attn_func' 2>/dev/null || exit 0
rm -f build/source-fa4.ncu-rep
timeout 300 "$NCU" --profile-from-start off --clock-control none --section SourceCounters --section WarpStateStats \
  --metrics "$m" -o build/source-fa4 python3 lab/fa4_bwd.py "$b" "$h" "$h" "$n" "$n" "$d" "$c" > "$OUT/source-fa4.log" 2>&1
"$NCU" -i build/source-fa4.ncu-rep --page source --csv --print-source sass 2>>"$OUT/source-fa4.log" | gzip > "$OUT/source-fa4.csv.gz"
"$NCU" -i build/source-fa4.ncu-rep --page raw --csv --metrics "$m" 2>>"$OUT/source-fa4.log" > "$OUT/source-fa4.txt"
echo "source-fa4: $b $h $n $d $c: $(zcat "$OUT/source-fa4.csv.gz" | wc -l) rows"
