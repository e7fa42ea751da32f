#!/usr/bin/env bash
# Rung 08 (the backward pass, issue 25) on the GPU in one device call: build there, then the steps
# asked for (all four, in this order, when none is named); everything under $OUT.
#
#   COMMIT=<hash> OUT=<dir> lab/bwd_run.sh [build] [matrix] [sanitize] [timing]
#
#   build     make -j16 build/bin/00_baseline build/bin/08_backward (the machine's nvcc; nothing else),
#             then the registers, stack and local memory of bwd_main (08a), bwd_main-nodq and bwd_dq
#             (08b) and bwd_sm90 (08c, and 08d as bwd_sm90-ov: its template's bool is true, Lb1E; REG
#             is the launch bound's 168, setmaxnreg moves them) from
#             the binary (cuobjdump -res-usage: LOCAL > 0 would be spills) -> the summary.
#             About 1 minute (estimate)
#   matrix    every rung 08 variant on every line of tests/gpu_cases.txt, --no-time, as make test runs
#             the matrix (tools/run_tests.sh) -> $OUT/bwd-matrix.csv; counts ok / FAIL / refused per
#             variant, every FAIL, the refusals grouped by reason, and any line never reported. Then
#             rung 00 (forward) on the rung-08 block of the matrix alone (its new lines are forward
#             cases too), and each variant on two bfloat16 lines with outlier logits that the matrix leaves out
#             (their rel-L2 errors against the 1e-2 tolerance: whether such a line can join it) ->
#             rows in the same CSV. About 40 s (estimate: ~35 of 118 lines run, the rest refused)
#   sanitize  compute-sanitizer memcheck, racecheck and synccheck of each variant on B = 1, Hq = 4,
#             Hkv = 2, N = 77, M = 131, causal (tails, GQA) at d = 64 in float16 and d = 128 in bfloat16,
#             and memcheck on causal MQA with N > M (rows that see no key) at d = 128 -> the log in
#             $OUT/logs.tar.gz, one line per run in the summary. About 1 minute (7 runs a variant; the
#             first version's 7 took 6 s)
#   timing    each variant over sweeps/backward.txt (26 shapes: d = 64 and 128, N = 512 ... 16384 at 16k tokens,
#             causal and not, two bfloat16 lines), every row checked against the float64 reference
#             (one (b, KV head) group at least; at N = 16384 most of the step is the CPU's reference),
#             then tools/peers.py --backward on the same sweep (PyTorch's flash and cuDNN backward,
#             FlashAttention-4's where importable) -> $OUT/<gpu>-backward.csv; per shape each variant's
#             TFLOP/s, 08a's ratio to each peer and 08b's to 08a in the summary. The first version's
#             run: 127 s for 08a and the peers; about a minute more for 08b (estimate)
#
# With 08a, 08b and 08c the timing step took 297 s at e15cacc (results/lab/h100-bwd-08c-run.txt), so
# with 08d too the four steps may pass the deadline below: split them over two device calls, e.g.
# "build matrix sanitize", then "build timing".
# All four: about 5 minutes (the first version's took 2.5 with one variant). Each command runs under
# a timeout of its own (build 240 s; matrix 150, 60, 60; each sanitizer run 60; timing 200 a variant,
# 150 for the peers), cut short by one deadline for the whole call (BWD_DEADLINE seconds after the
# start, default 520, so that a device call of 540 s returns): a command the deadline reaches is
# interrupted, the ones after it are skipped, and what they wrote stays. $OUT holds four files:
# summary.txt, bwd-matrix.csv, <gpu>-backward.csv and logs.tar.gz (build, matrix, sanitizer and
# timing logs). Set COMMIT to the commit being measured (the tree here may have no .git), and
# BWD_VARIANTS to time only some variants (e.g. "08c 08d"; default every variant of --list).
# The timing step's other knobs: BWD_PEERS_FIRST=1 times the peers before the rungs (the 48-shape
# sweep with FA4 compiling its kernels took more than the 150 s cap, BWD_PEERS_CAP raises it), and
# BWD_CHECK=--no-check times the rungs unchecked (the GPU matrix checks them; each row's float64
# reference is most of the step's time: 08c and 08d checked took about 240 s each at a2e241c).
set -u
mkdir -p "${OUT:-build/out}" && OUT=$(cd "${OUT:-build/out}" && pwd)
cd "$(dirname "$0")/.." || exit 1
export ATTN_COMMIT=${COMMIT:-unknown}
export ATTN_DRIVER=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -n 1)
B08=build/bin/08_backward
LOG=build/bwd-logs
rm -rf "$LOG" && mkdir -p "$LOG"
summary=$OUT/summary.txt
: > "$summary"
say() { echo "$*" | tee -a "$summary"; }
steps=${*:-build matrix sanitize timing}
start=$(date +%s)
deadline=$((start + ${BWD_DEADLINE:-520}))

