#!/usr/bin/env bash
# Does tools/peers.py time FA4's host-side dispatch? The peers on a sweep without and with
# --gpu-wait-us (a GPU-side wait before each timed call's first event), in turn, REPS times, one run:
#
#   OUT=<dir> [REPS=2] [WAIT_US=1000] [AB_SWEEP=build/x80/fa4-wait.txt] lab/fa4_wait_ab.sh
#
# -> $OUT/none.csv and $OUT/wait.csv (the peers' rows, one block per repetition); then, per rung and
# shape, the median over the repetitions of ms_median without the wait over ms_median with it.
set -u
cd "$(dirname "$0")/../.." || exit 1
OUT=${OUT:-build/out}; mkdir -p "$OUT"
sweep=${AB_SWEEP:-build/x80/fa4-wait.txt}
for rep in $(seq "${REPS:-2}"); do
  python3 build/x80/peers_wait.py --bin build/x80/main/08_backward --sweep "$sweep" --csv "$OUT/none.csv" > /dev/null 2>> "$OUT/err.txt"
  python3 build/x80/peers_wait.py --bin build/x80/main/08_backward --sweep "$sweep" --csv "$OUT/wait.csv" --gpu-wait-us "${WAIT_US:-1000}" > /dev/null 2>> "$OUT/err.txt"
done
python3 - "$OUT/none.csv" "$OUT/wait.csv" <<'P'
import csv, statistics, sys
def load(f):
    rows = [l for l in open(f) if not l.startswith('#')]
    d = {}
    for r in csv.DictReader(rows):
        if r.get('status') == 'ok' and r.get('ms_median'):
            d.setdefault((r['rung'], r['dtype'], r['d'], r['N'], r['causal']), []).append(float(r['ms_median']))
    return d
a, b = load(sys.argv[1]), load(sys.argv[2])
for k in sorted(a):
    if k in b:
        print("%-12s %-5s d=%-3s N=%-5s c=%s  no wait / wait: %.3f" % (k + (statistics.median(a[k]) / statistics.median(b[k]),)))
P
