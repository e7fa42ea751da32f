#!/usr/bin/env bash
cd "$(dirname "$0")/../.." || exit 1
tar xJf build/xt/x.tar.xz -C build/xt && mkdir -p build/bin build/ab-old/build/bin build/ab-b/build/bin && cp build/xt/x/a07 build/bin/07_fa3_wgmma_tma && cp build/xt/x/old07 build/ab-old/build/bin/07_fa3_wgmma_tma && cp build/xt/x/b07 build/ab-b/build/bin/07_fa3_wgmma_tma && chmod +x build/bin/07_fa3_wgmma_tma build/ab-*/build/bin/07_fa3_wgmma_tma
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader > $OUT/gpu.txt
mkdir -p $OUT/f16 $OUT/fp8
OUT=$OUT/f16 COMMIT=$XA AB_PREBUILT=1 AB_BIN=07_fa3_wgmma_tma AB_SWEEP=build/xt/s16.txt REPS=2 OLD_COMMIT=$XOLD \
  AB_RUNS="old:07f new:07f b:07f" timeout 300 bash lab/ab.sh 2>&1 | tail -3
OUT=$OUT/fp8 COMMIT=$XA AB_PREBUILT=1 AB_BIN=07_fa3_wgmma_tma AB_SWEEP=build/xt/s8.txt REPS=2 OLD_COMMIT=$XOLD AB_ARGS="--dtype e4m3" \
  AB_RUNS="old:07g new:07g b:07g" timeout 240 bash lab/ab.sh 2>&1 | tail -3
cat $OUT/*/ab-check.txt
