#!/usr/bin/env bash
# Rung 07's FP8 step (07g) on the GPU in one device call (issue 24): build there, then the steps
# asked for (all six, in this order, when none is named), logs and CSVs under $OUT.
#
#   lab/fp8_run.sh [build] [matrix] [sanitize] [accuracy] [timing] [ncu]
#
#   build     make build (the machine's nvcc): about 2 minutes
#   matrix    07g (and 07f, whose PTX 07g's hooks left unchanged) on every line of tests/gpu_cases.txt,
#             --no-time, as make test runs them: 07g must pass every dtype=e4m3 line and refuse every
#             other with a reason; 07f the reverse -> $OUT/fp8-matrix-07g.csv, -07f.csv, counts in the
#             summary. A FAIL here is the first thing to look at (07_fa3_wgmma_tma/README.md, 07g,
#             "If it fails")
#   sanitize  compute-sanitizer memcheck, racecheck and synccheck on 07g at d = 128 (causal, GQA, tails,
#             N > M) and d = 64 (the 64B-swizzled Q and K), and memcheck of --fp8-scale tensor (the
#             two-pass quantize) -> $OUT/fp8-sanitize.log, one line per run in the summary
#   accuracy  FlashAttention-3's experiment: Q, K, V from N(0, 1) with 0.1% of the entries from
#             N(0, 10^2) (--inputs sparse-outlier), d = 64, 128, 256, N = M = 1024 and 4096, not causal,
#             4 heads; 07f in float16, and 07g per tensor (--fp8-scale tensor --fp8-hadamard off), per
#             block (--fp8-hadamard off), per block + Hadamard (the default); checked against the
#             float64 reference (every row at N = 1024; at 4096 the driver's sample, 16 rows at each
#             end of the first and last head and random rows, the extra field's checked=) ->
#             $OUT/<gpu>-fp8-accuracy.csv, columns
#             method,d,N,rmse,rel_l2 (the rows the course commits as results/<gpu>-fp8-accuracy.csv;
#             a per-tensor row may say FAIL in the raw CSV: FP8 without block scales may miss the
#             tolerance, which is what the table shows), and the raw driver rows beside it
#   timing    lab/fa3-fp8.txt: 07f in float16 and 07g in e4m3 on each shape, timed as the ladder
#             times (07g's time is its quantize kernels and its attention kernel together) ->
#             $OUT/<gpu>-fp8-timing.csv (the driver's columns), and 07g / 07f per shape in the summary
#   ncu       Nsight Compute's duration of each kernel of one 07g launch (quantize kernels and
#             attention kernel apart) on three shapes of lab/fa3-fp8.txt -> $OUT/fp8-ncu.txt
#
# Set COMMIT to the commit being measured (the tree there has no .git). Each step says how long it
# took; a command that runs out of its time limit (FP8_TIMEOUT, default 170 s) is cut there, and what
# it wrote stays. All six steps take about 8-9 minutes on an H100 (an estimate: nothing here has run
# yet), close to one device call's 10; two calls on the same warm machine are safer:
#   COMMIT=<hash> lab/fp8_run.sh build matrix sanitize      then      lab/fp8_run.sh accuracy timing ncu
set -u
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-build/out}
mkdir -p "$OUT"
export ATTN_COMMIT=${COMMIT:-unknown}
export ATTN_DRIVER=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -n 1)
B07=build/bin/07_fa3_wgmma_tma
T=${FP8_TIMEOUT:-170}
summary=$OUT/summary.txt
: > "$summary"
say() { echo "$*" | tee -a "$summary"; }
steps=${*:-build matrix sanitize accuracy timing ncu}

say "== $(date -u +%FT%TZ) commit $ATTN_COMMIT on $(nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader 2>/dev/null)"
gpu() { "$B07" --probe 2>/dev/null | cut -d' ' -f1; }

# counts CSV: "ok N, FAIL N, refused N" of a driver CSV (status is column 10)
counts() {
  grep -v '^#' "$1" 2>/dev/null | tail -n +2 | awk -F, '{ if ($10 == "ok") o++; else if ($10 ~ /^FAIL/) f++; else if ($10 ~ /^unsupported/) u++ }
    END { printf "ok %d, FAIL %d, refused %d", o, f, u }'
}

