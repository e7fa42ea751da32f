#!/usr/bin/env bash
# Rung 07 under Nsight Compute on a few shapes: which pipe or issue budget is closest to full, and
# the warps' largest stalls (issue 22's question of what limits d = 64 and the short sequences).
# One profiled launch per (variant, shape), clocks left free as make profile runs it.
#   PIPES_VARIANTS (default 07e), PIPES_SHAPES ("B Hq Hkv N M d causal" lines; default below)
#   -> $OUT/pipes07.csv (ncu's raw CSV per run, one row each), $OUT/pipes07.txt (the table)
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-build/out}; mkdir -p "$OUT"
B=build/bin/07_fa3_wgmma_tma
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
m=sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active
m=$m,smsp__issue_active.avg.pct_of_peak_sustained_active
m=$m,sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active
m=$m,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active
m=$m,sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active
for r in barrier wait long_scoreboard short_scoreboard math_pipe_throttle mio_throttle dispatch_stall no_instruction; do
  m=$m,smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio
done
shapes=${PIPES_SHAPES:-"1 32 32 16384 16384 64 0
1 16 16 16384 16384 128 0
32 32 32 512 512 64 0
32 16 16 512 512 128 1"}
: > "$OUT/pipes07.txt"
echo "$shapes" | while read -r b hq hkv n mm d c; do
  for v in ${PIPES_VARIANTS:-07e}; do
    args="--b $b --hq $hq --hkv $hkv --n $n --m $mm --d $d"; [ "$c" = 1 ] && args="$args --causal"
    $NCU --profile-from-start off --clock-control none --metrics $m --csv --page raw \
         $B --variant $v $args --profile 2>/dev/null | grep '^"' > build/pipes-one.csv
    awk -F'","' -v id="$v $b $hq $hkv $n $mm $d $c" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i ~ /__/) col[i] = $i }
         NR > 2 { printf "%s", id; for (i in col) { n = col[i]; sub(/\.avg\.pct_of_peak_sustained_active|_per_issue_active\.ratio|smsp__average_warps_issue_stalled_/, "", n); printf " %s=%s", n, $i } print "" }' \
         build/pipes-one.csv >> "$OUT/pipes07.txt"
    cat build/pipes-one.csv >> "$OUT/pipes07.csv"
  done
done
cat "$OUT/pipes07.txt"
