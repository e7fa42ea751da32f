#!/usr/bin/env bash
# A/B of rung 08 builds on the GPU, in one device call (branch work: issue 36). Everything under $OUT.
#
#   AB_BINS="main:<binary> new:<binary> ..." lab/bwd_ab.sh [matrix] [ab]   (binaries built here, carried in an ignored folder)
#
#   matrix  each build but the first: 08c and 08d on every line of tests/gpu_cases.txt (--no-time, as
#           make test runs it) -> $OUT/matrix-<name>.csv; counts ok, FAIL and refused
#   ab      every build, 08c and 08d, over AB_SWEEP (default: sweeps/backward.txt's N = 2048 and 8192 lines at
#           d = 64, 96 and 256, float16), --no-check, in the order of AB_BINS and back, AB_REP times (default
#           1) -> $OUT/ab.csv (name,rep,<the CSV row>); then per shape the TFLOP/s of each build
#           (the mean over its processes) and its time against the first build's. Both steps with four
#           builds take more than one call's 600 s: run matrix and ab in separate calls
#   AB_VARIANTS (default "08c 08d"): the steps both steps run; AB_CAP (default 240): seconds a matrix
#   process may take, a timed process half of it
set -u
OUT=${OUT:-build/out}
case $OUT in /*) ;; *) OUT=$PWD/$OUT ;; esac
cd "$(dirname "$0")/.." || exit 1
mkdir -p "$OUT"
read -ra bins <<< "${AB_BINS:?AB_BINS=\"name:binary ...\"}"
say() { echo "$*" | tee -a "$OUT/summary.txt"; }
for step in ${*:-matrix ab}; do
  case $step in
    matrix)
      for nb in "${bins[@]:1}"; do n=${nb%%:*} b=${nb#*:}
        for v in ${AB_VARIANTS:-08c 08d}; do
          timeout ${AB_CAP:-240} "$b" --variant $v --sweep tests/gpu_cases.txt --no-time --quiet --csv "$OUT/matrix-$n-$v.csv" > /dev/null 2>&1
          say "matrix $n $v: exit $?, ok $(awk -F, '$10 == "ok"' "$OUT/matrix-$n-$v.csv" | wc -l)," \
              "FAIL $(awk -F, '$10 ~ /^FAIL/' "$OUT/matrix-$n-$v.csv" | wc -l), refused $(awk -F, '$10 ~ /^unsupported/' "$OUT/matrix-$n-$v.csv" | wc -l)"
          awk -F, '$10 ~ /^FAIL/' "$OUT/matrix-$n-$v.csv" | cut -c1-200 | head -5 | tee -a "$OUT/summary.txt"
        done
      done ;;
    ab)
      sw=${AB_SWEEP:-$OUT/ab-sweep.txt}
      [ -n "${AB_SWEEP:-}" ] || grep -v '^#' sweeps/backward.txt | awk '($4 == 2048 || $4 == 8192) && ($6 == 64 || $6 == 96 || $6 == 256) && NF == 7' > "$sw"
      order=("${bins[@]}"); for ((i = ${#bins[@]} - 1; i >= 0; i--)); do order+=("${bins[$i]}"); done
      for ((r = 1; r <= ${AB_REP:-1}; r++)); do
        for nb in "${order[@]}"; do n=${nb%%:*} b=${nb#*:}
          for v in ${AB_VARIANTS:-08c 08d}; do
            ATTN_COMMIT=$n timeout $((${AB_CAP:-240} / 2)) "$b" --variant $v --sweep "$sw" --no-check --quiet --csv "$OUT/t.csv" > /dev/null 2>&1
            grep -v '^#' "$OUT/t.csv" | grep -v '^rung,' | sed "s/^/$n,$r,/" >> "$OUT/ab.csv"; rm -f "$OUT/t.csv"
          done
        done
      done
      first=${bins[0]%%:*}
      awk -F, -v F="$first" '{ k = $3 " d=" $9 " N=" $7 (($10 == 1) ? " causal" : ""); s[$1, k] += $16; t[$1, k] += $13; n[$1, k]++
                               if (!(k in K)) { K[k] = 1; o[++m] = k } if (!($1 in B)) { B[$1] = 1; nb[++q] = $1 } }
        END { for (i = 1; i <= m; i++) { k = o[i]; line = sprintf("%-28s", k)
                for (j = 1; j <= q; j++) { b = nb[j]; if (n[b, k]) line = line sprintf("  %s %.0f", b, s[b, k] / n[b, k])
                  if (b != F && n[b, k] && n[F, k]) line = line sprintf(" (%.3fx)", (t[F, k] / n[F, k]) / (t[b, k] / n[b, k])) }
                print line } }' "$OUT/ab.csv" | tee -a "$OUT/summary.txt" ;;
    *) say "unknown step $step" ;;
  esac
done
