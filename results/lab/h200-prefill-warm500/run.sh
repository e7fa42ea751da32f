#!/usr/bin/env bash
# The prefill sweep's 07f, 07g and peer rows with every row warmed for 500 ms first (WARM_MS=500:
# timed at the sustained clock, under the power cap), in one call; FA4's wheels copied by the two
# calls before it (.fa4/d1, .fa4/d2) and cuDNN's frontend installed by a third (.cudnnfe). Binaries
# built here and carried (build/x80/lad.tar.xz: 00_baseline for the probe, 07 for the rows).
set -u
R=${OUT:?}
cp .fa4/d3/* /tmp/fa4/ && mkdir -p /tmp/fa4w && cat /tmp/fa4/fa4p.* | tar x -C /tmp/fa4w && \
  python3 -m pip install -q --no-deps --no-index --break-system-packages /tmp/fa4w/*.whl > $R/fa4-install.txt 2>&1
tar xJf build/x80/lad.tar.xz
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version --format=csv > $R/gpu.txt
WARM_MS=500 RUNGS="07f 07g peers" SWEEPS=prefill timeout 540 bash tools/ladder.sh > $R/ladder.log 2>&1
echo "ladder exit $?" >> $R/ladder.log
cp results/h200-prefill.csv $R/ 2>/dev/null; cp results/h200-prefill.csv.partial $R/ 2>/dev/null
xz -9 $R/ladder.log
