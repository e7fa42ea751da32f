#!/usr/bin/env bash
# Numbers typed into README prose, checked against the committed CSV they come from (issue 23: a
# number in prose is generated, or checked here). Each line of tests/prose_numbers.txt:
#
#   FILE ;; CSV ;; FILTER ;; VALUE ;; FORMAT ;; TEXT
#
# FILTER: column=value (or column>=value, column<=value) pairs that pick the rows of one shape (B Hq
# Hkv N M d causal dtype) of CSV (dtype defaults to f16; dtype=any takes both); a row without a
# shape (a ceiling) is found from every shape. VALUE: T or T/T, optionally times a number (*100),
# where a term T is col[id] (id a row's first column, its rung; col a column of the CSV's header)
# or a number (ms_median[01]/1000), for the one shape FILTER picks; or "min X" / "max X" of such an
# X over every shape it picks, "min% X" / "max% X" for (X - 1) * 100, a ratio as a percentage
# gained, and "count>C X" / "count<C X" for how many of those shapes have X above / below the
# number C. FORMAT: printf's, for the value. TEXT: the words around the number in FILE, with {}
# where it stands. The line passes when FILE holds TEXT with the number printed by FORMAT from the
# CSV. Prints "ok ..." or "FAIL ..." per line; exit 1 on a failure. Needs bash and awk only.
set -u
cd "$(dirname "$0")/.."
spec=${1:-tests/prose_numbers.txt}
pass=0 fail=0

# The number a line asks for, printed by its format; empty if the CSV has no such rows.
value() {   # CSV FILTER VALUE FORMAT
  awk -F, -v flt="$2" -v expr="$3" -v fmt="$4" '
    /^#/ { next }
    !nc { nc = split("B Hq Hkv N M d causal dtype", sh, " "); for (i = 1; i <= NF; i++) col[$i] = i; next }   # the header
    $(col["B"]) == "" { if ($(col["status"]) == "ok") for (c in col) v[c, $1, ""] = $(col[c]); next }   # a ceiling
    { n = split(flt, kv, " "); keep = 1; dt = 0
      for (i = 1; i <= n; i++) { split(kv[i], p, "="); op = substr(p[1], length(p[1]))          # k=v, k>=v or k<=v
        if (op ~ /[<>]/) p[1] = substr(p[1], 1, length(p[1]) - 1); else op = ""
        if (p[1] == "dtype") { dt = 1; if (p[2] == "any") continue }
        x = $(col[p[1]]); if (op == ">" ? x + 0 < p[2] + 0 : op == "<" ? x + 0 > p[2] + 0 : x != p[2]) keep = 0 }
      if (!dt && ("dtype" in col) && $(col["dtype"]) != "f16") keep = 0
      if (!keep || $(col["status"]) != "ok") next
      k = ""; for (i = 1; i <= nc; i++) k = k SUBSEP (sh[i] in col ? $(col[sh[i]]) : "")
      if (!(k in shape)) { shape[k] = 1; keys[++nk] = k }
      for (c in col) v[c, $1, k] = $(col[c]) }
    function term(t, k,   a) { if (t ~ /^[0-9.]+$/) return t + 0                  # a number stands for itself
      if (!match(t, /^[a-z_]+\[[^]]+\]$/)) return ""; split(t, a, /[][]/)
      return ((a[1], a[2], k) in v) ? v[a[1], a[2], k] + 0 : ((a[1], a[2], "") in v) ? v[a[1], a[2], ""] + 0 : "" }
    function val(e, k,   t, n, x, y, m) { m = 1; if (match(e, /\*[0-9.]+$/)) { m = substr(e, RSTART + 1) + 0; e = substr(e, 1, RSTART - 1) }
      n = split(e, t, "/"); x = term(t[1], k); if (x == "") return ""; if (n == 1) return x * m
      y = term(t[2], k); if (y == "" || y == 0) return ""; return x / y * m }
    END { agg = ""; e = expr
          if (match(e, /^((min|max)%?|count[<>][0-9.]+) /)) { agg = substr(e, 1, RLENGTH - 1); e = substr(e, RLENGTH + 1) }
          else if (nk != 1) exit                  # one value needs one shape
          got = 0; if (agg ~ /^count/) { lim = substr(agg, 7) + 0; r = 0 }
          for (i = 1; i <= nk; i++) { x = val(e, keys[i]); if (x == "") continue
            if (agg ~ /^count>/) r += (x > lim); else if (agg ~ /^count</) r += (x < lim)
            else if (!got || (agg ~ /^min/ && x < r) || (agg ~ /^max/ && x > r)) r = x; got = 1 }
          if (!got) exit
          if (agg ~ /%$/) r = (r - 1) * 100
          out = sprintf(fmt, r); if (out ~ /^-0(\.0+)?$/) out = substr(out, 2)   # -0 reads as 0
          printf "%s", out }' "$1"
}

while IFS= read -r line; do
  case $line in ''|'#'*) continue ;; esac
  IFS=$'\x1f' read -r file csv flt expr fmt text <<< "${line// ;; /$'\x1f'}"
  num=$(value "$csv" "$flt" "$expr" "$fmt")
  if [ -z "$num" ]; then fail=$((fail + 1)); echo "FAIL $file: $csv has no rows for $flt ($expr)"; continue; fi
  want=${text//\{\}/$num}
  if grep -qF -- "$want" "$file"; then pass=$((pass + 1)); echo "ok $file: $want"
  else fail=$((fail + 1)); echo "FAIL $file: expected \"$want\" ($expr of $csv at $flt)"; fi
done < "$spec"

# The check can fail: a number one off is not found.
if [ "$spec" = tests/prose_numbers.txt ]; then
  probe="00_baseline/README.md ;; results/h100-decode.csv ;; B=8 Hq=8 Hkv=1 N=1 M=16384 d=128 ;; gbps[00] ;; %.0f ;; {}1 GB/s at B = 8,"
  if ! "$0" <(echo "$probe") >/dev/null; then pass=$((pass + 1)); echo "ok self-check: a number one off is not found"
  else fail=$((fail + 1)); echo "FAIL a number that is not in the README passed"; fi
fi
[ "$fail" -eq 0 ]
