#!/usr/bin/env bash
# Clocks and power while 08d and the peers run the backward pass back to back (issue 36: 08d's
# median is 10-13% above its fastest launch at d = 128 from N = 4096, FA4's 2-4%).
#   OUT=<dir> [PEERS=1] [TAG=x] build/x80/probe.sh
set -u
OUT=${OUT:?}; TAG=${TAG:-a}
( cd build/x80 && { [ -d main ] || tar xJf bins.tar.xz; } )
M=build/x80/main/08_backward
f=clocks_event_reasons.active
nvidia-smi --query-gpu=$f --format=csv > /dev/null 2>&1 || f=clocks_throttle_reasons.active
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,$f --format=csv -lms 20 > $OUT/smi-$TAG.csv 2>&1 &
SMI=$!
mark() { echo "$(date +%Y/%m/%d\ %H:%M:%S.%3N) $*" >> $OUT/marks-$TAG.txt; }
sleep 2
printf '2 16 16 8192 8192 128 0\n1 16 16 16384 16384 128 0\n' > $OUT/probe-sweep.txt
if [ "${ONLY_PEERS:-0}" = 0 ]; then mark start 08d 8192
$M --variant 08d --b 2 --h 16 --n 8192 --d 128 --runs 1000 --no-check --quiet --csv $OUT/probe-$TAG.csv
mark end 08d 8192
sleep 5
mark start 08d 16384
$M --variant 08d --b 1 --h 16 --n 16384 --d 128 --runs 500 --no-check --quiet --csv $OUT/probe-$TAG.csv
mark end 08d 16384; fi
sleep 5
if [ "${PEERS:-1}" = 1 ]; then
  mark start peers
  python3 tools/peers.py --bin $M --backward --sweep $OUT/probe-sweep.txt --runs 500 --csv $OUT/probe-$TAG.csv 2>&1 | while IFS= read -r l; do echo "$(date +%H:%M:%S.%3N) $l"; done > $OUT/peers-$TAG.log
  mark end peers
fi
sleep 1; kill $SMI
