#!/usr/bin/env bash
# 07g against 07g-ov on the GPU, in one device call: 07g-ov is 07g with the wait for P V of tile
# j - 1 tied to tile j's softmax (fp8.cuh, f8_wait_pv; f8_tile's HOLD at DK = 64 and 128), so that
# ptxas cannot lift it above the exponentials and the softmax runs under its own P V again (07's
# README, "07g: the softmax under its own P V"). Both are in one binary (--variant 07g, 07g-ov).
# Mirrors lab/fp8_run.sh (same layout of $OUT, summary, time caps; the skeleton both source: lab/steps.sh).
#
#   COMMIT=<hash> OUT=<dir> lab/fp8_hold_ab.sh [build] [matrix] [timing] [ncu]
#
# Default steps: matrix timing, and build first when build/bin/07_fa3_wgmma_tma is missing.
#
#   build     make -j16 of rung 07's binary (60-90 s)
#   matrix    a smoke run of 07g-ov at d = 128 (the 128- and the 192-key tile) and d = 64 (three
#             consumers), 15 s each at most: a hang shows here, and the later steps leave 07g-ov
#             out; then 07g-ov on every line of tests/gpu_cases.txt, --no-time, as make test runs
#             it: every dtype=e4m3 line must pass -> hold-matrix.csv, counts and any FAIL in the
#             summary (about 10 s)
#   timing    lab/fa3-fp8.txt's shapes, --no-check, timed as the ladder times them, 07g then 07g-ov
#             on the d = 128 lines, then on the d = 64 lines (d = 256: the same kernel in both,
#             left out); twice, in the order A B B A, so that a drift of the clocks shows
#             -> <gpu>-hold-timing.csv; per shape in the summary TFLOP/s of each variant's
#             attention kernel (the better of its two runs' medians) and 07g-ov / 07g
#   ncu       Nsight Compute on d = 128, N = 16384, not causal, both variants: the pipes and
#             stalls of results/lab/h100-pipes07g.txt (tensor 48%, XU 51% for 07g there)
#             -> hold-ncu.csv (about 60 s)
#
# Time: the run ends within HOLD_DEADLINE seconds (default 300) of its start: each step has a cap
# and keeps back a minimum for the steps after it; every command runs under `timeout`. What comes
# back: $OUT/summary.txt, $OUT/hold-bundle.tar.gz (every log and CSV of the run, from build/hold/)
# and the timing CSV, rewritten after every step.
set -u
. "$(dirname "$0")/steps.sh"
lab_start hold ${HOLD_DEADLINE:-300}
B07=build/bin/07_fa3_wgmma_tma
steps=${*:-matrix timing}
[ -x "$B07" ] || case " $steps " in *" build "*) ;; *) steps="build $steps";; esac

declare -A CAP=([build]=150 [matrix]=60 [timing]=200 [ncu]=90)
declare -A MIN=([build]=100 [matrix]=30 [timing]=90 [ncu]=40)
g=unknown
bundle() {
  tar czf "$OUT/hold-bundle.tar.gz.tmp" -C "$W" . 2>/dev/null && mv "$OUT/hold-bundle.tar.gz.tmp" "$OUT/hold-bundle.tar.gz"
  cp "$summary" "$OUT/summary.txt"
  [ -f "$W/$g-hold-timing.csv" ] && cp "$W/$g-hold-timing.csv" "$OUT/"
}

say "== $(date -u +%FT%TZ) commit $ATTN_COMMIT on $(nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader 2>/dev/null)"
HUNG=

