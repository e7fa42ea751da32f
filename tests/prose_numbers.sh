#!/usr/bin/env bash
# Numbers typed into README prose, checked against the committed CSV they come from (issue 23: a
# number in prose is generated, or checked here). Each line of tests/prose_numbers.txt:
#
#   FILE ;; CSV ;; FILTER ;; VALUE ;; FORMAT ;; TEXT
#
# FILTER: column=value (or column>=value, column<=value) pairs that pick the rows of one shape (B Hq
# Hkv N M d causal dtype) of CSV (dtype defaults to f16; dtype=any takes every dtype; dtype=mixed does
# too and leaves dtype out of the shape, so that 07f's float16 row and 07g's e4m3 row of one shape
# meet: tflops[07g]/tflops[07f]); a key that is not a
# column is looked up in the row's extra field (planner=auto, page=64; "page=" where it has none); a
# row without a shape (a ceiling) is found from every shape. Two more words: id=KEY makes a row's id
# its first column, a colon and its KEY (06c:64, 06c: where it has none), and "mean" averages the
# rows that share an id and a shape (repetitions; else the last row counts). A CSV without a header
# line has the course's columns (rung,B,...,extra), after run,rep if it has two more (lab's A/Bs); a
# header is a line with a status column or without a number (method,d,N,rmse,rel_l2: every row counts,
# its first column the id). A key of a row's extra field (quant_ms=...) is a column for VALUE too.
# VALUE: T, T/T or T-T, optionally times a number (*100), where a term T is col[id] (id a row's
# first column, its rung; col a column of the CSV's header), col[a|b|c] (the largest of those ids')
# or a number (ms_median[01]/1000), for the one shape FILTER picks; or "min X" / "max X" of such an
# X over every shape it picks, "gmean X" their geometric mean, "min% X" / "max% X" / "gmean% X" for
# (X - 1) * 100, a ratio as a percentage gained, "min-% X" / "max-% X" for (1 - X) * 100, one lost
# (min-%: the most), and "count>C X" / "count<C X" for how many of those shapes have X above /
# below the number C. FORMAT: printf's, for the value. TEXT: the words
# around the number in FILE, with {} where it stands. The line passes when FILE holds TEXT with the
# number printed by FORMAT from the CSV. Prints "ok ..." or "FAIL ..." per line; exit 1 on a
# failure. Needs bash and awk only.
set -u
cd "$(dirname "$0")/.."
spec=${1:-tests/prose_numbers.txt}
pass=0 fail=0

