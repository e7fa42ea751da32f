#!/usr/bin/env bash
# l38/mid on the GPU: binaries built here (main's 07 as mi/old, the branch's as mi/new, carried in
# build/x80/mi.tar.xz). The matrix for the branch's 07d-07g, O against main's bit for bit on three
# lines, memcheck and racecheck on 07f and 07g, then lab/ab.sh on 16-bit and FP8 shapes.
set -u
R=${OUT:?}
tar xJf build/x80/mi.tar.xz -C build/x80
mkdir -p build/bin build/ab-old/build/bin
cp build/x80/mi/new build/bin/07_fa3_wgmma_tma; cp build/x80/mi/old build/ab-old/build/bin/07_fa3_wgmma_tma
chmod +x build/bin/* build/ab-*/build/bin/*
B=build/bin/07_fa3_wgmma_tma
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version --format=csv > $R/gpu.txt
for v in 07d 07e 07f 07g; do
  timeout 60 $B --variant $v --sweep tests/gpu_cases.txt --no-time --quiet --csv $R/m.csv > /dev/null 2>&1; rc=$?
  echo "matrix mid $v exit $rc ok $(grep -v '^#' $R/m.csv | awk -F, '$10=="ok"' | wc -l) FAIL $(grep -c ',FAIL' $R/m.csv) refused $(grep -c ',unsupported' $R/m.csv)" >> $R/summary.txt
  cat $R/m.csv >> $R/matrix.csv; rm -f $R/m.csv
done
for a in "07g --dtype e4m3 --d 128 --b 1 --h 4 --n 700 --m 900" "07f --d 64 --b 2 --h 8 --n 3000 --m 3000 --causal" "07f --d 128 --b 1 --h 8 --n 1000 --m 1500 --dtype bf16"; do
  for t in old new; do b=$B; [ $t = old ] && b=build/ab-old/$B
    $b --variant $a --no-time --quiet --save $R/o-$t > /dev/null 2>&1; done
  echo "same O as main ($a): $(cmp -s $R/o-old/o.npy $R/o-new/o.npy && echo yes || echo NO)" >> $R/summary.txt; rm -rf $R/o-old $R/o-new
done
for t in memcheck racecheck; do
  for a in "07g --dtype e4m3 --d 128 --b 1 --h 2 --n 700 --m 900 --causal" "07f --d 64 --b 1 --h 2 --n 3000 --m 3000 --causal"; do
    timeout 120 compute-sanitizer --tool $t --error-exitcode 9 $B --variant $a --no-time > $R/san.log 2>&1
    echo "sanitize $t $a: exit $?" >> $R/summary.txt; cat $R/san.log >> $R/san-all.log
  done
done
printf '32 32 32 512 512 64 1\n32 32 32 512 512 64 0\n16 32 32 1024 1024 64 1\n2 32 32 8192 8192 64 0\n1 32 32 16384 16384 64 1\n32 16 16 512 512 128 1\n2 16 16 8192 8192 128 0\n2 16 16 8192 8192 128 1\n2 24 24 8192 8192 96 0\n2 8 8 8192 8192 256 0\n' > $R/s16.txt
printf '4 16 16 4096 4096 128 0\n2 16 16 8192 8192 128 0\n1 16 16 16384 16384 128 1\n2 32 32 8192 8192 64 0\n' > $R/s8.txt
mkdir -p $R/f16 $R/fp8
OUT=$R/f16 COMMIT=mid AB_PREBUILT=1 AB_BIN=07_fa3_wgmma_tma AB_SWEEP=$R/s16.txt REPS=3 OLD_COMMIT=main \
  AB_RUNS="old:07f new:07f" timeout 240 bash lab/ab.sh > /dev/null 2>&1
OUT=$R/fp8 COMMIT=mid AB_PREBUILT=1 AB_BIN=07_fa3_wgmma_tma AB_SWEEP=$R/s8.txt REPS=3 OLD_COMMIT=main AB_ARGS="--dtype e4m3" \
  AB_RUNS="old:07g new:07g" timeout 150 bash lab/ab.sh > /dev/null 2>&1
cat $R/*/ab-check.txt >> $R/summary.txt 2>/dev/null
xz -9 $R/matrix.csv
tar cJf /tmp/o.tar.xz -C $R . && mv /tmp/o.tar.xz $R/out.tar.xz
