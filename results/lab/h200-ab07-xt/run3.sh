#!/usr/bin/env bash
# The GPU matrix of rungs 07 and 08 again (its CSVs, tarred), and 07f/07g of this tree against main's (lab/ab.sh).
cd "$(dirname "$0")/../.." || exit 1
tar xJf build/xf/bins.tar.xz -C build/xf && mkdir -p build/bin build/ab-old/build/bin && cp build/xf/x/07 build/bin/07_fa3_wgmma_tma && cp build/xf/x/08 build/bin/08_backward && cp build/xf/x/old07 build/ab-old/build/bin/07_fa3_wgmma_tma && chmod +x build/bin/* build/ab-old/build/bin/*
R=build/xf/out; mkdir -p $R/m07 $R/m08 $R/f16 $R/bf16 $R/fp8
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total,driver_version --format=csv,noheader > $R/gpu.txt
export ATTN_COMMIT=$XC
for v in 07a 07b 07c 07d 07e 07f 07g; do
  timeout 120 build/bin/07_fa3_wgmma_tma --variant $v --sweep tests/gpu_cases.txt --no-time --quiet --csv $R/m07/$v.csv > $R/m07/$v.log 2>&1; rc=$?
  echo "$v exit $rc ok $(grep -c ',ok,' $R/m07/$v.csv) FAIL $(grep -c ',FAIL' $R/m07/$v.csv) refused $(grep -c ',unsupported' $R/m07/$v.csv)" | tee -a $R/m07/summary.txt
done
for v in $(build/bin/08_backward --list | cut -f1); do
  timeout 150 build/bin/08_backward --variant $v --sweep tests/gpu_cases.txt --no-time --quiet --csv $R/m08/bwd-matrix.csv > $R/m08/$v.log 2>&1; rc=$?
  echo "$v exit $rc ok $(grep -v '^#' $R/m08/bwd-matrix.csv | awk -F, -v R=$v '$1==R && $10=="ok"' | wc -l) FAIL $(grep -v '^#' $R/m08/bwd-matrix.csv | awk -F, -v R=$v '$1==R && $10 ~ /^FAIL/' | wc -l)" | tee -a $R/m08/summary.txt
done
OUT=$R/f16 COMMIT=$XC AB_PREBUILT=1 AB_BIN=07_fa3_wgmma_tma AB_SWEEP=build/xf/s16b.txt REPS=2 OLD_COMMIT=$XOLD \
  AB_RUNS="old:07f new:07f" timeout 220 bash lab/ab.sh > /dev/null 2>&1
OUT=$R/bf16 COMMIT=$XC AB_PREBUILT=1 AB_BIN=07_fa3_wgmma_tma AB_SWEEP=build/xf/sbf.txt REPS=2 OLD_COMMIT=$XOLD AB_ARGS="--dtype bf16" \
  AB_RUNS="old:07f new:07f" timeout 60 bash lab/ab.sh > /dev/null 2>&1
OUT=$R/fp8 COMMIT=$XC AB_PREBUILT=1 AB_BIN=07_fa3_wgmma_tma AB_SWEEP=build/xf/s8.txt REPS=2 OLD_COMMIT=$XOLD AB_ARGS="--dtype e4m3" \
  AB_RUNS="old:07g new:07g" timeout 150 bash lab/ab.sh > /dev/null 2>&1
cat $R/*/ab-check.txt
tar cJf $OUT/out.tar.xz -C build/xf out
