#!/usr/bin/env bash
# Why Nsight Compute times a rung 07 kernel faster than the ladder does (issue 22), measured: the
# ladder's own timing of one shape with 3, 20, 200 and 1000 timed launches (each after its L2
# flush), the SM clock, power and throttle reasons sampled every 50 ms meanwhile, then ncu's
# duration of one launch with the clocks left free (as make profile runs it) and locked to base.
#   -> $OUT/timing-gap.csv (ladder rows), $OUT/timing-gap-smi.csv (samples), $OUT/timing-gap.txt,
#      $OUT/timing-gap-ncu-none.csv and -base.csv (ncu's raw CSV: duration, SM clock)
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-build/out}; mkdir -p "$OUT"
B=build/bin/07_fa3_wgmma_tma V=${GAP_VARIANT:-07e}
SHAPE=${GAP_SHAPE:---b 1 --hq 16 --hkv 16 --n 16384 --m 16384 --d 128}
txt=$OUT/timing-gap.txt; : > "$txt"
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active \
    --format=csv,nounits -lms 50 > "$OUT/timing-gap-smi.csv" &
smi=$!
sleep 2
for runs in 3 20 200 1000; do
  echo "$(date -u +%T.%N | cut -c1-12) ladder runs=$runs start" >> "$txt"
  $B --variant $V $SHAPE --no-check --quiet --runs $runs --csv "$OUT/timing-gap.csv" > /dev/null
  echo "$(date -u +%T.%N | cut -c1-12) ladder runs=$runs end" >> "$txt"
  sleep 3
done
kill $smi
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
for cc in none base; do
  $NCU --profile-from-start off --clock-control $cc --metrics gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second \
       --csv --page raw $B --variant $V $SHAPE --profile 2>/dev/null | grep '^"' > "$OUT/timing-gap-ncu-$cc.csv"
  awk -F'","' -v cc=$cc 'NR == 1 { for (i = 1; i <= NF; i++) if ($i ~ /gpu__time_duration|sm__cycles_elapsed/) col[i] = $i }
       NR > 2 { for (i in col) printf "ncu --clock-control %s: %s = %s\n", cc, col[i], $i }' "$OUT/timing-gap-ncu-$cc.csv" >> "$txt"
done
grep -v '^#' "$OUT/timing-gap.csv" | cut -d, -f1-8,11-14,22 >> "$txt"
cat "$txt"
