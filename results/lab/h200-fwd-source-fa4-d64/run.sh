#!/usr/bin/env bash
# Prepared, not run: 07f beside FlashAttention-4's forward under Nsight Compute at d = 64, where the third
# power probe left FA4 2.2% ahead a clock (N = 16384, causal) and the sweep has 07f behind FA4 from
# N = 8192 (issue 38). The third of the three calls that copy FA4's wheels (.fa4/d1, .fa4/d2 as
# results/lab/h200-power-probe-3638/run.sh does; this one carries .fa4/d3 and build/x80 with main's
# 07 binary as src/07_fa3_wgmma_tma). lab/fwd_source.sh with FWD_PEER=fa4; NCU_PEER=fa4 lab/ncu_row.py
# makes the rows.
set -u
R=${OUT:?}
cp .fa4/d3/* /tmp/fa4/ && mkdir -p /tmp/fa4w && cat /tmp/fa4/fa4p.* | tar x -C /tmp/fa4w && \
  python3 -m pip install -q --no-deps --no-index --break-system-packages /tmp/fa4w/*.whl > $R/fa4-install.txt 2>&1
tar xJf build/x80/src.tar.xz -C build/x80
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version --format=csv > $R/gpu.txt
for s in "1 32 16384 64 1" "2 32 8192 64 0"; do
  set -- $s; d=$R/n$3-d$4-c$5; mkdir -p $d
  FWD_PEER=fa4 FWD_SHAPE="$s" OUT=$d timeout 200 bash lab/fwd_source.sh build/x80/src/07_fa3_wgmma_tma >> $R/summary.txt 2>&1
done
NCU_PEER=fa4 python3 lab/ncu_row.py $R/n*/ >> $R/summary.txt 2>&1
tar cJf /tmp/o.tar.xz -C $R . && mv /tmp/o.tar.xz $R/out.tar.xz
