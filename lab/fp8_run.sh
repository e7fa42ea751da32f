#!/usr/bin/env bash
# Rung 07's FP8 step (07g) on the GPU in one device call (issue 24): build there, then the steps
# asked for (all six, in this order, when none is named), everything bundled under $OUT.
#
#   COMMIT=<hash> OUT=<dir> lab/fp8_run.sh [build] [matrix] [sanitize] [accuracy] [timing] [ncu]
#
# The tree may be a plain copy without .git, anywhere (e.g. build/wt-fp8 inside another checkout):
# the script works from its own folder, builds only what it runs, and takes the commit from COMMIT.
#
#   build     make -j16 of rung 07's and rung 00's binaries only (not the whole ladder: rung 06 alone
#             takes minutes); about 60-90 s, timed when fa3.cu was rung 07's one translation unit
#             (since issue 34 the FP8 step is fp8.cu, a second one)
#   matrix    first a smoke run of each 07g kernel: DK = 64 with two and three consumers, 128 with
#             128- and 192-key tiles, 256 (15 s each at most: a hang shows here,
#             and the later steps then leave 07g out), then 07g and 07f on every line of
#             tests/gpu_cases.txt, --no-time, as make test runs them: 07g must pass every dtype=e4m3
#             line and refuse every other with a reason; 07f the reverse -> fp8-matrix-07g.csv,
#             -07f.csv, counts in the summary. A FAIL here is the first thing to look at
#             (07_fa3_wgmma_tma/NOTES.md, 07g, "Running it, and reading a failure"); 30-60 s
#   sanitize  compute-sanitizer on 07g, most telling first: memcheck and racecheck at d = 128 with
#             192-key tiles (causal, GQA, a tail; V in three 64-key chunks), racecheck with 128-key
#             tiles, memcheck at d = 64 with three consumers and racecheck with two (the 64B-swizzled
#             Q and K), memcheck of --fp8-scale tensor at d = 256 (the two-pass quantize), synccheck
#             at d = 128 -> fp8-sanitize.log, one line per run in the summary; 15-30 s a run, 150 s
#             at most
#   accuracy  FlashAttention-3's experiment: Q, K, V from N(0, 1) with 0.1% of the entries from
#             N(0, 10^2) (inputs=sparse-outlier), d = 64, 128, 256, N = M = 1024 and 4096, not causal,
#             4 heads; 07f in float16, and 07g per tensor (--fp8-scale tensor --fp8-hadamard off), per
#             block (--fp8-hadamard off), per block + Hadamard (the default), one sweep each; checked
#             against the float64 reference (every row at N = 1024; at 4096 the driver's sample, the
#             extra field's checked=) -> <gpu>-fp8-accuracy.csv, columns method,d,N,rmse,rel_l2 (the
#             rows the course commits as results/<gpu>-fp8-accuracy.csv; a per-tensor row may say
#             FAIL in the raw CSV: FP8 without block scales may miss the tolerance, which is what the
#             table shows), and the raw driver rows beside it; 30-60 s
#   timing    lab/fa3-fp8.txt (the issue's shapes first: d = 128 and 256 from N = 4096, d = 256 at
#             N = 16384 not causal): 07f in float16, then 07g in e4m3 (07g's sweep given two thirds
#             of what is left: it times three things a shape), timed as the ladder times: 07g's
#             ms and TFLOP/s are its attention kernel's alone, as 07f's; its extra field adds
#             quant_ms (the quantize kernels alone) and total_ms (quantize + attention in one timed
#             region), each the median of as many launches, L2 flushed before each
#             -> <gpu>-fp8-timing.csv (the driver's columns), and per shape in the summary 07g's
#             attention kernel against 07f, its quantize time, and the total against 07f; 40-70 s
#   ncu       Nsight Compute's duration of each kernel of one 07g launch (quantize kernels and
#             attention kernel apart) on three shapes of lab/fa3-fp8.txt -> fp8-ncu.txt; 20-40 s
#
# Time: the whole run ends within FP8_DEADLINE seconds (default 525) of its start, for one device
# call's 10 minutes with room to spare: each step has a cap, keeps back a minimum for the steps
# after it, and every command runs under `timeout` with what is left of its step; a step that has
# no time left says so in the summary. Expected about 6-7 minutes for all six.
#
# What comes back: $OUT holds at most four files, within the device call's limits (8 files, two
# folders deep): summary.txt, fp8-bundle.tar.gz (every log and CSV of the run, from build/fp8/),
# and the accuracy and timing CSVs. They are rewritten after every step, so a call cut short still
# returns what the finished steps wrote.
set -u
. "$(dirname "$0")/steps.sh"
lab_start fp8 ${FP8_DEADLINE:-525}
B07=build/bin/07_fa3_wgmma_tma
steps=${*:-build matrix sanitize accuracy timing ncu}

