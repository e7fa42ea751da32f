#!/usr/bin/env bash
# The backward sweep with every peer at 7f5c347 (08d's dependent launches in), in one device call after
# the two that copied FA4's wheels (.fa4/d1, .fa4/d2; this call carries .fa4/d3 and the binaries built
# here): FA4 installed, then the peers, 08d and 08c on sweeps/backward.txt, --no-check, as the sweep
# at 066ea15 ran (peers first).
set -u
export OUT=${OUT:?}
t0=$(date +%s)
cp .fa4/d3/* /tmp/fa4/ && mkdir -p /tmp/fa4w && cat /tmp/fa4/fa4p.* | tar x -C /tmp/fa4w && \
  python3 -m pip install -q --no-deps --no-index --break-system-packages /tmp/fa4w/*.whl > $OUT/fa4-install.txt 2>&1
python3 -c "from flash_attn.cute import flash_attn_func" >> $OUT/fa4-install.txt 2>&1 && echo "fa4 importable" >> $OUT/summary.txt
( cd build/x80 && tar xJf head.tar.xz )
B=build/x80/head
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version --format=csv > $OUT/gpu.txt 2>&1
f=$OUT/h200-backward.csv
export ATTN_COMMIT=7f5c347
timeout 200 python3 tools/peers.py --backward --bin $B/00_baseline --sweep sweeps/backward.txt --csv $f > $OUT/log.txt 2>&1
echo "peers exit $? $(( $(date +%s) - t0 )) s" >> $OUT/summary.txt
for v in 08d 08c; do
  timeout 150 $B/08_backward --variant $v --sweep sweeps/backward.txt --no-check --quiet --csv $f >> $OUT/log.txt 2>&1
  echo "$v exit $? $(( $(date +%s) - t0 )) s" >> $OUT/summary.txt
done
xz -9 $OUT/log.txt
