#!/usr/bin/env bash
# Issue 38, multi-head decode at d = 96: rung 06's tile of 96 on the GPU machine in one call, over
# binaries built elsewhere (build/bin; gzipped ones in build/carry/ are unpacked into build/bin, and
# build/carry/old/06_split_kv.gz, the tree before the tile of 96, into build/old/: out of build/bin,
# which the ladder runs whole).
#
#   lab/mha06.sh matrix sanitize ab ladder
#
#   matrix    rung 06's GPU matrix (tests/gpu_cases.txt): each variant, under each planner and with
#             64-key blocks (as make test runs it), the 15 runs side by side (they are checks, not
#             timings) -> $OUT/matrix.txt
#   sanitize  compute-sanitizer memcheck, racecheck and synccheck on the tile of 96: 06a and 06c on
#             lab/mha06-san.txt (multi-head, contiguous and paged, padded d, varlen, causal Nq > 1)
#             -> $OUT/sanitize.txt
#   ab        06c of build/old/06_split_kv (the tree before the tile of 96) against this tree's, and
#             any other build/<name>/06_split_kv carried (a lab experiment), on the d = 96 lines of
#             sweeps/decode.txt, interleaved, REPS times (default 1) -> $OUT/ab.csv
#   ladder    SWEEPS=decode RUNGS="06 peers floor" tools/ladder.sh: the decode sweep with the ceilings,
#             the read floor and PyTorch's back ends -> results/<gpu>-decode.csv, then
#             lab/decode38.sh's table (issue 38's two targets) -> $OUT/ladder.txt
# Set COMMIT to the commit being measured (the tree here has no .git).
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-build/out}
mkdir -p "$OUT" build/bin build/old build/test results
export ATTN_COMMIT=${COMMIT:-unknown}
for z in build/carry/*.gz build/carry/*/*.gz; do
  [ -f "$z" ] || continue
  dst=build/bin; case $z in build/carry/*/*) dst=build/$(basename "$(dirname "$z")") ;; esac
  f=$dst/$(basename "$z" .gz)
  [ "$f" -nt "$z" ] && continue         # unpacked by an earlier invocation (two may run side by side)
  mkdir -p "$dst" && gunzip -c "$z" > "$f.tmp" && chmod +x "$f.tmp" && mv "$f.tmp" "$f"
done
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
B=build/bin/06_split_kv
for step in "$@"; do
  t0=$SECONDS
  case $step in
    matrix)
      cases=$(grep -cv '^\s*\(#\|$\)' tests/gpu_cases.txt)
      for v in 06a 06b 06c; do
        for x in default fa greedy balanced block64; do
          case $x in
            default) a=() ;;
            block64) a=(--kv-block 64) ;;
            *)       a=(--planner "$x") ;;
          esac
          OMP_NUM_THREADS=2 "$B" --variant $v --sweep tests/gpu_cases.txt --no-time --quiet \
              --csv build/test/m-$v-$x.csv "${a[@]}" > build/test/m-$v-$x.log 2>&1 &
        done
      done
      wait
      for f in build/test/m-*.csv; do
        awk -F, -v f="$(basename "$f" .csv)" -v n="$cases" '/^#/ || $1 == "rung" { next }
          $10 == "ok" { p++ } $10 ~ /^FAIL/ { bad++; print "FAIL " f ": " $0 } $10 ~ /^unsupported/ { s++ }
          END { printf "%-16s %3d passed, %d failed, %d refused, %d never reported\n", f, p, bad, s, n - p - bad - s }' "$f"
      done | tee "$OUT/matrix.txt"
      ;;
    sanitize)
      : > "$OUT/sanitize.txt"
      for v in 06a 06c; do
        for tool in memcheck racecheck synccheck; do
          compute-sanitizer --tool $tool --error-exitcode 9 "$B" --variant $v --sweep lab/mha06-san.txt \
              --no-time --quiet > build/test/san.log 2>&1
          rc=$?
          case $rc in 0) r=clean;; 9) r=ERRORS;; *) r="exit $rc";; esac
          echo "sanitize $v $tool: $r ($(grep -c 'ERROR SUMMARY: 0' build/test/san.log) launches' summaries clean; $(grep 'ERROR SUMMARY' build/test/san.log | sort | uniq -c | tr '\n' ' '))" | tee -a "$OUT/sanitize.txt"
          [ $rc -eq 0 ] || tail -n 30 build/test/san.log >> "$OUT/sanitize.txt"
        done
      done
      ;;
    ab)
      grep -E '^[0-9]+ +32 +32 .* 96 ' sweeps/decode.txt > build/test/ab.txt
      rm -f "$OUT/ab.csv"
      ts="old new"; for x in build/*/06_split_kv; do case $x in build/bin/*|build/old/*) ;; *) ts="$ts $(basename "$(dirname "$x")")" ;; esac; done
      rm -f build/test/ab-*.csv
      for rep in $(seq "${REPS:-1}"); do
        for t in $ts; do
          bin=build/$t/06_split_kv; [ $t = new ] && bin=build/bin/06_split_kv
          $bin --variant 06c --sweep build/test/ab.txt --csv build/test/ab-$t.csv --quiet > /dev/null 2>&1 \
            || echo "   $t exit $?"
        done
      done
      for t in $ts; do
        sed "s/^06c,/06c-$t,/" build/test/ab-$t.csv | grep -v '^#\|^rung' >> "$OUT/ab.csv"
      done
      awk -F, '{ printf "%-16s B=%-3s M=%-6s %-24s %s us %s\n", $1, $2, $6, $22, $11 * 1000, $10 }' "$OUT/ab.csv"
      ;;
    ladder)
      SWEEPS=decode RUNGS="06 peers floor" tools/ladder.sh > "$OUT/ladder-log.txt" 2>&1
      echo "ladder exit $?"
      gpu=$(build/bin/00_baseline --probe | cut -d' ' -f1)
      cp "results/$gpu-decode.csv" "$OUT/"
      lab/decode38.sh "results/$gpu-decode.csv" | tee "$OUT/ladder.txt"
      ;;
    *) echo "unknown step $step"; exit 2 ;;
  esac
  echo "== $step: $((SECONDS - t0)) s"
done