read -ra todo <<< "$steps"
for ((i = 0; i < ${#todo[@]}; i++)); do
  step_begin $i || continue
  case $step in
    build)
      run_for 150 make -j16 "$B07" > "$W/build.log" 2>&1; rc=$?
      grep -Ei 'error|warning|\*\*\*' "$W/build.log" | grep -Ev '^(cc|gcc|nvcc|mkdir) ' | head -n 20 | tee -a "$summary"
      say "build: $(verdict $rc)";;
    matrix)
      lines=$(grep -cv '^\s*\(#\|$\)' tests/gpu_cases.txt)
      for sh in "200 333 128" "200 3300 128" "2500 700 64"; do   # d = 128: 128- and 192-key tiles; d = 64: three consumers
        read -r nn m d <<< "$sh"
        smoke 07g-ov "$W/hold-smoke.log" $nn $m $d
        [ $? = 124 ] && HUNG=1
      done
      if [ -n "$HUNG" ]; then say "   07g-ov hangs: left out from here on"; continue; fi
      f=$W/hold-matrix.csv
      run_for $(left) "$B07" --variant 07g-ov --sweep tests/gpu_cases.txt --no-time --quiet --csv "$f" > "$W/hold-matrix.log" 2>&1
      say "matrix 07g-ov: $(verdict $?), $(counts "$f") of $lines lines"
      grep -v '^#' "$f" 2>/dev/null | awk -F, '$10 ~ /^FAIL/ { printf "   FAIL 07g-ov B=%s Hq=%s Hkv=%s N=%s M=%s d=%s causal=%s: %s (%s)\n", $2,$3,$4,$5,$6,$7,$8,$10,$22 }' | tee -a "$summary"
      grep -v '^#' "$f" 2>/dev/null | awk -F, 'NR > 1 && $9 == "e4m3" { printf "   07g-ov e4m3 B=%s Hq=%s Hkv=%s N=%s M=%s d=%s causal=%s: %s rel_err=%s lse_err=%s\n", $2,$3,$4,$5,$6,$7,$8,$10,$16,$18 }' >> "$W/hold-matrix-e4m3.txt";;
    timing)
      f=$W/$g-hold-timing.csv
      grep -v '^\s*\(#\|$\)' lab/fa3-fp8.txt | awk '$6 > 64 && $6 <= 128' > "$W/shapes-128.txt"
      grep -v '^\s*\(#\|$\)' lab/fa3-fp8.txt | awk '$6 <= 64' > "$W/shapes-64.txt"
      runs=("07g 128" "07g-ov 128" "07g-ov 128" "07g 128" "07g 64" "07g-ov 64" "07g-ov 64" "07g 64")   # A B B A: d = 128 first
      k=0
      for r in "${runs[@]}"; do
        read -r v set <<< "$r"
        if [ "$v" = 07g-ov ] && [ -n "$HUNG" ]; then k=$((k + 1)); continue; fi
        run_for $(( $(left) / (${#runs[@]} - k) )) "$B07" --variant $v --dtype e4m3 --sweep "$W/shapes-$set.txt" \
            --no-check --quiet --csv "$f" > /dev/null 2>> "$W/hold-timing.err"
        say "timing $v, d = $set: $(verdict $?)"
        k=$((k + 1))
      done
      say "timing -> $(basename "$f"): TFLOP/s of the attention kernel (the better median of the two runs) per variant; 07g-ov / 07g"
      grep -v '^#' "$f" 2>/dev/null | awk -F, '
        $1 != "rung" && $10 == "ok" { k = sprintf("B %2s Hq %s N %5s d %3s causal %s", $2, $3, $5, $7, $8); K[k] = 1
          if ($14 > T[k, $1]) T[k, $1] = $14 }
        END { for (k in K) { a = T[k, "07g"]; b = T[k, "07g-ov"]
              printf "%s:  07g %6.1f  07g-ov %6.1f", k, a, b; if (a > 0 && b > 0) printf "   %.3f x", b / a; print "" } }' \
        | sort -k8,8n -k6,6n -k10,10n | tee -a "$summary";;
    ncu)
      if ! command -v ncu > /dev/null; then say "ncu: not found"; continue; fi
      m=sm__pipe_shared_cycles_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active,gpu__time_duration.sum
      for r in barrier wait long_scoreboard short_scoreboard mio_throttle dispatch_stall; do m=$m,smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio; done
      for v in 07g 07g-ov; do
        [ "$v" = 07g-ov ] && [ -n "$HUNG" ] && continue
        echo "### $v" >> "$W/hold-ncu.csv"
        run_for 40 ncu --profile-from-start off --clock-control none --metrics $m --csv --page raw "$B07" --variant $v --dtype e4m3 \
            --b 1 --hq 16 --hkv 16 --n 16384 --m 16384 --d 128 --profile 2>&1 | grep '^"' >> "$W/hold-ncu.csv"
        say "ncu $v d = 128, N = 16384: $(verdict ${PIPESTATUS[0]})"
      done
      grep -A3 '^###' "$W/hold-ncu.csv" | grep -E '^###|fa3_ws_kernel' | cut -c1-400 | tee -a "$summary";;
  esac
  step_done
done
lab_end