# The number a line asks for, printed by its format; empty if the CSV has no such rows.
value() {   # CSV FILTER VALUE FORMAT
  awk -F, -v flt="$2" -v expr="$3" -v fmt="$4" '
    /^#/ { next }
    !nc { nc = split("B Hq Hkv N M d causal dtype", sh, " ")
          if (/(^|,)status,/ || !/(^|,)[-+.0-9e]+(,|$)/) { for (i = 1; i <= NF; i++) col[$i] = i; next }      # the header
          n = split((NF > 22 ? "run rep " : "") "rung B Hq Hkv N M d causal dtype status ms_median ms_min ms_max tflops gbps rel_err max_abs_err lse_err workspace_bytes device commit extra", a, " ")
          for (i = 1; i <= n; i++) col[a[i]] = i }                                              # none: the usual columns
    function get(c,   x) { if (c in col) return $(col[c]); x = ";" (("extra" in col) ? $(col["extra"]) : "")
      return match(x, ";" c "=[^;]*") ? substr(x, RSTART + length(c) + 2, RLENGTH - length(c) - 2) : "" }
    ("B" in col) && $(col["B"]) == "" { if ($(col["status"]) == "ok") for (c in col) v[c, $1, ""] = $(col[c]); next }   # a ceiling
    { n = split(flt, kv, " "); keep = 1; dt = 0; idk = ""; mean = 0
      for (i = 1; i <= n; i++) { if (kv[i] == "mean") { mean = 1; continue }
        split(kv[i], p, "="); op = substr(p[1], length(p[1]))                                  # k=v, k>=v or k<=v
        if (op ~ /[<>]/) p[1] = substr(p[1], 1, length(p[1]) - 1); else op = ""
        if (p[1] == "id") { idk = p[2]; continue }
        if (p[1] == "dtype") { dt = 1; if (p[2] == "any") continue; if (p[2] == "mixed") { dt = 2; continue } }
        x = get(p[1]); if (op == ">" ? x + 0 < p[2] + 0 : op == "<" ? x + 0 > p[2] + 0 : x != p[2]) keep = 0 }
      if (!dt && ("dtype" in col) && $(col["dtype"]) != "f16") keep = 0
      if (!keep || (("status" in col) && $(col["status"]) != "ok")) next
      k = ""; for (i = 1; i <= nc; i++) k = k SUBSEP (sh[i] in col && !(dt == 2 && sh[i] == "dtype") ? $(col[sh[i]]) : "")
      if (!(k in shape)) { shape[k] = 1; keys[++nk] = k }
      id = $1 (idk != "" ? ":" get(idk) : "")
      for (c in col) if (mean) { s[c, id, k] += $(col[c]); r[c, id, k]++; v[c, id, k] = s[c, id, k] / r[c, id, k] } else v[c, id, k] = $(col[c])
      if ("extra" in col && !mean) { n = split($(col["extra"]), xs, ";")                          # its extra keys
        for (i = 1; i <= n; i++) if ((j = index(xs[i], "=")) > 1 && !(substr(xs[i], 1, j - 1) in col)) v[substr(xs[i], 1, j - 1), id, k] = substr(xs[i], j + 1) } }
    function term(t, k,   a, id, n, i, x, y) { if (t ~ /^[0-9.]+$/) return t + 0              # a number stands for itself
      if (!match(t, /^[a-z_]+\[[^]]+\]$/)) return ""; split(t, a, /[][]/); n = split(a[2], id, "|"); y = ""
      for (i = 1; i <= n; i++) { x = ((a[1], id[i], k) in v) ? v[a[1], id[i], k] + 0 : ((a[1], id[i], "") in v) ? v[a[1], id[i], ""] + 0 : ""
        if (x != "" && (y == "" || x > y)) y = x }                                             # a|b: the largest
      return y }
    function val(e, k,   t, n, x, y, m) { m = 1; if (match(e, /\*[0-9.]+$/)) { m = substr(e, RSTART + 1) + 0; e = substr(e, 1, RSTART - 1) }
      if (match(e, /\]-/)) { t[1] = substr(e, 1, RSTART); t[2] = substr(e, RSTART + 2); n = 0 } else n = split(e, t, "/")
      x = term(t[1], k); if (x == "") return ""; if (n == 1) return x * m
      y = term(t[2], k); if (y == "") return ""; if (!n) return (x - y) * m; if (y == 0) return ""; return x / y * m }
    END { agg = ""; e = expr
          if (match(e, /^((min|max|gmean)-?%?|count[<>][0-9.]+) /)) { agg = substr(e, 1, RLENGTH - 1); e = substr(e, RLENGTH + 1) }
          else if (nk != 1) exit                  # one value needs one shape
          got = 0; res = 0; if (agg ~ /^count/) lim = substr(agg, 7) + 0
          for (i = 1; i <= nk; i++) { x = val(e, keys[i]); if (x == "") continue
            if (agg ~ /^count>/) res += (x > lim); else if (agg ~ /^count</) res += (x < lim); else if (agg ~ /^gmean/) res += log(x)
            else if (!got || (agg ~ /^min/ && x < res) || (agg ~ /^max/ && x > res)) res = x; got++ }
          if (!got) exit
          if (agg ~ /^gmean/) res = exp(res / got)
          if (agg ~ /-%$/) res = (1 - res) * 100; else if (agg ~ /%$/) res = (res - 1) * 100
          out = sprintf(fmt, res); if (out ~ /^-0(\.0+)?$/) out = substr(out, 2)   # -0 reads as 0
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
  probe="00_baseline/README.md ;; results/h100-tour.csv ;; B=4 Hq=16 N=4096 d=128 causal=0 ;; ms_median[00] ;; %.3g ;; Prefill takes {}1 ms,"
  if ! "$0" <(echo "$probe") >/dev/null; then pass=$((pass + 1)); echo "ok self-check: a number one off is not found"
  else fail=$((fail + 1)); echo "FAIL a number that is not in the README passed"; fi
fi
[ "$fail" -eq 0 ]
