# The skeleton of lab/fp8_run.sh, sourced by it (and by fp8_hold_ab.sh, which lived in lab/ until
# commit 9e2d1a6): one device call split into steps, each under a cap, all within one deadline,
# every command under `timeout`. Below it, lab_plain_start: the start of a script of plain steps.
#
#   . "$(dirname "$0")/steps.sh"; lab_start NAME DEADLINE      (before anything else of the script)
#
# lab_start: $OUT absolute (relative to where the script was called from; build/out by default),
# the working folder W=build/NAME emptied, cd to the repository root, ATTN_COMMIT from $COMMIT,
# ATTN_DRIVER, start and deadline (DEADLINE seconds from now), and the summary file that say()
# appends to. The script then declares CAP and MIN (seconds per step: its cap, and the least it
# keeps when later steps reserve theirs), reads its steps into the array todo, and calls
# step_window I before step I: step_end, which left and run_for count down to.
lab_start() {
  start=$(date +%s)
  OUT=${OUT:-}
  case $OUT in "") ;; /*) ;; *) OUT=$PWD/$OUT;; esac
  cd "$(dirname "$0")/.." || exit 1
  OUT=${OUT:-$PWD/build/out}
  W=build/$1                                       # every log and CSV of the run; bundled into $OUT
  rm -rf "$W"
  mkdir -p "$OUT" "$W"
  export ATTN_COMMIT=${COMMIT:-unknown}
  export ATTN_DRIVER=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -n 1)
  deadline=$((start + $2))
  summary=$W/summary.txt
  : > "$summary"
}
say() { echo "$*" | tee -a "$summary"; }
# lab_plain_start: the same start for a script of plain steps, without a deadline or a working
# folder (lab/capi_run.sh, lab/lesson07_run.sh): $OUT absolute and made, cd to the repository root,
# ATTN_COMMIT from $COMMIT, the summary $OUT/summary.txt, and took() for the seconds since the start.
lab_plain_start() {
  OUT=${OUT:-build/out}
  case $OUT in /*) ;; *) OUT=$PWD/$OUT ;; esac
  cd "$(dirname "$0")/.." || exit 1
  mkdir -p "$OUT"
  export ATTN_COMMIT=${COMMIT:-unknown}
  summary=$OUT/summary.txt
  t0=$(date +%s)
}
took() { echo "($(($(date +%s) - t0)) s since the start)"; }
now() { date +%s; }
left() { echo $((step_end - $(now))); }
# run_for LIMIT CMD...: CMD under timeout, at most LIMIT seconds and what is left of the step;
# 125 without running it when fewer than 5 seconds are left.
run_for() {
  local lim=$1 l; shift
  l=$(left)
  [ "$lim" -gt "$l" ] && lim=$l
  [ "$lim" -lt 5 ] && return 125
  timeout -k 5 "$lim" "$@"             # -k: a process stuck in the driver after the signal is killed
}
verdict() {   # the meaning of run_for's status
  case $1 in 0) echo ok;; 1) echo "a check failed";; 3) echo refused;; 9) echo ERRORS;; 124) echo "timed out";;
             125) echo "skipped: out of time";; *) echo "exit $1";; esac
}
# counts CSV: "ok N, FAIL N, refused N" of a driver CSV (status is column 10)
counts() {
  grep -v '^#' "$1" 2>/dev/null | tail -n +2 | awk -F, '{ if ($10 == "ok") o++; else if ($10 ~ /^FAIL/) f++; else if ($10 ~ /^unsupported/) u++ }
    END { printf "ok %d, FAIL %d, refused %d", o, f, u }'
}
# step_window I: step todo[I]'s end: its cap, less what the later steps keep back, but never less
# than its own minimum, and never past the deadline.
step_window() {
  local i=$1 t0 reserve=0 later
  t0=$(now)
  for later in "${todo[@]:i+1}"; do reserve=$((reserve + ${MIN[$later]:-0})); done
  step_end=$((t0 + CAP[${todo[$i]}]))
  [ $((deadline - reserve)) -lt $step_end ] && step_end=$((deadline - reserve))
  [ $((t0 + MIN[${todo[$i]}])) -gt $step_end ] && step_end=$((t0 + MIN[${todo[$i]}]))
  [ $deadline -lt $step_end ] && step_end=$deadline
}
# step_begin I: start step todo[I] (step, t0, step_end); 1 when it cannot run (an unknown step, or
# no $B07 to run yet), said in the summary. $g becomes the GPU's short name once $B07 exists.
step_begin() {
  step=${todo[$1]}
  t0=$(now)
  if [ -z "${CAP[$step]:-}" ]; then say "unknown step $step"; return 1; fi
  step_window "$1"
  if [ "$step" != build ] && [ ! -x "$B07" ]; then say "$step: no $B07 (build first)"; return 1; fi
  [ "$step" != build ] && [ "$g" = unknown ] && g=$("$B07" --probe 2>/dev/null | cut -d' ' -f1)
  return 0
}
# step_done: the step's time in the summary, and $OUT refreshed (the script's bundle).
step_done() {
  say "   ($step took $(( $(now) - t0 )) s; $(( $(now) - start )) s since the start)"
  bundle
}
lab_end() {
  bundle
  echo "================ summary"
  cat "$summary"
}
# smoke V LOG N M D: variant V once in e4m3, causal, B = 1, Hq = 4, Hkv = 2, --no-time, 15 s at most
# (a hang shows here); its verdict and last line in the summary, its output appended to LOG; returns
# its status (124: it hung).
smoke() {
  local rc
  run_for 15 "$B07" --variant "$1" --dtype e4m3 --b 1 --hq 4 --hkv 2 --n "$3" --m "$4" --d "$5" --causal \
      --no-time > "$W/smoke.tmp" 2>&1
  rc=$?
  say "smoke $1 d = $5, N = $3, M = $4: $(verdict $rc): $(tail -n 1 "$W/smoke.tmp" | tr -s ' ')"
  cat "$W/smoke.tmp" >> "$2"
  rm -f "$W/smoke.tmp"
  return $rc
}
