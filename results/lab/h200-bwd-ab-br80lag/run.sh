#!/usr/bin/env bash
# l36/br80lag on the GPU: matrix (08c, 08d), sanitizers on the 80-row kernel, A/B against main.
set -u
export OUT=${OUT:?}
( cd build/x80 && tar xJf bins.tar.xz )
M=build/x80/main/08_backward; B=build/x80/br/08_backward
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version --format=csv > $OUT/gpu.txt 2>&1
t0=$(date +%s)
AB_BINS="main:$M br80lag:$B" AB_CAP=200 bash lab/bwd_ab.sh matrix
echo "matrix done $(( $(date +%s) - t0 )) s" >> $OUT/summary.txt
for t in memcheck racecheck synccheck; do for dt in f16 bf16; do
  timeout 100 compute-sanitizer --tool $t --error-exitcode 9 $B --variant 08d --b 1 --hq 4 --hkv 2 --n 200 --m 131 --d 128 --dtype $dt --no-time > $OUT/san-$t-$dt.log 2>&1
  echo "sanitize $t $dt (B 1, Hq 4, Hkv 2, N 200, M 131, d 128, not causal): exit $?, $(grep -c 'ERROR SUMMARY: 0 errors\|RACECHECK SUMMARY: 0 hazards' $OUT/san-$t-$dt.log) clean summaries" >> $OUT/summary.txt
done; done
echo "sanitize done $(( $(date +%s) - t0 )) s" >> $OUT/summary.txt
cat > $OUT/ab-sweep.txt <<'S'
8 16 16 2048 2048 128 0
4 16 16 4096 4096 128 0
2 16 16 8192 8192 128 0
1 16 16 16384 16384 128 0
2 16 16 8192 8192 128 1
4 16 16 4096 4096 128 0 dtype=bf16
2 16 4 8192 8192 128 0 dtype=bf16
S
AB_SWEEP=$OUT/ab-sweep.txt AB_VARIANTS=08d AB_REP=2 AB_CAP=240 AB_BINS="main:$M br80lag:$B" bash lab/bwd_ab.sh ab
echo "ab done $(( $(date +%s) - t0 )) s" >> $OUT/summary.txt
tar cJf /tmp/out.tar.xz -C $OUT . && mv /tmp/out.tar.xz $OUT/out.tar.xz
