"""What lab/power_probe.sh recorded, one line a run: its median and fastest launch, TFLOP/s, and over
the run's window the busy samples' (power above 200 W) median SM clock and power, the share of them
with the software power cap active (clock-event mask 0x4), and TFLOP/s a GHz of that clock.
A rung's window: the probe's marks; a peer's: from one of its log lines to the next (each is printed
as its timing ends). The results/lab/h200-power-probe*/clocks.py scripts are the ones-off this
generalizes, kept as they ran.

    python3 lab/clocks.py DIR TAG [TAG ...]   -> the table on stdout"""
import csv
import datetime as dt
import lzma
import os
import statistics as st
import sys

PEERS = ('torch-flash', 'torch-cudnn', 'fa4', 'cudnn-fp8')


def when(s):
    return dt.datetime.strptime(s, '%Y/%m/%d %H:%M:%S.%f')


def table(d, tag):
    smi = []
    f = os.path.join(d, 'smi-%s.csv' % tag)
    for r in csv.reader(open(f) if os.path.exists(f) else lzma.open(f + '.xz', 'rt')):   # committed: xz
        if r[0].startswith('timestamp') or len(r) < 6:
            continue
        smi.append((when(r[0].strip()), int(r[1].split()[0]), float(r[3].split()[0]), r[5].strip()))
    rows = [r for r in csv.DictReader(l for l in open(os.path.join(d, 'probe-%s.csv' % tag)) if not l.startswith('#'))
            if r['status'] == 'ok' and r['tflops']]
    marks = [l.split() for l in open(os.path.join(d, 'marks-%s.txt' % tag))]
    day, win, start = marks[0][0], [], None
    for m in marks:
        t = when(m[0] + ' ' + m[1])
        if m[2] == 'start':
            start = t
        elif m[3] == 'peers':
            prev = start
            for l in open(os.path.join(d, 'peers-%s.log' % tag)):
                x = l.split()
                if len(x) > 2 and x[1] in PEERS:
                    t = when(day + ' ' + x[0])
                    if x[-1] == 'ok':
                        win.append((prev, t))
                    prev = t
        elif m[3] == 'rc=0':
            win.append((start, t))
    for (a, b), r in zip(win, rows):
        busy = [x for x in smi if a <= x[0] <= b and x[2] > 200]
        if not busy:
            continue
        clk, tf = st.median(x[1] for x in busy), float(r['tflops'])
        capped = sum(int(x[3], 16) & 4 != 0 for x in busy) / len(busy)
        print('%-12s %-5s %3s %6s %s %9.3f %9.3f %8.1f %6d %6.1f %6.0f%% %9.1f' % (
            r['rung'], r['dtype'], r['d'], r['N'], 'c' if r['causal'] == '1' else '-', float(r['ms_median']),
            float(r['ms_min']), tf, clk, st.median(x[2] for x in busy), 100 * capped, tf / clk * 1000))


print('%-12s %-5s %3s %6s %s %9s %9s %8s %6s %6s %7s %9s' % ('kernel', 'dtype', 'd', 'N', 'c', 'ms med', 'ms min',
                                                            'TFLOP/s', 'MHz', 'W', 'capped', 'TF/s/GHz'))
for tag in sys.argv[2:]:
    table(sys.argv[1], tag)
