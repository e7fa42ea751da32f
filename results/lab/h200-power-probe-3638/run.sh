#!/usr/bin/env bash
# The third power probe (issues 36 and 38), after the two calls that copied FA4's wheels (.fa4/d1, d2):
#   PART=main: FA4 installed from .fa4/d3, then the backward runs and peers, then the forward's
#   PART=fp8:  the cuDNN frontend from .cudnnfe, then cuDNN's FP8 and 07g at d = 128, N = 4096
set -u
FINAL=${OUT:?}; export OUT=/tmp/probe-out; mkdir -p $OUT
export ATTN_COMMIT=${COMMIT:-unknown}
P=results/lab/h200-power-probe-3638
( cd build/x80 && { [ -d p ] || tar xJf p.tar.xz; } )
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version --format=csv > $OUT/gpu-${PART:-main}.txt 2>&1
if [ "${PART:-main}" = main ]; then
  cp .fa4/d3/* /tmp/fa4/ && mkdir -p /tmp/fa4w && cat /tmp/fa4/fa4p.* | tar x -C /tmp/fa4w && \
    python3 -m pip install -q --no-deps --no-index --break-system-packages /tmp/fa4w/*.whl > $OUT/fa4-install.txt 2>&1
  python3 -c "from flash_attn.cute import flash_attn_func; print('fa4 importable')" >> $OUT/fa4-install.txt 2>&1
  TAG=bwd bash lab/power_probe.sh $P/runs-bwd.txt $P/peers-bwd.txt --backward --runs 500 --bin build/x80/p/08_backward
  sleep 5
  TAG=fwd bash lab/power_probe.sh $P/runs-fwd.txt $P/peers-fwd.txt --runs 1500 --bin build/x80/p/07_fa3_wgmma_tma
else
  python3 -m pip install -q --no-deps --no-index --break-system-packages .cudnnfe/*.whl > $OUT/cudnn-install.txt 2>&1
  TAG=fp8 bash lab/power_probe.sh /dev/null $P/peers-fp8.txt --runs 1500 --bin build/x80/p/07_fa3_wgmma_tma
  sleep 4
  TAG=fp8g bash lab/power_probe.sh $P/runs-fp8.txt
fi
python3 lab/clocks.py $OUT $(ls $OUT | sed -n 's/^marks-\(.*\)\.txt$/\1/p') > $FINAL/clocks-${PART:-main}.txt 2>&1
cat $FINAL/clocks-${PART:-main}.txt
tar cJf $FINAL/out-${PART:-main}.tar.xz -C $OUT .
