#!/usr/bin/env bash
# 07g and cuDNN's FP8 attention under Nsight Compute at d = 64 (issue 38 asks for d = 64 and 128; the
# d = 128 profile is results/lab/h200-fp8-source-cudnn): B = 2, H = 32, N = M = 8192, not causal.
# lab/fwd_source.sh with FWD_DTYPE=e4m3; the cuDNN frontend from the carried wheel; rung 07's binary
# built here and carried.
set -u
R=${OUT:?}
python3 -m pip install -q --no-deps --no-index --break-system-packages .cudnnfe/*.whl > $R/cudnn-install.txt 2>&1
tar xJf build/x80/src.tar.xz -C build/x80
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version --format=csv > $R/gpu.txt
FWD_DTYPE=e4m3 FWD_SHAPE="2 32 8192 64 0" OUT=$R timeout 200 bash lab/fwd_source.sh build/x80/src/07_fa3_wgmma_tma > $R/summary.txt 2>&1
tar cJf /tmp/o.tar.xz -C $R . && mv /tmp/o.tar.xz $R/out.tar.xz
