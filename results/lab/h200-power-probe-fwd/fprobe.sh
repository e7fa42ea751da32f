#!/usr/bin/env bash
# Clocks and power while 07f, 07g and the peers run the forward pass back to back (issue 38's long
# shapes: d = 128 16-bit and FP8, d = 64), as probe.sh does for the backward.
#   OUT=<dir> [PART=rungs|peers] build/x80/fprobe.sh
set -u
OUT=${OUT:?}; TAG=f${PART:-rungs}
B=build/x80/f/07_fa3_wgmma_tma
( cd build/x80 && { [ -x $PWD/f/07_fa3_wgmma_tma ] || tar xJf f07.tar.xz; } )
f=clocks_event_reasons.active
nvidia-smi --query-gpu=$f --format=csv > /dev/null 2>&1 || f=clocks_throttle_reasons.active
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,$f --format=csv -lms 20 > $OUT/smi-$TAG.csv 2>&1 &
SMI=$!
mark() { echo "$(date +%Y/%m/%d\ %H:%M:%S.%3N) $*" >> $OUT/marks-$TAG.txt; }
printf '1 16 16 16384 16384 128 0\n1 16 16 16384 16384 128 0 dtype=e4m3\n1 32 32 16384 16384 64 0\n2 16 16 8192 8192 128 0 dtype=e4m3\n' > $OUT/fprobe-sweep.txt
sleep 2
if [ "${PART:-rungs}" = fp8 ]; then
  printf '1 16 16 16384 16384 128 0 dtype=e4m3\n2 16 16 8192 8192 128 0 dtype=e4m3\n' > $OUT/fp8-sweep.txt
  python3 -c 'import torch, cudnn; print("cudnn", cudnn.backend_version())' > $OUT/cudnn-import.txt 2>&1
  mark start peers
  python3 tools/peers.py --bin $B --sweep $OUT/fp8-sweep.txt --runs 1500 --csv $OUT/fprobe-$TAG.csv 2>&1 | while IFS= read -r l; do echo "$(date +%H:%M:%S.%3N) $l"; done > $OUT/peers-$TAG.log
  mark end peers
  sleep 4
  for a in "--b 1 --n 16384" "--b 2 --n 8192"; do
    mark start 07g $a
    $B --variant 07g --d 128 --h 16 --dtype e4m3 $a --runs 1500 --no-check --quiet --csv $OUT/fprobe-$TAG.csv
    mark end 07g $a
    sleep 4
  done
elif [ "${PART:-rungs}" = rungs ]; then
  for a in "07f --d 128 --h 16" "07g --d 128 --h 16 --dtype e4m3" "07f --d 64 --h 32" "07g --d 128 --h 16 --dtype e4m3 --b 2 --n 8192"; do
    set -- $a; v=$1; shift
    mark start $v "$@"
    $B --variant $v --b 1 --n 16384 "$@" --runs 1500 --no-check --quiet --csv $OUT/fprobe-$TAG.csv
    mark end $v "$@"
    sleep 4
  done
else
  mark start peers
  python3 tools/peers.py --bin $B --sweep $OUT/fprobe-sweep.txt --runs 1500 --csv $OUT/fprobe-$TAG.csv 2>&1 | while IFS= read -r l; do echo "$(date +%H:%M:%S.%3N) $l"; done > $OUT/peers-$TAG.log
  mark end peers
fi
sleep 1; kill $SMI
