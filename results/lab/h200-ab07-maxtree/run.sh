#!/usr/bin/env bash
# l38/maxtree on the GPU: the 07f/07g matrix of the branch, rung 08's matrix (08a, 08b) at main's
# build, then lab/ab.sh (its checks first) old/new for 07f and 07g.
set -u
R=${OUT:?}
tar xJf build/x80/mt.tar.xz -C build/x80
mkdir -p build/bin build/ab-old/build/bin
cp build/x80/mt/new build/bin/07_fa3_wgmma_tma; cp build/x80/mt/old build/ab-old/build/bin/07_fa3_wgmma_tma
chmod +x build/bin/* build/ab-*/build/bin/*
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version --format=csv > $R/gpu.txt
t0=$(date +%s)
for v in 07f 07g; do
  timeout 60 build/bin/07_fa3_wgmma_tma --variant $v --sweep tests/gpu_cases.txt --no-time --quiet --csv $R/m.csv > /dev/null 2>&1; rc=$?
  echo "matrix maxtree $v exit $rc ok $(grep -v '^#' $R/m.csv | awk -F, '$10=="ok"' | wc -l) FAIL $(grep -c ',FAIL' $R/m.csv) refused $(grep -c ',unsupported' $R/m.csv)" >> $R/summary.txt
  grep ',FAIL' $R/m.csv | head -3 | cut -c1-200 >> $R/summary.txt; cat $R/m.csv >> $R/matrix.csv; rm -f $R/m.csv
done
for v in 08a 08b; do
  timeout 100 build/x80/mt/08_backward --variant $v --sweep tests/gpu_cases.txt --no-time --quiet --csv $R/m.csv > /dev/null 2>&1; rc=$?
  echo "matrix main-7f5c347 $v exit $rc ok $(grep -v '^#' $R/m.csv | awk -F, '$10=="ok"' | wc -l) FAIL $(grep -c ',FAIL' $R/m.csv) refused $(grep -c ',unsupported' $R/m.csv)" >> $R/summary.txt
  grep ',FAIL' $R/m.csv | head -3 | cut -c1-200 >> $R/summary.txt; cat $R/m.csv >> $R/matrix-08.csv; rm -f $R/m.csv
done
echo "matrix $(( $(date +%s) - t0 )) s" >> $R/summary.txt
printf '32 32 32 512 512 64 1\n32 32 32 512 512 64 0\n16 32 32 1024 1024 64 0\n16 32 32 1024 1024 64 1\n2 32 32 8192 8192 64 0\n2 32 32 8192 8192 64 1\n1 32 32 16384 16384 64 1\n32 16 16 512 512 128 1\n32 16 16 512 512 128 0\n2 16 16 8192 8192 128 0\n' > $R/s16.txt
printf '4 16 16 4096 4096 128 0\n2 16 16 8192 8192 128 0\n1 16 16 16384 16384 128 0\n4 16 16 4096 4096 128 1\n' > $R/s8.txt
mkdir -p $R/f16 $R/fp8
OUT=$R/fp8 COMMIT=maxtree AB_PREBUILT=1 AB_BIN=07_fa3_wgmma_tma AB_SWEEP=$R/s8.txt REPS=3 OLD_COMMIT=main AB_ARGS="--dtype e4m3" \
  AB_RUNS="old:07g new:07g" timeout 170 bash lab/ab.sh > /dev/null 2>&1
echo "fp8 $(( $(date +%s) - t0 )) s" >> $R/summary.txt
OUT=$R/f16 COMMIT=maxtree AB_PREBUILT=1 AB_BIN=07_fa3_wgmma_tma AB_SWEEP=$R/s16.txt REPS=3 OLD_COMMIT=main \
  AB_RUNS="old:07f new:07f" timeout 200 bash lab/ab.sh > /dev/null 2>&1
echo "f16 $(( $(date +%s) - t0 )) s" >> $R/summary.txt
cat $R/*/ab-check.txt >> $R/summary.txt 2>/dev/null
xz -9 $R/matrix.csv $R/matrix-08.csv
tar cJf /tmp/o.tar.xz -C $R . && mv /tmp/o.tar.xz $R/out.tar.xz
