#!/usr/bin/env bash
# The table of lab/lesson07_run.sh ab's CSVs: per shape and step, the speed of a tree against the
# tree before the restructure (old's median time over its; above 1: faster), each tree's medians
# averaged over the repetitions first. 07g is set against old 07g-ov (the same kernel with the pin)
# and against old 07g; alt (another build of the new tree) against old in 07b-07d. Then per step and tree: the lowest and highest ratio, the geometric mean and
# the shapes more than 1% slower.
#
#   lab/ab07_table.sh results/lab/h200-ab07.csv [more CSVs of the same runs]
set -u
[ $# -ge 1 ] || { sed -n '2,/^set -u$/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2; }
cat "$@" | awk -F, '
  !/^#/ && $12 == "ok" { split($1, tv, ":"); k = $4 "," $5 "," $6 "," $7 "," $8 "," $9 "," $10 "," $11
    s[$1, k] += $13; n[$1, k]++; if (!(k in K)) { K[k] = 1; order[++nk] = k } }
  function r(a, b, k) { return (n[a, k] && n[b, k]) ? (s[a, k] / n[a, k]) / (s[b, k] / n[b, k]) : "" }
  END {
    nc = split("new:07a old:07a|new:07b old:07b|new:07c old:07c|nopin:07d old:07d|new:07d old:07d|nopin:07e old:07e|new:07e old:07e|nopin:07f old:07f|new:07f old:07f|new:07g old:07g-ov|new:07g old:07g|alt:07b old:07b|alt:07c old:07c|alt:07d old:07d", C, "|")
    printf "%-30s", "B,Hq,Hkv,N,M,d,causal,dtype"
    for (c = 1; c <= nc; c++) { split(C[c], p, " "); h = p[1] (p[2] ~ /-ov/ ? "/ov" : ""); sub(/:07/, " ", h); printf " %9s", h }
    printf "\n"
    for (i = 1; i <= nk; i++) { k = order[i]; line = sprintf("%-30s", k); any = 0
      for (c = 1; c <= nc; c++) { split(C[c], p, " "); x = r(p[2], p[1], k)
        if (x == "") { line = line sprintf(" %9s", "-"); continue }
        any = 1; line = line sprintf(" %9.3f", x); if (!m[c] || x < lo[c]) lo[c] = x; if (!m[c] || x > hi[c]) hi[c] = x
        lg[c] += log(x); m[c]++; if (x < 0.99) slow[c]++ }
      if (any) print line }
    printf "\n%-30s", "lowest"; for (c = 1; c <= nc; c++) printf " %9s", m[c] ? sprintf("%.3f", lo[c]) : "-"
    printf "\n%-30s", "highest"; for (c = 1; c <= nc; c++) printf " %9s", m[c] ? sprintf("%.3f", hi[c]) : "-"
    printf "\n%-30s", "geometric mean"; for (c = 1; c <= nc; c++) printf " %9s", m[c] ? sprintf("%.3f", exp(lg[c] / m[c])) : "-"
    printf "\n%-30s", "shapes below 0.99"; for (c = 1; c <= nc; c++) printf " %9s", m[c] ? sprintf("%d/%d", slow[c], m[c]) : "-"
    printf "\n" }'
