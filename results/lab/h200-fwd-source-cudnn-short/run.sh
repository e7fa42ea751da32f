#!/usr/bin/env bash
# 07f (main, with the turn on the exponentials) and PyTorch's cuDNN backend under Nsight Compute on
# the short shapes where 07f is behind torch-cudnn in the sweep (issue 38): the three the profile at
# N = 512 (results/lab/h200-fwd-source-cudnn-n512, before the turn) did not cover, and its worst one
# again. lab/fwd_source.sh, one folder a shape; the binary built here and carried.
set -u
R=${OUT:?}
tar xJf build/x80/src.tar.xz -C build/x80
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version --format=csv > $R/gpu.txt
for s in "32 16 512 128 0" "16 32 1024 64 0" "16 32 1024 64 1" "32 32 512 64 1"; do
  set -- $s; d=$R/n$3-d$4-c$5; mkdir -p $d
  FWD_SHAPE="$s" OUT=$d timeout 140 bash lab/fwd_source.sh build/x80/src/07_fa3_wgmma_tma >> $R/summary.txt 2>&1
done
tar cJf /tmp/o.tar.xz -C $R . && mv /tmp/o.tar.xz $R/out.tar.xz
