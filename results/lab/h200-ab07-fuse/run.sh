#!/usr/bin/env bash
# l38/fuse on the GPU (prepared, not run): build here first,
#   git worktree add /tmp/fuse main && (cd /tmp/fuse && git apply results/lab/h200-ab07-fuse/branch.patch &&
#     make -j2 build/bin/07_fa3_wgmma_tma) && make -j2 build/bin/07_fa3_wgmma_tma &&
#   mkdir -p /tmp/pk/fu && cp build/bin/07_fa3_wgmma_tma /tmp/pk/fu/old && cp /tmp/fuse/build/bin/07_fa3_wgmma_tma /tmp/pk/fu/new &&
#   tar cJf build/x80/fu.tar.xz -C /tmp/pk fu
# then carry build/x80: the matrix for the branch's 07f and 07g (the output must be main's bit for bit:
# compare the --save'd O of a few lines too), memcheck and racecheck on 07g d = 128, then lab/ab.sh.
set -u
R=${OUT:?}
tar xJf build/x80/fu.tar.xz -C build/x80
mkdir -p build/bin build/ab-old/build/bin
cp build/x80/fu/new build/bin/07_fa3_wgmma_tma; cp build/x80/fu/old build/ab-old/build/bin/07_fa3_wgmma_tma
chmod +x build/bin/* build/ab-*/build/bin/*
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version --format=csv > $R/gpu.txt
for v in 07f 07g; do
  timeout 60 build/bin/07_fa3_wgmma_tma --variant $v --sweep tests/gpu_cases.txt --no-time --quiet --csv $R/m.csv > /dev/null 2>&1; rc=$?
  echo "matrix fuse $v exit $rc ok $(grep -v '^#' $R/m.csv | awk -F, '$10=="ok"' | wc -l) FAIL $(grep -c ',FAIL' $R/m.csv) refused $(grep -c ',unsupported' $R/m.csv)" >> $R/summary.txt
  cat $R/m.csv >> $R/matrix.csv; rm -f $R/m.csv
done
for a in "07g --dtype e4m3 --d 128 --b 1 --h 4 --n 700 --m 900" "07f --d 64 --b 2 --h 8 --n 3000 --m 3000 --causal"; do
  for t in old new; do b=build/bin/07_fa3_wgmma_tma; [ $t = old ] && b=build/ab-old/build/bin/07_fa3_wgmma_tma
    $b --variant $a --no-time --quiet --save $R/o-$t > /dev/null 2>&1; done
  echo "same O as main ($a): $(cmp -s $R/o-old/o.npy $R/o-new/o.npy && echo yes || echo NO)" >> $R/summary.txt; rm -rf $R/o-old $R/o-new
done
for t in memcheck racecheck; do
  timeout 120 compute-sanitizer --tool $t --error-exitcode 9 build/bin/07_fa3_wgmma_tma --variant 07g --dtype e4m3 --d 128 --b 1 --h 2 --n 700 --m 900 --causal --no-time > $R/san.log 2>&1
  echo "sanitize $t 07g d=128: exit $?" >> $R/summary.txt; cat $R/san.log >> $R/san-all.log
done
# changed kernels: d = 64 at N <= 1024, d = 128 narrow (N <= 1024, or causal); controls: d = 64 from N = 2048, d = 128 wide
printf '32 32 32 512 512 64 1\n32 32 32 512 512 64 0\n16 32 32 1024 1024 64 0\n16 32 32 1024 1024 64 1\n32 16 16 512 512 128 1\n32 16 16 512 512 128 0\n2 16 16 8192 8192 128 1\n2 32 32 8192 8192 64 0\n2 16 16 8192 8192 128 0\n' > $R/s16.txt
printf '4 16 16 4096 4096 128 0\n4 16 16 4096 4096 128 1\n2 16 16 8192 8192 128 0\n1 16 16 16384 16384 128 0\n1 16 16 16384 16384 128 1\n' > $R/s8.txt
mkdir -p $R/f16 $R/fp8
OUT=$R/fp8 COMMIT=fuse AB_PREBUILT=1 AB_BIN=07_fa3_wgmma_tma AB_SWEEP=$R/s8.txt REPS=3 OLD_COMMIT=main AB_ARGS="--dtype e4m3" \
  AB_RUNS="old:07g new:07g" timeout 200 bash lab/ab.sh > /dev/null 2>&1
OUT=$R/f16 COMMIT=fuse AB_PREBUILT=1 AB_BIN=07_fa3_wgmma_tma AB_SWEEP=$R/s16.txt REPS=3 OLD_COMMIT=main \
  AB_RUNS="old:07f new:07f" timeout 200 bash lab/ab.sh > /dev/null 2>&1
cat $R/*/ab-check.txt >> $R/summary.txt 2>/dev/null
xz -9 $R/matrix.csv
tar cJf /tmp/o.tar.xz -C $R . && mv /tmp/o.tar.xz $R/out.tar.xz