# run CAP COMMAND...: the command under a timeout of CAP seconds or what is left before the deadline,
# whichever is less; exit 124 at once when less than 5 s are left
run() {
  local cap=$1 left
  shift
  left=$((deadline - $(date +%s)))
  [ "$left" -lt 5 ] && return 124
  [ "$left" -lt "$cap" ] && cap=$left
  timeout --signal=INT --kill-after=5 "$cap" "$@"
}
# counts CSV [RUNG]: "ok N, FAIL N, refused N" of a driver CSV's rows (of RUNG alone if given)
counts() {
  grep -v '^#' "$1" 2>/dev/null | awk -F, -v R="${2:-}" 'NR > 1 && (R == "" || $1 == R) {
      if ($10 == "ok") o++; else if ($10 ~ /^FAIL/) f++; else if ($10 ~ /^unsupported/) u++ }
    END { printf "ok %d, FAIL %d, refused %d", o, f, u }'
}
gpu() { build/bin/00_baseline --probe 2>/dev/null | cut -d' ' -f1; }

say "== $(date -u +%FT%TZ) commit $ATTN_COMMIT on $(nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader 2>/dev/null); steps: $steps"

for step in $steps; do
  t0=$(date +%s)
  case $step in
    build)
      run 240 make -j16 build/bin/00_baseline build/bin/08_backward > $LOG/build.log 2>&1; rc=$?
      grep -E "error|warning" $LOG/build.log | head -n 20 | tee -a "$summary"
      say "build: exit $rc ($(nvcc --version 2>/dev/null | tail -n 1))"
      # cuobjdump -res-usage: one "Function NAME:" line, then "REG:.. STACK:.. SHARED:.. LOCAL:.." per kernel
      # bwd_main (08a), bwd_main without dQ (08b: its template's bool is false, Lb0E), bwd_dq (08b), bwd_sm90 (08c),
      # bwd_sm90 with overlap (08d: its template's bool is true, Lb1E)
      cuobjdump -res-usage "$B08" 2>/dev/null | awk '/arch = / { a = $3 } /Function/ { f = $2 } /REG:/ && f ~ /bwd_(main|dq|sm90)/ {
          d = f; sub(/.*bwd_(main|dq|sm90)ILi/, "", d); sub(/E.*/, "", d); t = f ~ /bfloat16/ ? "bf16" : "f16"
          k = f ~ /bwd_sm90/ ? (f ~ /Lb1E/ ? "bwd_sm90-ov" : "bwd_sm90") : f ~ /bwd_dq/ ? "bwd_dq" : f ~ /Lb0E/ ? "bwd_main-nodq" : "bwd_main"
          printf "   %s %s d=%s %s: %s %s %s\n", k, a, d, t, $1, $2, $4 }' | sort -u > $LOG/res-usage.txt
      [ -s $LOG/res-usage.txt ] || echo "   cuobjdump -res-usage gave no bwd_main, bwd_dq or bwd_sm90 line" > $LOG/res-usage.txt
      tee -a "$summary" < $LOG/res-usage.txt;;
    matrix)
      cases=$(grep -cv '^\s*\(#\|$\)' tests/gpu_cases.txt)
      f=$OUT/bwd-matrix.csv
      rm -f "$f"
      for v in $("$B08" --list | cut -f1); do
        run 150 "$B08" --variant "$v" --sweep tests/gpu_cases.txt --no-time --quiet --csv "$f" > $LOG/matrix-$v.log 2>&1
        rc=$?
        n=$(grep -v '^#' "$f" 2>/dev/null | awk -F, -v R="$v" 'NR > 1 && $1 == R' | grep -c .)
        say "matrix $v: exit $rc, $(counts "$f" "$v") of $cases lines$([ "$n" -lt "$cases" ] && echo "; $((cases - n)) NEVER REPORTED: $(tail -n 2 $LOG/matrix-$v.log | tr '\n' ' ')")"
        grep -v '^#' "$f" 2>/dev/null | awk -F, -v R="$v" '$1 == R && $10 ~ /^FAIL/ {
            printf "   FAIL %s B=%s Hq=%s Hkv=%s N=%s M=%s d=%s causal=%s %s: %s (%s)\n", R,$2,$3,$4,$5,$6,$7,$8,$9,$10,$22 }' | tee -a "$summary"
        # the refusals by reason, a reason's head dims gathered: "... (d = 32, 40, 96)"
        grep -v '^#' "$f" 2>/dev/null | awk -F, -v R="$v" '$1 == R && $10 ~ /^unsupported/ { w = $10
            if (match(w, / \(d = [0-9]+\)$/)) { w = substr(w, 1, RSTART - 1); if (!((w, $7) in seen)) { seen[w, $7] = 1; ds[w] = ds[w] (ds[w] == "" ? "" : ", ") $7 } }
            n[w]++ }
          END { for (w in n) printf "   refused %d: %s%s\n", n[w], w, ds[w] == "" ? "" : " (d = " ds[w] ")" }' | sort | tee -a "$summary"
        grep -v '^#' "$f" 2>/dev/null | awk -F, -v R="$v" '$1 == R && $10 == "ok" { x = ";" $22; r = ""
            if (match(x, /;rel_dq=[^;]*;rel_dk=[^;]*;rel_dv=[^;]*/)) r = substr(x, RSTART + 1, RLENGTH - 1)
            printf "   ok %s B=%s Hq=%s Hkv=%s N=%s M=%s d=%s causal=%s %s: %s\n", R,$2,$3,$4,$5,$6,$7,$8,$9,r }' >> $LOG/matrix-ok.txt
      done
      # rung 00 (forward) on the matrix's rung-08 block: those lines are forward cases for every rung
      awk '/^# rung 08/ { on = 1 } on && !/^\s*#/ && NF' tests/gpu_cases.txt > $LOG/block08.txt
      run 60 build/bin/00_baseline --sweep $LOG/block08.txt --no-time --quiet --csv "$f" > $LOG/matrix-00.log 2>&1
      rc=$?
      say "forward 00a on the $(grep -c . $LOG/block08.txt) lines of the rung-08 block: exit $rc, $(counts "$f" 00a)"
      # bfloat16 on outlier logits, not in the matrix: how far from the tolerance (1e-2)?
      printf '%s\n' "2 4 2 200 333 64 1 dtype=bf16 inputs=outlier" "2 4 1 300 300 128 1 dtype=bf16 inputs=outlier" > $LOG/probe.txt
      rm -f $LOG/probe.csv
      for v in $("$B08" --list | cut -f1); do
        run 60 "$B08" --variant "$v" --sweep $LOG/probe.txt --no-time --quiet --csv $LOG/probe.csv >> $LOG/probe.log 2>&1
      done
      grep -v '^#' $LOG/probe.csv 2>/dev/null | awk -F, '$1 != "rung" { x = ";" $22; r = ""
          if (match(x, /;rel_dq=[^;]*;rel_dk=[^;]*;rel_dv=[^;]*/)) r = substr(x, RSTART + 1, RLENGTH - 1)
          printf "   probe (not in the matrix) %s bf16 outlier B=%s Hq=%s Hkv=%s N=%s M=%s d=%s causal=%s: %s %s\n", $1,$2,$3,$4,$5,$6,$7,$8,$10,r }' | tee -a "$summary"
      grep -v '^#' $LOG/probe.csv 2>/dev/null | grep -v '^rung,' >> "$f";;
    sanitize)
      : > $LOG/sanitize.log
      gqa="--b 1 --hq 4 --hkv 2 --n 77 --m 131 --causal"          # tails, GQA
      mqa="--b 2 --hq 4 --hkv 1 --n 161 --m 97 --d 128 --causal"  # MQA, rows that see no key (N > M)
      for v in $("$B08" --list | cut -f1); do
        for t in "memcheck $gqa --d 64" "racecheck $gqa --d 64" "synccheck $gqa --d 64" \
                 "memcheck $gqa --d 128 --dtype bf16" "racecheck $gqa --d 128 --dtype bf16" \
                 "synccheck $gqa --d 128 --dtype bf16" "memcheck $mqa"; do
          set -- $t
          tool=$1; shift
          echo "### $v $tool $*" >> $LOG/sanitize.log
          run 60 compute-sanitizer --tool "$tool" --error-exitcode 9 "$B08" --variant "$v" "$@" --no-time >> $LOG/sanitize.log 2>&1
          rc=$?
          case $rc in 0) r=clean;; 3) r=refused;; 9) r=ERRORS;; 124) r="timed out";; *) r="exit $rc";; esac
          say "sanitize $v $tool [$*]: $r"
        done
      done;;
    timing)
      g=$(gpu)
      f=$OUT/${g:-gpu}-backward.csv
      rm -f "$f"
      peers() {
        if python3 -c 'import torch' 2>/dev/null; then
          run ${BWD_PEERS_CAP:-150} python3 tools/peers.py --backward --sweep sweeps/backward.txt --csv "$f" > $LOG/timing-peers.log 2>&1
          say "timing peers (backward): exit $?, torch-flash $(counts "$f" torch-flash), torch-cudnn $(counts "$f" torch-cudnn)$(grep -q '^fa4,' "$f" && echo ", fa4 $(counts "$f" fa4)")"
        else
          say "timing peers: no PyTorch here, skipped"
        fi
      }
      [ -n "${BWD_PEERS_FIRST:-}" ] && peers
      for v in ${BWD_VARIANTS:-$("$B08" --list | cut -f1)}; do
        # shellcheck disable=SC2086  # BWD_CHECK: flags, split on purpose (e.g. --no-check)
        run 240 "$B08" --variant "$v" --sweep sweeps/backward.txt --quiet ${BWD_CHECK:-} --csv "$f" > $LOG/timing-$v.log 2>&1
        say "timing $v: exit $?, $(counts "$f" "$v") of $(grep -cv '^\s*\(#\|$\)' sweeps/backward.txt) shapes"
      done
      [ -z "${BWD_PEERS_FIRST:-}" ] && peers
      say "   TFLOP/s (2.5x the forward's FLOPs), N d causal dtype: each rung or peer, 08a against each peer, 08b and 08c against 08a, 08d against 08c"
      grep -v '^#' "$f" 2>/dev/null | awk -F, 'NR > 1 && $10 == "ok" { k = sprintf("%6s %4s %s %-4s", $5, $7, $8, $9)
            t[k, $1] = $14; K[k] = 1; if (!($1 in R)) { R[$1] = 1; order[++nr] = $1 } }
          END { for (k in K) { s = k
                  for (i = 1; i <= nr; i++) if ((k, order[i]) in t) s = s sprintf("  %s %.0f", order[i], t[k, order[i]])
                  for (i = 1; i <= nr; i++) if (order[i] !~ /^08/ && ((k, order[i]) in t) && ((k, "08a") in t))
                    s = s sprintf("  08a/%s %.2f", order[i], t[k, "08a"] / t[k, order[i]])
                  if (((k, "08b") in t) && ((k, "08a") in t)) s = s sprintf("  08b/08a %.2f", t[k, "08b"] / t[k, "08a"])
                  if (((k, "08c") in t) && ((k, "08a") in t)) s = s sprintf("  08c/08a %.2f", t[k, "08c"] / t[k, "08a"])
                  if (((k, "08d") in t) && ((k, "08c") in t)) s = s sprintf("  08d/08c %.2f", t[k, "08d"] / t[k, "08c"])
                  print "   " s } }' | sort -k4,4 -k2,2n -k3,3n -k1,1n | tee -a "$summary"
      grep -v '^#' "$f" 2>/dev/null | awk -F, 'NR > 1 && $10 ~ /^FAIL/ { printf "   FAIL %s N=%s d=%s causal=%s %s: %s\n", $1,$5,$7,$8,$9,$10 }' | tee -a "$summary";;
    *) say "unknown step $step";;
  esac
  say "   ($step took $(( $(date +%s) - t0 )) s; $((deadline - $(date +%s))) s left before the deadline)"
done

tar czf "$OUT/logs.tar.gz" -C build bwd-logs 2>/dev/null
echo "================ summary"
cat "$summary"
