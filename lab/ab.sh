#!/usr/bin/env bash
# A/B of one rung (AB_BIN, default 06_split_kv) between two source trees, in one run on one GPU: this
# tree and another commit's,
# each built with its own Makefile; then every (tree, variant) runs the sweep REPS times,
# interleaved, so that the ratios come from one run. Every (tree, variant) is first checked against
# the reference on tests/gpu_cases.txt and on the sweep's shapes up to B x M = 131072.
# The GPU machine's copy has no .git: export the other commit here first and carry it,
#
#   rm -rf build/ab-old && mkdir -p build/ab-old && git archive C | tar -x -C build/ab-old
#   (on the GPU machine)  COMMIT=... OLD_COMMIT=C AB_RUNS="old:06 new:06c" lab/ab.sh
#
#   AB_RUNS    tree:variant pairs, run in this order in every repetition (default "old:06 new:06c"):
#              tree "new" is this one, any other name t the tree build/ab-t
#   AB_SWEEP   the shapes (default sweeps/decode.txt); REPS (default 3)
#   AB_BIN     the rung's binary (default 06_split_kv; e.g. AB_BIN=07_fa3_wgmma_tma AB_RUNS="old:07c new:07c"
#              AB_SWEEP=lab/fa3-first.txt)
#   AB_ARGS    flags added to every run (e.g. "--dtype e4m3" for 07g)
#   AB_PREBUILT=1  build nothing: build/bin/$AB_BIN and build/ab-t/build/bin/$AB_BIN were built here and carried
# -> $OUT/ab.csv: the rung's CSV rows, each prefixed with "tree:variant,repetition", after '#' lines
#    naming both commits; $OUT/ab-check.txt; a table of the mean of the medians, new over old, last.
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-build/out}; mkdir -p "$OUT" build/ab
sweep=${AB_SWEEP:-sweeps/decode.txt}; runs=${AB_RUNS:-old:06 new:06c}; rb=${AB_BIN:-06_split_kv}
export ATTN_COMMIT=${COMMIT:-unknown}
if [ "${AB_PREBUILT:-0}" != 1 ]; then
  make -j"$(nproc)" build/bin/$rb > build/ab/new.log 2>&1 || { tail -n 30 build/ab/new.log; exit 1; }   # the rung alone
  for t in $(printf '%s\n' $runs | cut -d: -f1 | sort -u | grep -vx new); do
    make -C build/ab-$t -j"$(nproc)" build/bin/$rb > build/ab/$t.log 2>&1 || { tail -n 30 build/ab/$t.log; exit 1; }
  done
fi
bin() { case $1 in new) echo build/bin/$rb;; *) echo "build/ab-$1/build/bin/$rb";; esac; }
commit() { case $1 in new) echo "$ATTN_COMMIT";; old) echo "${OLD_COMMIT:-unknown}";; *) echo "$1";; esac; }

awk '!/^#/ && NF >= 7 && $1 * $5 <= 131072' "$sweep" > build/ab/check-sweep.txt
for r in $runs; do
  t=${r%%:*} v=${r#*:}
  for cases in tests/gpu_cases.txt build/ab/check-sweep.txt; do
    ATTN_COMMIT=$(commit $t) "$(bin $t)" --variant $v ${AB_ARGS:-} --sweep $cases --no-time --quiet --csv build/ab/c.csv > /dev/null 2>> "$OUT/ab.err"
  done
  echo "check $r: ok=$(grep -c ',ok,' build/ab/c.csv) fail=$(grep -c ',FAIL' build/ab/c.csv)" | tee -a "$OUT/ab-check.txt"
  rm -f build/ab/c.csv
done

out=$OUT/ab.csv
{ echo "# A/B of $rb, $(date -u +%FT%TZ): new = $ATTN_COMMIT, old = ${OLD_COMMIT:-unknown}; $runs; $sweep; REPS=${REPS:-3}"
  echo "# run,rep,rung,B,Hq,Hkv,N,M,d,causal,dtype,status,ms_median,..."; } > "$out"
for rep in $(seq "${REPS:-3}"); do
  for r in $runs; do
    t=${r%%:*} v=${r#*:}
    ATTN_COMMIT=$(commit $t) "$(bin $t)" --variant $v ${AB_ARGS:-} --sweep "$sweep" --csv build/ab/t.csv --quiet --no-check \
        > /dev/null 2>> "$OUT/ab.err"
    [ "$rep$r" = "1${runs%% *}" ] && grep '^#' build/ab/t.csv >> "$out"     # the device, once
    grep -v '^#' build/ab/t.csv | grep -v '^rung' | sed "s/^/$r,$rep,/" >> "$out"
    rm -f build/ab/t.csv
  done
done
# mean of the medians (us) per shape and run; the last column: each run over the first run. A shape
# is the whole line (dtype, B, heads, N, M, d, causal, a paged line's page size), not B x M alone.
awk -F, -v RUNS="$runs" '!/^#/ && $12 == "ok" {
    k = sprintf("%s B%s H%s/%s N%s M%s d%s%s", $11, $4, $5, $6, $7, $8, $9, $10 == 1 ? " c" : "")
    if (match($0, /page=[0-9]+/)) k = k " " substr($0, RSTART, RLENGTH)
    s[k, $1] += $13 * 1000; n[k, $1]++; if (!(k in seen)) { seen[k] = 1; order[++m] = k } }
  END { nr = split(RUNS, r, " "); printf "%-44s", "shape"; for (i = 1; i <= nr; i++) printf " %12s", r[i]; printf "   ratio to %s\n", r[1]
        for (j = 1; j <= m; j++) { k = order[j]; printf "%-44s", k
          for (i = 1; i <= nr; i++) printf " %12.2f", n[k, r[i]] ? s[k, r[i]] / n[k, r[i]] : 0
          for (i = 2; i <= nr; i++) printf "   %.4f", (n[k, r[i]] && n[k, r[1]]) ? (s[k, r[i]] / n[k, r[i]]) / (s[k, r[1]] / n[k, r[1]]) : 0
          printf "\n" } }' "$out" | tee "$OUT/ab-table.txt"
