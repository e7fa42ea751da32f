#!/usr/bin/env bash
# Issue 36: 08d's and FlashAttention-4's main backward kernels side by side under Nsight Compute,
# with the counters that say which shared resource a tile waits on: the tensor pipe's activity,
# shared memory's bank reads and writes and the LSU's shared-memory wavefronts, the issue slots,
# the MIO queue's throttle, and L2's load with its reduction sectors (dQ's bulk reduce-adds). One profiled launch each (clocks left free, as make profile runs it).
#
#   OUT=<dir> lab/bwd_counters.sh [08-binary]     (default build/bin/08_backward; FA4 where importable:
#                                                  ../shared/peers/fa4.sh installs it, three device calls)
#   COUNTERS_SHAPES: "B H N d causal" lines (default: d = 128 and 64 at N = 8192, d = 128 causal)
#   -> $OUT/counters.csv (id, shape, kernel, then one column a metric) and $OUT/counters.txt (the table)
#
# First run at 5205fc4 (results/lab/h200-bwd-counters-5205fc4.csv): its tensor-pipe column is empty (it asked
# for a gmma counter this ncu lacks; hmma's, which wgmma also counts, since), its table was drawn here.
set -u
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-build/out}; mkdir -p "$OUT"
BIN=${1:-build/bin/08_backward}
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n 1)
[ -n "$NCU" ] || { echo "lab/bwd_counters.sh: no ncu" >&2; exit 1; }
m=gpu__time_duration.sum
m=$m,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active   # wgmma counts here (no gmma counter)
m=$m,smsp__issue_active.avg.pct_of_peak_sustained_active
m=$m,l1tex__data_bank_reads.avg.pct_of_peak_sustained_elapsed
m=$m,l1tex__data_bank_writes.avg.pct_of_peak_sustained_elapsed
m=$m,l1tex__data_pipe_lsu_wavefronts_mem_shared.avg.pct_of_peak_sustained_elapsed
m=$m,sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active
m=$m,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio
m=$m,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio
m=$m,smsp__inst_executed.sum
m=$m,lts__throughput.avg.pct_of_peak_sustained_elapsed
m=$m,lts__t_sectors_op_red.sum
shapes=${COUNTERS_SHAPES:-"2 16 8192 128 0
2 16 8192 128 1
2 32 8192 64 0"}
W=$OUT/counters-work; mkdir -p "$W"
fa4=0; python3 -c 'from flash_attn.cute import flash_attn_func' 2>/dev/null && fa4=1
: > "$OUT/counters.csv"
# one profiled launch -> the rows of its kernels whose name has $3 in it ("longest": the longest one),
# the metrics in the order of $m
rows() {
  python3 - "$1" "$2" "$3" "$m" <<'PY' >> "$OUT/counters.csv"
import csv, sys
path, ident, pat, metrics = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4].split(",")
lines = open(path).read().splitlines()
start = [i for i, l in enumerate(lines) if l.startswith('"ID"')]
if not start:
    print(f"{ident},no profile"); sys.exit(0)
r = list(csv.reader(lines[start[0]:]))
h = r[0]
body = r[2:]
if pat == "longest":   # FA4's kernels are named by its Python classes: take the main one by its time
    t = h.index("gpu__time_duration.sum")
    body = [max(body, key=lambda x: float(x[t].replace(",", "") or 0))]
for row in body:
    name = row[h.index("Kernel Name")]
    if pat == "longest" or pat in name:
        print(",".join([ident, name.split("(")[0].replace(",", ";")[:60]] +
                       [row[h.index(x)].replace(",", "") if x in h else "" for x in metrics]))
PY
}
echo "$shapes" | while read -r b h n d c; do
  cc=""; [ "$c" = 1 ] && cc=--causal
  timeout 120 "$NCU" --profile-from-start off --clock-control none --metrics "$m" --csv --page raw \
    "$BIN" --variant 08d --b "$b" --h "$h" --n "$n" --d "$d" $cc --profile --quiet > "$W/08d.csv" 2>/dev/null
  rows "$W/08d.csv" "08d B=$b H=$h N=$n d=$d c=$c" bwd_sm90
  if [ $fa4 = 1 ]; then
    timeout 200 "$NCU" --profile-from-start off --clock-control none --metrics "$m" --csv --page raw \
      python3 lab/fa4_bwd.py "$b" "$h" "$h" "$n" "$n" "$d" "$c" > "$W/fa4.csv" 2>/dev/null
    rows "$W/fa4.csv" "fa4 B=$b H=$h N=$n d=$d c=$c" longest
  fi
done
{ echo "id,kernel,$m" | tr ',' '\n' | sed 's/\.avg\.pct_of_peak_sustained_\(active\|elapsed\)/ %/; s/_per_issue_active\.ratio//' | paste -sd,
  cat "$OUT/counters.csv"; } | awk -F, '{ for (i = 1; i <= NF; i++) printf "%s%s", $i, (i < NF ? "  " : "\n") }' > "$OUT/counters.txt"
cat "$OUT/counters.txt"
