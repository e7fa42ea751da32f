#!/usr/bin/env bash
# Issue 34's GPU steps for rung 07 in step order, one device call per group of steps:
#
#   lab/lesson07_run.sh build sass stage test      (one call)
#   lab/lesson07_run.sh ab                         (a later call; AB_RUNS, AB_REP)
#
#   build  make build (this machine's nvcc and cuBLAS)
#   sass   tests/sass_overlap.sh --excerpt on build/bin/07_fa3_wgmma_tma -> $OUT/sass-overlap.txt
#   stage  make stage 7: its output and exit status -> $OUT/stage7.txt
#   test   make test (the CPU tests and the GPU matrix, every variant) -> $OUT/gpu-tests.log
#   ab     the prefill sweep (sweeps/prefill.txt), --no-check (every binary passed the GPU matrix),
#          for each tree:variant of AB_RUNS in turn, one process over the whole sweep each: new (AB_NEW,
#          default build/bin/07_fa3_wgmma_tma), old (AB_OLD, default carry07/old07: the tree before
#          the restructure, with 07g and 07g-ov), nopin (AB_NOPIN, default carry07/nopin07: the new
#          tree without 07d's pin), alt (AB_ALT, default carry07/alt07: another
#          build to weigh, ALT_COMMIT names it); tree:variant@FILE runs FILE's shapes instead -> $OUT/ab07.csv (tree:variant,rep,<the CSV row>); AB_REP numbers
#          the repetition. tools: lab/ab07_table.sh reads it
#
# COMMIT (the tree's commit) and OLD_COMMIT name the two trees in the CSV. The summary is printed last.
set -u
. "$(dirname "$0")/steps.sh"
lab_plain_start

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
      csv=$OUT/ab07.csv rep=${AB_REP:-1}
      [ -s "$csv" ] || { echo "# A/B of rung 07 before and after the restructure: new = $ATTN_COMMIT, old = ${OLD_COMMIT:-unknown}, nopin = the new tree without 07d's pin; sweeps/prefill.txt; $(date -u +%FT%TZ)"
                         echo "# run,rep,rung,B,Hq,Hkv,N,M,d,causal,dtype,status,ms_median,..."; } > "$csv"
      for r in ${AB_RUNS:-old:07a new:07a old:07b new:07b old:07c new:07c old:07d new:07d old:07e new:07e old:07f new:07f new:07g old:07g old:07g-ov}; do
        sw=sweeps/prefill.txt; case $r in *@*) sw=${r#*@}; r=${r%@*} ;; esac   # tree:variant@sweep: other shapes
        t=${r%%:*} v=${r#*:}
        case $t in new) b=${AB_NEW:-build/bin/07_fa3_wgmma_tma} c=$ATTN_COMMIT ;;
                   old) b=${AB_OLD:-carry07/old07} c=${OLD_COMMIT:-unknown} ;;
                   nopin) b=${AB_NOPIN:-carry07/nopin07} c=$ATTN_COMMIT-nopin ;;
                   alt) b=${AB_ALT:-carry07/alt07} c=${ALT_COMMIT:-$ATTN_COMMIT-alt} ;;
                   *) say "ab: unknown tree $t"; continue ;; esac
        ATTN_COMMIT=$c "$b" --variant "$v" --sweep "$sw" --no-check --quiet --csv "$OUT/t.csv" \
            > /dev/null 2>> "$OUT/ab07.err"
        grep -q '^# device' "$csv" || grep '^# ' "$OUT/t.csv" >> "$csv"
        grep -v '^#' "$OUT/t.csv" | grep -v '^rung,' | sed "s/^/$t:$v,$rep,/" >> "$csv"
        rm -f "$OUT/t.csv"
        say "ab $r $(took)"
      done ;;
    *) say "unknown step $step" ;;
  esac
done
echo "== summary"; cat "$summary"
