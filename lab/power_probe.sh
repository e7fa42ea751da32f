#!/usr/bin/env bash
# Clocks, power and the power-cap flag while rungs and peers run one shape after another, each many
# launches back to back (issues 36 and 38: at long shapes every fast kernel runs at the GPU's power
# limit, so a sweep's median is partly the power state; sustained runs compare kernels at the cap).
#
#   OUT=<dir> TAG=<name> lab/power_probe.sh RUNS_FILE [PEER_SWEEP [peers.py flags ...]]
#
# RUNS_FILE: one run a line, "BINARY ARGS ..." (e.g. build/bin/08_backward --variant 08d --b 2 --h 16
# --n 8192 --d 128 --causal --runs 1000); each runs with --no-check --quiet --csv $OUT/probe-TAG.csv,
# four seconds apart. Then, with PEER_SWEEP, tools/peers.py over it with the flags given (--runs,
# --backward, --bin), its log lines stamped as they come. nvidia-smi samples the SM clock, the power,
# the temperature and the clock-event reasons every 20 ms into $OUT/smi-TAG.csv, and each run's start
# and end go to $OUT/marks-TAG.txt; lab/clocks.py reads the four files into one line a run.
set -u
OUT=${OUT:?OUT=<dir>}; TAG=${TAG:?TAG=<name>}
runs=${1:?usage: lab/power_probe.sh RUNS_FILE [PEER_SWEEP [peers.py flags ...]]}; shift
[ -r "$runs" ] || { echo "power_probe.sh: cannot read the runs file $runs" >&2; exit 2; }
f=clocks_event_reasons.active
nvidia-smi --query-gpu=$f --format=csv > /dev/null 2>&1 || f=clocks_throttle_reasons.active
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,$f --format=csv -lms 20 > "$OUT/smi-$TAG.csv" 2>&1 &
SMI=$!
mark() { echo "$(date +%Y/%m/%d\ %H:%M:%S.%3N) $*" >> "$OUT/marks-$TAG.txt"; }
sleep 2
while read -r -a cmd; do
  [ ${#cmd[@]} -eq 0 ] && continue; case ${cmd[0]} in \#*) continue ;; esac
  mark start "${cmd[@]}"
  "${cmd[@]}" --no-check --quiet --csv "$OUT/probe-$TAG.csv" > /dev/null 2>> "$OUT/errors-$TAG.txt"
  mark end rc=$?
  sleep 4
done < "$runs"
if [ $# -gt 0 ]; then
  sweep=$1; shift
  mark start peers
  python3 tools/peers.py --sweep "$sweep" "$@" --csv "$OUT/probe-$TAG.csv" 2>&1 |
    while IFS= read -r l; do echo "$(date +%H:%M:%S.%3N) $l"; done > "$OUT/peers-$TAG.log"
  mark end peers
fi
sleep 1; kill $SMI
