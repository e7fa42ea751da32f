#!/usr/bin/env bash
cd "$(dirname "$0")/../.." || exit 1
tar xJf build/xt/x2.tar.xz -C build/xt && mkdir -p build/bin build/ab-old/build/bin && cp build/xt/x/a07 build/bin/07_fa3_wgmma_tma && cp build/xt/x/old07 build/ab-old/build/bin/07_fa3_wgmma_tma && chmod +x build/bin/07_fa3_wgmma_tma build/ab-*/build/bin/07_fa3_wgmma_tma
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader > $OUT/gpu.txt
mkdir -p $OUT/f16 $OUT/bf16 $OUT/fp8
OUT=$OUT/f16 COMMIT=$XA AB_PREBUILT=1 AB_BIN=07_fa3_wgmma_tma AB_SWEEP=build/xt/s16b.txt REPS=3 OLD_COMMIT=$XOLD \
  AB_RUNS="old:07f new:07f" timeout 280 bash lab/ab.sh 2>&1 | tail -2
OUT=$OUT/bf16 COMMIT=$XA AB_PREBUILT=1 AB_BIN=07_fa3_wgmma_tma AB_SWEEP=build/xt/sbf.txt REPS=3 OLD_COMMIT=$XOLD AB_ARGS="--dtype bf16" \
  AB_RUNS="old:07f new:07f" timeout 80 bash lab/ab.sh 2>&1 | tail -2
OUT=$OUT/fp8 COMMIT=$XA AB_PREBUILT=1 AB_BIN=07_fa3_wgmma_tma AB_SWEEP=build/xt/s8.txt REPS=3 OLD_COMMIT=$XOLD AB_ARGS="--dtype e4m3" \
  AB_RUNS="old:07g new:07g" timeout 200 bash lab/ab.sh 2>&1 | tail -2
cat $OUT/*/ab-check.txt