for step in $steps; do
  t0=$(date +%s)
  case $step in
    build)
      make -j"$(nproc)" build > "$OUT/build.log" 2>&1; rc=$?
      grep -E "error|warning" "$OUT/build.log" | head -n 20 | tee -a "$summary"
      say "build: exit $rc";;
    matrix)
      for v in 07g 07f; do
        f=$OUT/fp8-matrix-$v.csv
        rm -f "$f"
        timeout "$T" "$B07" --variant $v --sweep tests/gpu_cases.txt --no-time --quiet --csv "$f" > "$OUT/fp8-matrix-$v.log" 2>&1
        say "matrix $v: exit $?, $(counts "$f") of $(grep -cv '^\s*\(#\|$\)' tests/gpu_cases.txt) lines"
        grep -v '^#' "$f" | awk -F, -v V=$v '$10 ~ /^FAIL/ { printf "   FAIL %s B=%s Hq=%s Hkv=%s N=%s M=%s d=%s causal=%s %s: %s (%s)\n", V,$2,$3,$4,$5,$6,$7,$8,$9,$10,$22 }' | tee -a "$summary"
        # 07g must run exactly the e4m3 lines; 07f must refuse exactly those
        grep -v '^#' "$f" | awk -F, -v V=$v 'NR > 1 && (($9 == "e4m3") == (V == "07g")) && $10 ~ /^unsupported/ { printf "   refused %s d=%s N=%s M=%s %s: %s\n", V,$7,$5,$6,$9,$10 }' | tee -a "$summary"
        grep -v '^#' "$f" | awk -F, -v V=$v 'NR > 1 && $9 == "e4m3" { printf "   %s e4m3 B=%s Hq=%s Hkv=%s N=%s M=%s d=%s causal=%s: %s rel_err=%s lse_err=%s %s\n", V,$2,$3,$4,$5,$6,$7,$8,$10,$16,$18,$22 }' >> "$OUT/fp8-matrix-e4m3.txt"
      done;;
    sanitize)
      : > "$OUT/fp8-sanitize.log"
      for run in "memcheck --b 1 --hq 4 --hkv 2 --n 200 --m 333 --d 128 --causal" \
                 "racecheck --b 1 --hq 4 --hkv 2 --n 200 --m 333 --d 128 --causal" \
                 "synccheck --b 1 --hq 4 --hkv 2 --n 200 --m 333 --d 128 --causal" \
                 "memcheck --b 1 --hq 2 --hkv 1 --n 300 --m 257 --d 64" \
                 "racecheck --b 1 --hq 2 --hkv 1 --n 300 --m 257 --d 64" \
                 "memcheck --b 1 --hq 2 --hkv 2 --n 130 --m 300 --d 256 --fp8-scale tensor --fp8-hadamard off"; do
        set -- $run
        tool=$1; shift
        echo "### 07g $tool $*" >> "$OUT/fp8-sanitize.log"
        timeout "$T" compute-sanitizer --tool "$tool" --error-exitcode 9 "$B07" --variant 07g --dtype e4m3 "$@" --no-time \
            >> "$OUT/fp8-sanitize.log" 2>&1
        rc=$?
        case $rc in 0) r=clean;; 3) r=refused;; 9) r=ERRORS;; 124) r="timed out";; *) r="exit $rc";; esac
        say "sanitize 07g $tool [$*]: $r"
      done;;
    accuracy)
      g=$(gpu)
      raw=$OUT/$g-fp8-accuracy-raw.csv acc=$OUT/$g-fp8-accuracy.csv
      rm -f "$raw"
      for d in 64 128 256; do
        for n in 1024 4096; do
          shape="--b 1 --h 4 --n $n --d $d --inputs sparse-outlier --no-time --quiet --csv $raw"
          timeout "$T" "$B07" --variant 07f $shape > /dev/null 2>> "$OUT/fp8-accuracy.err"
          timeout "$T" "$B07" --variant 07g --dtype e4m3 --fp8-scale tensor --fp8-hadamard off $shape > /dev/null 2>> "$OUT/fp8-accuracy.err"
          timeout "$T" "$B07" --variant 07g --dtype e4m3 --fp8-hadamard off $shape > /dev/null 2>> "$OUT/fp8-accuracy.err"
          timeout "$T" "$B07" --variant 07g --dtype e4m3 $shape > /dev/null 2>> "$OUT/fp8-accuracy.err"
        done
      done
      { grep '^#' "$raw"
        echo "# inputs: N(0,1), 0.1% of the entries of Q, K and V from N(0,10^2) (--inputs sparse-outlier); B = 1, Hq = Hkv = 4, M = N, not causal; every row checked against the float64 reference on the float16 inputs"
        echo "method,d,N,rmse,rel_l2"
        grep -v '^#' "$raw" | awk -F, 'NR > 1 {
            x = ";" $22; r = ""; if (match(x, /;rmse=[^;]*/)) r = substr(x, RSTART + 6, RLENGTH - 6)
            m = $1 == "07f" ? "07f-f16" : x ~ /;fp8=tensor;/ ? "fp8-tensor" : x ~ /;hadamard=0;/ ? "fp8-block" : "fp8-block-hadamard"
            printf "%s,%s,%s,%s,%s\n", m, $7, $5, r, $16 }'; } > "$acc"
      say "accuracy -> $(basename "$acc") ($(grep -vc '^#\|^method' "$acc") rows):"
      grep -v '^#' "$acc" | column -t -s, | tee -a "$summary";;
    timing)
      g=$(gpu)
      f=$OUT/$g-fp8-timing.csv
      rm -f "$f"
      timeout "$T" "$B07" --variant 07f --sweep lab/fa3-fp8.txt --no-check --quiet --csv "$f" > /dev/null 2>> "$OUT/fp8-timing.err"
      say "timing 07f: exit $?"
      timeout "$T" "$B07" --variant 07g --dtype e4m3 --sweep lab/fa3-fp8.txt --no-check --quiet --csv "$f" > /dev/null 2>> "$OUT/fp8-timing.err"
      say "timing 07g: exit $?"
      say "timing -> $(basename "$f"): TFLOP/s of 07f (f16) and 07g (e4m3, quantize included), 07g / 07f, fastest launches"
      grep -v '^#' "$f" | awk -F, 'NR > 1 && $10 == "ok" { k = $2 " " $3 " " $5 " " $7 " " $8; if ($1 == "07f") a[k] = $12; else b[k] = $12; K[k] = 1 }
        END { for (k in K) if ((k in a) && (k in b)) printf "   B Hq N d causal = %s: 07f %.3f ms, 07g %.3f ms, speed-up %.2f\n", k, a[k], b[k], a[k] / b[k] }' | sort -t= -k2 -n | tee -a "$summary";;
    ncu)
      if ! command -v ncu > /dev/null; then say "ncu: not installed, skipped"; continue; fi
      : > "$OUT/fp8-ncu.txt"
      for shape in "--b 4 --h 16 --n 4096 --d 128" "--b 1 --h 16 --n 16384 --d 128" "--b 1 --h 8 --n 16384 --d 256"; do
        echo "### 07g $shape" >> "$OUT/fp8-ncu.txt"
        timeout "$T" ncu --profile-from-start off --clock-control none --metrics gpu__time_duration.sum \
            "$B07" --variant 07g --dtype e4m3 $shape --profile --no-check >> "$OUT/fp8-ncu.txt" 2>&1
        say "ncu 07g [$shape]: $(grep -E '^  [a-z_0-9]+.*\(|gpu__time_duration' "$OUT/fp8-ncu.txt" | tail -n 8 | tr -s ' ' | tr '\n' ' ')"
      done;;
    *) say "unknown step $step";;
  esac
  say "   ($step took $(( $(date +%s) - t0 )) s)"
done
echo "================ summary"
cat "$summary"
