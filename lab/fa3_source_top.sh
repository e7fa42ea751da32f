#!/usr/bin/env bash
# The instructions where one rung-07 kernel's warps wait most, from the source page lab/fa3_source.sh
# brings back (ncu's warp-stall samples per SASS instruction): lab/fa3_source_top.sh FILE.csv.gz [N]
# Per instruction: its samples, its two largest stall reasons, how many times warps executed it
# (the consumer warps run a work tile's code 8 times as often as the producer's one warp), its SASS,
# and, for the branch that loops on an mbarrier's try_wait, the barrier's shared-memory operand.
set -eu
file=${1:?usage: lab/fa3_source_top.sh FILE.csv.gz [N]} top=${2:-24}
zcat "$file" | python3 -c '
import csv, sys
top = int(sys.argv[1])
rows = list(csv.reader(sys.stdin))
kernel, head, body = rows[0], rows[1], rows[2:]
col = {n: i for i, n in enumerate(head)}
reasons = [n for n in head if n.startswith("stall_") and "(Not" not in n]
num = lambda x: int(x.replace(",", "") or 0)
samples = [num(r[col["Warp Stall Sampling (All Samples)"]]) for r in body]
total = sum(samples)
print("%s\n%d warp-stall samples over %d SASS instructions; by reason:" % (kernel[1], total, len(body)))
by = sorted(((sum(num(r[col[n]]) for r in body), n) for n in reasons), reverse=True)
print("  " + ", ".join("%s %d" % (n[6:], s) for s, n in by if s))
print("\n%4s %6s %5s  %-34s %8s  %s" % ("rank", "samples", "%", "largest reasons", "executed", "SASS (mbarrier waited on)"))
order = sorted(range(len(body)), key=lambda k: -samples[k])[:top]
for rank, k in enumerate(order, 1):
    r = body[k]
    rs = sorted(((num(r[col[n]]), n[6:]) for n in reasons), reverse=True)[:2]
    sass = r[col["Source"]].strip()
    bar = ""
    if "BRA" in sass:
        for j in range(k - 1, max(k - 8, -1), -1):
            s = body[j][col["Source"]]
            if "TRYWAIT" in s:
                bar = "  (" + s.split("[")[1].split("]")[0] + ")"
                break
    print("%4d %6d %5.1f  %-34s %8s  %s%s" % (rank, samples[k], 100.0 * samples[k] / total,
          " ".join("%s %d" % (n, s) for s, n in rs if s), r[col["Instructions Executed"]], sass[:60], bar))
' "$top"
