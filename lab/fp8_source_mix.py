"""The instruction mix of a kernel from Nsight Compute's SASS source page (lab/fwd_source.sh's
*-source.csv.gz): per opcode, the instructions executed and the share of the warp-stall samples.

    python3 lab/fp8_source_mix.py FILE.csv.gz [...]"""
import collections
import csv
import gzip
import re
import sys

for f in sys.argv[1:]:
    r = list(csv.reader(gzip.open(f, "rt")))
    h, rows = r[1], r[2:]                     # row 0 names the kernel
    si, ie, ws = h.index("Source"), h.index("Instructions Executed"), h.index("Warp Stall Sampling (All Samples)")
    n_op, w_op = collections.Counter(), collections.Counter()
    for row in rows:
        if len(row) <= max(si, ie, ws):
            continue
        m = re.match(r"\s*(@!?U?P\w+\s+)?([A-Z0-9_]+)", row[si])
        if m:
            n_op[m.group(2)] += float(row[ie].replace(",", "") or 0)
            w_op[m.group(2)] += float(row[ws].replace(",", "") or 0)
    tot, wtot = sum(n_op.values()), max(sum(w_op.values()), 1)
    print("%s: %.0f instructions, %.0f stall samples" % (f, tot, wtot))
    for op, n in n_op.most_common(24):
        print("  %-10s %12.0f %5.1f%%   stall samples %5.1f%%" % (op, n, 100 * n / tot, 100 * w_op[op] / wtot))
