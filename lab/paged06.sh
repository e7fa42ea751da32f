#!/usr/bin/env bash
# Rung 06 on a paged KV cache against contiguous K and V, in one run on one GPU: the measurement
# that 06_split_kv/NOTES.md ("A paged KV cache") predicts; the run is results/lab/h100-paged06.csv.
#
#   lab/paged06.sh [CSV]             run, then the table (CSV default: $OUT/paged06.csv)
#   lab/paged06.sh --table CSV       the table of a CSV already made
#
#   PAGED_VARIANTS  the variants (default 06c)
#   PAGED_SIZES     page sizes, 0 = contiguous (default "0 16 64 256")
#   PAGED_SWEEP     the shapes (default sweeps/decode.txt)
#   REPS            repetitions (default 2): every (variant, size) runs the sweep once per
#                   repetition, interleaved, so that the ratios come from one run
#
# Every run checks each shape against the float64 reference as it goes (a FAIL row is counted and
# printed). The table: per shape and variant, the mean over the repetitions of each size's median
# (µs), and each paged size over contiguous. Rows are told apart by the extra field's page=P.
set -u
cd "$(dirname "$0")/.."
table() {
  awk -F, '
    /^#/ || $1 == "rung" { next }
    $10 != "ok" { if ($10 ~ /^FAIL/) { bad++; print "FAIL " $1 " B=" $2 " M=" $6 ": " $10 }; next }
    {
      P = 0; if (match($22, /page=[0-9]+/)) P = substr($22, RSTART + 5, RLENGTH - 5) + 0
      key = $1 SUBSEP $2 SUBSEP $6
      if (!(key in seen)) { seen[key] = 1; order[++n] = key }
      if (!(P in havep)) { havep[P] = 1; sizes[++ns] = P }
      sum[key, P] += $11 * 1000; cnt[key, P]++
    }
    END {
      for (i = 2; i <= ns; i++) for (j = i; j > 1 && sizes[j] < sizes[j - 1]; j--) { t = sizes[j]; sizes[j] = sizes[j - 1]; sizes[j - 1] = t }
      printf "%-5s %5s %6s", "rung", "B", "M"
      for (s = 1; s <= ns; s++) printf " %9s", sizes[s] ? "P=" sizes[s] : "contig"
      for (s = 1; s <= ns; s++) if (sizes[s]) printf " %7s", "P=" sizes[s] "/c"
      printf "\n"
      for (i = 1; i <= n; i++) {
        split(order[i], f, SUBSEP)
        printf "%-5s %5d %6d", f[1], f[2], f[3]
        for (s = 1; s <= ns; s++) {
          k = order[i] SUBSEP sizes[s]
          if (cnt[k]) printf " %9.2f", sum[k] / cnt[k]; else printf " %9s", "-"
        }
        c = order[i] SUBSEP 0
        for (s = 1; s <= ns; s++) {
          if (!sizes[s]) continue
          k = order[i] SUBSEP sizes[s]
          if (cnt[k] && cnt[c]) printf " %7.3f", (sum[k] / cnt[k]) / (sum[c] / cnt[c]); else printf " %7s", "-"
        }
        printf "\n"
      }
      if (bad) { printf "%d rows FAILED the check\n", bad; exit 1 }
    }' "$1"
}
if [ "${1:-}" = --table ]; then table "$2"; exit; fi

OUT=${OUT:-build/out}; mkdir -p "$OUT"
csv=${1:-$OUT/paged06.csv}
rm -f "$csv"
sweep=${PAGED_SWEEP:-sweeps/decode.txt}
for rep in $(seq "${REPS:-2}"); do
  for v in ${PAGED_VARIANTS:-06c}; do
    for P in ${PAGED_SIZES:-0 16 64 256}; do
      echo "== rep $rep $v --page-size $P: $sweep" >&2
      timeout 100 build/bin/06_split_kv --variant "$v" --page-size "$P" --sweep "$sweep" --csv "$csv" --quiet > /dev/null \
        || echo "   exit $? ($v --page-size $P, rep $rep)" >&2
    done
  done
done
table "$csv"
