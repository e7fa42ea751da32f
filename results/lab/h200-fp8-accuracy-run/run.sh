#!/usr/bin/env bash
# FlashAttention-3's FP8 accuracy experiment on the H200 with cuDNN's FP8 beside rung 07's steps
# (lab/fp8_accuracy.py), one device call: the cuDNN frontend installed from the carried wheel, rung 07's
# binary built here and carried in build/x80.
set -u
export OUT=${OUT:?}
python3 -m pip install -q --no-deps --no-index --break-system-packages .cudnnfe/*.whl > $OUT/log.txt 2>&1
( cd build/x80 && tar xJf b07.tar.xz )
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version --format=csv > $OUT/gpu.txt 2>&1
ATTN_COMMIT=${COMMIT:-unknown} timeout 400 python3 lab/fp8_accuracy.py build/x80/b07/07_fa3_wgmma_tma /tmp/acc $OUT/h200-fp8-accuracy.csv >> $OUT/log.txt 2>&1
echo "exit $?" >> $OUT/log.txt
cp /tmp/acc/driver.csv $OUT/driver.csv 2>/dev/null