# Per step: its cap, and the least it keeps for itself when later steps reserve theirs (seconds).
declare -A CAP=([build]=200 [matrix]=110 [sanitize]=150 [accuracy]=90 [timing]=120 [ncu]=50)
declare -A MIN=([build]=120 [matrix]=40 [sanitize]=45 [accuracy]=40 [timing]=60 [ncu]=30)

g=unknown
bundle() {
  tar czf "$OUT/fp8-bundle.tar.gz.tmp" -C "$W" . 2>/dev/null && mv "$OUT/fp8-bundle.tar.gz.tmp" "$OUT/fp8-bundle.tar.gz"
  cp "$summary" "$OUT/summary.txt"
  for f in "$W/$g-fp8-accuracy.csv" "$W/$g-fp8-timing.csv"; do [ -f "$f" ] && cp "$f" "$OUT/"; done
}

say "== $(date -u +%FT%TZ) commit $ATTN_COMMIT on $(nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader 2>/dev/null)"
hung=0                                               # 07g hung in the smoke run: later steps leave it out


read -ra todo <<< "$steps"
for ((i = 0; i < ${#todo[@]}; i++)); do
  step_begin $i || continue
  case $step in
    build)
      run_for 200 make -j16 "$B07" build/bin/00_baseline > "$W/build.log" 2>&1; rc=$?
      grep -Ei 'error|warning|\*\*\*' "$W/build.log" | grep -Ev '^(cc|gcc|nvcc|mkdir) ' | head -n 20 | tee -a "$summary"
      say "build: $(verdict $rc)";;
    matrix)
      # one per kernel of 07g's tile table: DK = 64 (two consumers), 64 (three: N = 960), 128 (128-key
      # tiles), 128 (192-key tiles: M >= 3072), 256
      for sh in "200 333 64" "960 1000 64" "200 333 128" "200 3300 128" "200 333 256"; do
        read -r n m dk <<< "$sh"
        smoke 07g "$W/fp8-smoke.log" $n $m $dk
        [ $? = 124 ] && hung=1
      done
      [ $hung = 1 ] && say "   07g hangs: the later steps leave it out"
      for v in 07g 07f; do
        [ $v = 07g ] && [ $hung = 1 ] && continue
        f=$W/fp8-matrix-$v.csv
        lim=$(left)                                 # 07g: half (19 lines run, the rest refused at once)
        [ $v = 07g ] && lim=$((lim / 2))
        run_for "$lim" "$B07" --variant $v --sweep tests/gpu_cases.txt --no-time --quiet --csv "$f" > "$W/fp8-matrix-$v.log" 2>&1
        say "matrix $v: $(verdict $?), $(counts "$f") of $(grep -cv '^\s*\(#\|$\)' tests/gpu_cases.txt) lines"
        grep -v '^#' "$f" 2>/dev/null | awk -F, -v V=$v '$10 ~ /^FAIL/ { printf "   FAIL %s B=%s Hq=%s Hkv=%s N=%s M=%s d=%s causal=%s %s: %s (%s)\n", V,$2,$3,$4,$5,$6,$7,$8,$9,$10,$22 }' | tee -a "$summary"
        # 07g must run exactly the e4m3 lines; 07f must refuse exactly those
        grep -v '^#' "$f" 2>/dev/null | awk -F, -v V=$v 'NR > 1 && (($9 == "e4m3") == (V == "07g")) && $10 ~ /^unsupported/ { printf "   refused %s d=%s N=%s M=%s %s: %s\n", V,$7,$5,$6,$9,$10 }' | tee -a "$summary"
        grep -v '^#' "$f" 2>/dev/null | awk -F, -v V=$v 'NR > 1 && $9 == "e4m3" { printf "   %s e4m3 B=%s Hq=%s Hkv=%s N=%s M=%s d=%s causal=%s: %s rel_err=%s lse_err=%s %s\n", V,$2,$3,$4,$5,$6,$7,$8,$10,$16,$18,$22 }' >> "$W/fp8-matrix-e4m3.txt"
      done;;
    sanitize)
      if [ $hung = 1 ]; then say "sanitize: skipped (07g hangs)"; continue; fi
      : > "$W/fp8-sanitize.log"
      for run in "memcheck --b 1 --hq 2 --hkv 1 --n 200 --m 3100 --d 128 --causal" \
                 "racecheck --b 1 --hq 2 --hkv 1 --n 200 --m 3100 --d 128 --causal" \
                 "racecheck --b 1 --hq 4 --hkv 2 --n 200 --m 333 --d 128 --causal" \
                 "memcheck --b 1 --hq 2 --hkv 1 --n 960 --m 1000 --d 64" \
                 "racecheck --b 1 --hq 2 --hkv 1 --n 300 --m 257 --d 64" \
                 "memcheck --b 1 --hq 2 --hkv 2 --n 130 --m 300 --d 256 --fp8-scale tensor --fp8-hadamard off" \
                 "synccheck --b 1 --hq 2 --hkv 1 --n 200 --m 3100 --d 128 --causal"; do
        read -ra a <<< "$run"
        echo "### 07g ${a[*]}" >> "$W/fp8-sanitize.log"
        run_for 45 compute-sanitizer --tool "${a[0]}" --error-exitcode 9 "$B07" --variant 07g --dtype e4m3 "${a[@]:1}" \
            --no-time >> "$W/fp8-sanitize.log" 2>&1
        say "sanitize 07g ${a[0]} [${a[*]:1}]: $(verdict $?)"
      done;;
    accuracy)
      raw=$W/$g-fp8-accuracy-raw.csv acc=$W/$g-fp8-accuracy.csv sw=$W/fp8-accuracy-shapes.txt
      for n in 1024 4096; do for d in 64 128 256; do echo "1 4 4 $n $n $d 0 inputs=sparse-outlier"; done; done > "$sw"
      methods=("--variant 07f" \
               "--variant 07g --dtype e4m3" \
               "--variant 07g --dtype e4m3 --fp8-hadamard off" \
               "--variant 07g --dtype e4m3 --fp8-scale tensor --fp8-hadamard off")
      for k in 0 1 2 3; do
        case "${methods[$k]}" in *07g*) [ $hung = 1 ] && continue;; esac
        run_for $(( $(left) / (4 - k) )) "$B07" ${methods[$k]} --sweep "$sw" --no-time --quiet --csv "$raw" \
            > /dev/null 2>> "$W/fp8-accuracy.err"
        say "accuracy ${methods[$k]}: $(verdict $?)"
      done
      { grep '^#' "$raw" 2>/dev/null | awk '!seen[$2]++'   # the first run's metadata
        echo "# inputs: N(0,1), 0.1% of the entries of Q, K and V from N(0,10^2) (inputs=sparse-outlier); B = 1, Hq = Hkv = 4, M = N, not causal; checked against the float64 reference on the float16 inputs (all rows at N = 1024, the driver's sample at 4096)"
        echo "method,d,N,rmse,rel_l2"
        grep -v '^#' "$raw" 2>/dev/null | awk -F, '$1 != "rung" {
            x = ";" $22; r = ""; if (match(x, /;rmse=[^;]*/)) r = substr(x, RSTART + 6, RLENGTH - 6)
            m = $1 == "07f" ? "07f-f16" : x ~ /;fp8=tensor;/ ? "fp8-tensor" : x ~ /;hadamard=0;/ ? "fp8-block" : "fp8-block-hadamard"
            printf "%s,%s,%s,%s,%s\n", m, $7, $5, r, $16 }'; } > "$acc"
      say "accuracy -> $(basename "$acc") ($(grep -vc '^#\|^method' "$acc") rows):"
      grep -v '^#' "$acc" | column -t -s, | tee -a "$summary";;
    timing)
      f=$W/$g-fp8-timing.csv
      run_for $(( $(left) / 3 )) "$B07" --variant 07f --sweep lab/fa3-fp8.txt --no-check --quiet --csv "$f" > /dev/null 2>> "$W/fp8-timing.err"
      say "timing 07f: $(verdict $?)"
      if [ $hung = 0 ]; then
        run_for $(left) "$B07" --variant 07g --dtype e4m3 --sweep lab/fa3-fp8.txt --no-check --quiet --csv "$f" > /dev/null 2>> "$W/fp8-timing.err"
        say "timing 07g: $(verdict $?)"
      fi
      say "timing -> $(basename "$f"): median ms (TFLOP/s) of 07f (f16) and of 07g's attention kernel (e4m3), the speed-up 07f / 07g on medians (fastest launches); 07g's quantize kernels (quant_ms) and quantize + attention (total_ms, TFLOP/s), and 07f / total"
      grep -v '^#' "$f" 2>/dev/null | awk -F, '
        function key(x, name,   r) { r = ""; if (match(";" x, ";" name "=[^;]*")) r = substr(";" x, RSTART + length(name) + 2, RLENGTH - length(name) - 2); return r }
        $1 != "rung" && $10 == "ok" { k = $2 " " $3 " " $5 " " $7 " " $8; K[k] = 1
          if ($1 == "07f") { a[k] = $11; am[k] = $12; ta[k] = $14 } else { b[k] = $11; bm[k] = $12; tb[k] = $14; q[k] = key($22, "quant_ms"); t[k] = key($22, "total_ms") } }
        END { for (k in K) if ((k in a) && (k in b)) {
          printf "   B Hq N d causal = %s: 07f %.3f ms (%s), 07g attention %.3f ms (%s), speed-up %.2f (fastest %.2f)", k, a[k], ta[k], b[k], tb[k], a[k] / b[k], am[k] / bm[k]
          if (q[k] != "" && t[k] + 0 > 0) printf "; quantize %.3f ms, total %.3f ms (%.0f), 07f / total %.2f", q[k], t[k], tb[k] * b[k] / t[k], a[k] / t[k]
          printf "\n" } }' \
        | sort -k10,10n -k9,9n -k11,11n | tee -a "$summary";;
    ncu)
      if ! command -v ncu > /dev/null; then say "ncu: not installed, skipped"; continue; fi
      if [ $hung = 1 ]; then say "ncu: skipped (07g hangs)"; continue; fi
      : > "$W/fp8-ncu.txt"
      k=0
      for shape in "--b 1 --h 8 --n 16384 --d 256" "--b 4 --h 16 --n 4096 --d 128" "--b 1 --h 16 --n 16384 --d 128"; do
        run_for $(( $(left) / (3 - k) )) ncu --profile-from-start off --clock-control none --metrics gpu__time_duration.sum \
            "$B07" --variant 07g --dtype e4m3 $shape --profile --no-check > "$W/ncu.tmp" 2>&1
        rc=$?
        k=$((k + 1))
        { echo "### 07g $shape"; cat "$W/ncu.tmp"; } >> "$W/fp8-ncu.txt"
        say "ncu 07g [$shape]: $(verdict $rc): $(grep -E '^  [a-z_0-9]+.*\(|^ +gpu__time_duration' "$W/ncu.tmp" | tr -s ' ' | tr '\n' ' ')"
        rm -f "$W/ncu.tmp"
      done;;
  esac
  step_done
done
lab_end
