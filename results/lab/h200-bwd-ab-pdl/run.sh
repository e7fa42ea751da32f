#!/usr/bin/env bash
# l36/pdl on the GPU: matrix (08c, 08d), sanitizers on 08d, A/B against main (08d, three passes each way).
set -u
export OUT=${OUT:?}
( cd build/x80 && tar xJf bins.tar.xz )
M=build/x80/main/08_backward; B=build/x80/pdl/08_backward
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version --format=csv > $OUT/gpu.txt 2>&1
t0=$(date +%s)
AB_BINS="main:$M pdl:$B" AB_CAP=200 bash lab/bwd_ab.sh matrix
echo "matrix done $(( $(date +%s) - t0 )) s" >> $OUT/summary.txt
for sh in "--d 128 --b 1 --hq 4 --hkv 2 --n 200 --m 131 --dtype bf16" "--d 64 --b 1 --hq 4 --hkv 2 --n 77 --m 131 --causal" "--d 256 --b 1 --hq 2 --hkv 1 --n 150 --m 70"; do
  for t in memcheck racecheck synccheck; do
    timeout 100 compute-sanitizer --tool $t --error-exitcode 9 $B --variant 08d $sh --no-time > $OUT/san.log 2>&1
    echo "sanitize $t 08d $sh: exit $?, $(grep -c 'ERROR SUMMARY: 0 errors\|RACECHECK SUMMARY: 0 hazards' $OUT/san.log) clean summaries" >> $OUT/summary.txt
    cat $OUT/san.log >> $OUT/san-all.log
  done
done
rm -f $OUT/san.log
echo "sanitize done $(( $(date +%s) - t0 )) s" >> $OUT/summary.txt
cat > $OUT/ab-sweep.txt <<'S'
1 16 16 1024 1024 128 0
8 32 32 2048 2048 64 0
8 32 32 2048 2048 64 1
2 32 32 8192 8192 64 0
8 32 32 2048 2048 96 0
8 16 16 2048 2048 128 0
2 16 16 8192 8192 128 0
1 16 16 16384 16384 128 0
2 16 16 8192 8192 128 1
2 16 4 8192 8192 128 0 dtype=bf16
2 8 8 8192 8192 256 0
S
AB_SWEEP=$OUT/ab-sweep.txt AB_VARIANTS=08d AB_REP=3 AB_CAP=300 AB_BINS="main:$M pdl:$B" bash lab/bwd_ab.sh ab > /dev/null
echo "ab done $(( $(date +%s) - t0 )) s" >> $OUT/summary.txt
tar cJf /tmp/out.tar.xz -C $OUT . && mv /tmp/out.tar.xz $OUT/out.tar.xz
