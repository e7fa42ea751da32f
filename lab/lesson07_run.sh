#!/usr/bin/env bash
# Issue 34's GPU steps for rung 07 in step order, one device call per group of steps:
#
#   lab/lesson07_run.sh build sass stage test      (one call)
#   lab/lesson07_run.sh ab                         (a later call; AB_ORDER=new-first for the second)
#
#   build  make build (this machine's nvcc and cuBLAS)
#   sass   tests/sass_overlap.sh --excerpt on build/bin/07_fa3_wgmma_tma -> $OUT/sass-overlap.txt
#   stage  make stage 7: its output and exit status -> $OUT/stage7.txt
#   test   make test (the CPU tests and the GPU matrix, every variant) -> $OUT/gpu-tests.log
#   ab     the prefill sweep (sweeps/prefill.txt) for 07a-07g, the restructured binary
#          (AB_NEW, default build/bin/07_fa3_wgmma_tma) against the one before the restructure
#          (AB_OLD, default carry07/old07: its 07g and 07g-ov), --no-check (both were checked by
#          the GPU matrix), each (tree, variant) one process over the whole sweep, old then new for
#          each variant (AB_ORDER=new-first: new then old) -> $OUT/ab07.csv (run,rep,<the CSV row>),
#          and a table of new / old per shape and variant -> $OUT/ab07-table.txt
#
# COMMIT (the tree's commit) and OLD_COMMIT name the two trees in the CSV. The summary is printed last.
set -u
OUT=${OUT:-build/out}
case $OUT in /*) ;; *) OUT=$PWD/$OUT ;; esac
cd "$(dirname "$0")/.." || exit 1
mkdir -p "$OUT"
export ATTN_COMMIT=${COMMIT:-unknown}
summary=$OUT/summary.txt
say() { echo "$*" | tee -a "$summary"; }
t0=$(date +%s)
took() { echo "($(($(date +%s) - t0)) s since the start)"; }

for step in "$@"; do
  case $step in
    build)
      make -j"$(nproc)" build > "$OUT/build.log" 2>&1; say "build: exit $? $(took)" ;;
    sass)
      tests/sass_overlap.sh --excerpt build/bin/07_fa3_wgmma_tma > "$OUT/sass-overlap.txt" 2>&1
      say "sass: exit $?, $(grep -c '^ok' "$OUT/sass-overlap.txt") ok, $(grep -c '^FAIL' "$OUT/sass-overlap.txt") FAIL $(took)" ;;
    stage)
      make stage 7 > "$OUT/stage7.txt" 2>&1; rc=$?
      echo "make stage 7: exit $rc" >> "$OUT/stage7.txt"
      say "stage 7: exit $rc, $(grep -c '^ *rung ' "$OUT/stage7.txt") header lines $(took)" ;;
    test)
      set -o pipefail
      make test 2>&1 | tee "$OUT/gpu-tests.log" > /dev/null; rc=$?
      set +o pipefail
      say "test: exit $rc, $(tail -n 1 "$OUT/gpu-tests.log") $(took)" ;;
    ab)
      new=${AB_NEW:-build/bin/07_fa3_wgmma_tma} old=${AB_OLD:-carry07/old07}
      csv=$OUT/ab07.csv rep=${AB_REP:-1}
      [ -s "$csv" ] || { echo "# A/B of rung 07 before and after the restructure: new = $ATTN_COMMIT ($new), old = ${OLD_COMMIT:-unknown} ($old); sweeps/prefill.txt; $(date -u +%FT%TZ)"
                         echo "# run,rep,rung,B,Hq,Hkv,N,M,d,causal,dtype,status,ms_median,..."; } > "$csv"
      for v in 07a 07b 07c 07d 07e 07f 07g 07g-ov; do
        order="old new"; [ "${AB_ORDER:-}" = new-first ] && order="new old"
        for t in $order; do
          [ "$t" = new ] && [ "$v" = 07g-ov ] && continue          # one FP8 step now
          b=$new; c=$ATTN_COMMIT; [ "$t" = old ] && { b=$old; c=${OLD_COMMIT:-unknown}; }
          ATTN_COMMIT=$c "$b" --variant "$v" --sweep sweeps/prefill.txt --no-check --quiet --csv "$OUT/t.csv" \
              > /dev/null 2>> "$OUT/ab07.err"
          grep -q '^# device' "$csv" || grep '^# ' "$OUT/t.csv" >> "$csv"
          grep -v '^#' "$OUT/t.csv" | grep -v '^rung,' | sed "s/^/$t:$v,$rep,/" >> "$csv"
          rm -f "$OUT/t.csv"
        done
        say "ab $v $(took)"
      done
      # new / old per shape and variant (ms_median; 07g against the old 07g-ov, its pinned form, and
      # against the old 07g); the mean over the reps where a shape ran more than once
      awk -F, '!/^#/ && $12 == "ok" { k = $4 "," $5 "," $6 "," $7 "," $8 "," $9 "," $10 "," $11; s[$1, k] += $13; n[$1, k]++; K[k] = 1 }
        END { split("07a 07b 07c 07d 07e 07f", V, " ")
              printf "%-40s", "B,Hq,Hkv,N,M,d,causal,dtype"; for (i = 1; i <= 6; i++) printf " %7s", V[i]; printf " %7s %7s\n", "07g/ov", "07g/g"
              for (k in K) { printf "%-40s", k
                for (i = 1; i <= 6; i++) { a = "old:" V[i]; b = "new:" V[i]
                  if (n[a, k] && n[b, k]) printf " %7.3f", (s[a, k] / n[a, k]) / (s[b, k] / n[b, k]); else printf " %7s", "-" }
                for (j = 1; j <= 2; j++) { a = j == 1 ? "old:07g-ov" : "old:07g"; b = "new:07g"
                  if (n[a, k] && n[b, k]) printf " %7.3f", (s[a, k] / n[a, k]) / (s[b, k] / n[b, k]); else printf " %7s", "-" }
                printf "\n" } }' "$csv" | sort > "$OUT/ab07-table.txt"
      say "ab: speed new / old (old time over new time: above 1 is faster), per shape -> ab07-table.txt" ;;
    *) say "unknown step $step" ;;
  esac
done
cat "$OUT/ab07-table.txt" 2>/dev/null | head -70
echo "== summary"; cat "$summary"
