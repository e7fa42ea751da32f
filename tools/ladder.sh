#!/usr/bin/env bash
# make ladder: every rung (and variant) over the sweeps, on the GPU, into results/<gpu>-<sweep>.csv.
# Each CSV starts with the two ceilings (copy bandwidth, cuBLAS GEMM) measured in the same run.
#
#   SWEEPS="prefill decode article varlen"  which sweeps/<name>.txt to run (default: these four;
#                                    varlen runs rung 06 once per split planner: fa, greedy,
#                                    balanced, auto; models, the open models' shapes of
#                                    sweeps/models.txt, runs only when named: lab/gpu_run.sh models;
#                                    so does backward, sweeps/backward.txt: the backward rungs and
#                                    the peers' backward pass, where every other sweep runs the
#                                    forward rungs: a binary's --pass says which it is)
#   RUNGS="05 06 peers floor"        re-measure only these rungs (a variant id such as 05c: that variant
#                                    alone; peers: the peers' rows (PyTorch, FA4, cuDNN's FP8); floor: the
#                                    decode sweep's floor-read rows, one kernel that only reads K
#                                    and V, timed like a rung; ceilings: the two ceilings); their
#                                    old rows are replaced and the other rows (and ceilings) kept,
#                                    with a '# rerun' line
#   LADDER_ARGS="--runs 50"          more arguments for every rung (split as a shell splits words,
#                                    nothing expanded: tools/args.sh)
#   WARM_MS=5000                     --warm-ms 5000 to every rung, the floor and the peers: each
#                                    shape warmed up by 5000 ms of launches (at most 1000 of them),
#                                    so every row is timed at the GPU's sustained clock (under its
#                                    power cap), whatever ran before; a whole number from 0 to 60000
#                                    (unset or empty: off)
#   --if-device                      say "no CUDA device" and succeed without one
#   --help, -h                       this text
# A sweep SWEEPS names that has no sweeps/<name>.txt, a RUNGS word that is not a rung id, peers,
# floor or ceilings, a WARM_MS that is not a whole number from 0 to 60000, or any other argument is
# refused in one line (exit 2) before anything runs.
#
# It says first about how long the run will take (tools/estimate.awk on the last results of the same
# sweeps: each row's median times its launches, plus a second a shape), then the time so far at
# every rung variant, and at the end the time it took.
set -u
. "$(dirname "$0")/args.sh"
case ${1:-} in
  -h|--help) [ $# -eq 1 ] || tool_refuse "$2" "--help takes nothing after it"; tool_usage ;;
  ''|--if-device) [ $# -le 1 ] || tool_refuse "$2" "--if-device, --help" ;;
  *) tool_refuse "$1" "--if-device, --help; SWEEPS, RUNGS, LADDER_ARGS and WARM_MS go in the environment" ;;
esac
cd "$(dirname "$0")/.." || exit 1
read -ra words <<< "${SWEEPS:-}"
for w in ${words[@]+"${words[@]}"}; do
  [[ $w =~ ^[a-z0-9_-]+$ ]] && [ -f "sweeps/$w.txt" ] ||
    { echo "make ladder: SWEEPS names $(tool_shown "$w"), which is no sweep: the sweeps are $(ls sweeps | sed -n 's/\.txt$//p' | paste -sd' ')" >&2; exit 2; }
done
read -ra words <<< "${RUNGS:-}"
for w in ${words[@]+"${words[@]}"}; do
  [[ $w =~ ^([0-9][0-9][a-z]*|peers|floor|ceilings)$ ]] ||
    { echo "make ladder: RUNGS names $(tool_shown "$w"): a rung (05) or variant (05c) id, peers, floor or ceilings" >&2; exit 2; }
done
tool_words "${LADDER_ARGS:-}" || { echo "make ladder: LADDER_ARGS has $WORDS_ERR: $(tool_shown "$LADDER_ARGS")" >&2; exit 2; }
ladder_args=(${WORDS[@]+"${WORDS[@]}"})
warm=()
if [ -n "${WARM_MS:-}" ]; then
  [[ $WARM_MS =~ ^[0-9]{1,5}$ ]] && [ $((10#$WARM_MS)) -le 60000 ] ||
    { echo "make ladder: WARM_MS is $(tool_shown "$WARM_MS"): a whole number of milliseconds from 0 to 60000" >&2; exit 2; }
  warm=(--warm-ms $((10#$WARM_MS)))
  ladder_args+=("${warm[@]}")
fi
BIN=build/bin
probe=$("$BIN/00_baseline" --probe 2>/dev/null || echo none)
if [ "$probe" = none ]; then
  if [ "${1:-}" = --if-device ]; then
    echo "no CUDA device found: skipping the ladder; the plots are drawn from the committed results/"
    exit 0
  fi
  echo "make ladder needs a CUDA device; none was found" >&2
  exit 1
fi
gpu=${probe%% *}
sweeps=${SWEEPS:-prefill decode article varlen}
export ATTN_COMMIT=${ATTN_COMMIT:-$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD -- 2>/dev/null || echo -dirty)}
export ATTN_DRIVER=${ATTN_DRIVER:-$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -n 1)}
mkdir -p build/ladder results
# RUNGS as a pattern on CSV lines: the rows being re-measured
pat=""
[ -n "${RUNGS:-}" ] && pat=$(printf '%s\n' $RUNGS | sed 's/^peers$/(torch-[a-z]*|fa4|cudnn-fp8)/; s/^floor$/floor-read/; s/^ceilings$/ceiling-[a-z]*/; s/^/^/; s/$/[a-z-]*,/' | paste -sd'|')
# about how long, from the rows of the last results of these sweeps (this GPU's, else another's)
mmss() { printf '%d:%02d' $(($1 / 60)) $(($1 % 60)); }
from=()
for sw in $sweeps; do
  f=results/$gpu-$sw.csv; [ -f "$f" ] || f=$(ls results/*-"$sw".csv 2>/dev/null | head -n 1)
  [ -n "$f" ] && from+=("$f")
done
if [ ${#from[@]} -gt 0 ]; then
  est=$(awk -v PAT="$pat" -v WARM="${WARM_MS:-0}" -f tools/estimate.awk "${from[@]}" | awk '{ s += $2 } END { printf "%d", s }')
  echo "make ladder on the $(echo "$probe" | cut -d' ' -f3-): sweeps $sweeps${RUNGS:+, rungs $RUNGS}; about $(mmss "$est") by ${from[*]} (each row's median times its launches, plus a second a shape)"
else
  est=0; echo "make ladder on the $(echo "$probe" | cut -d' ' -f3-): sweeps $sweeps${RUNGS:+, rungs $RUNGS}; no earlier results to estimate the time from"
fi
t0=$SECONDS
rc=0
for sw in $sweeps; do
  out=build/ladder/$gpu-$sw.csv
  final=results/$gpu-$sw.csv
  rm -f "$out"
  if [ "$sw" = varlen ]; then
    rm -f "$out"
    "$BIN/00_baseline" --ceilings --csv "$out" || rc=1
    for pl in fa greedy balanced auto; do
      echo "== 06 --planner $pl: sweeps/$sw.txt ($(mmss $((SECONDS - t0))) so far)"
      "$BIN/06_split_kv" --planner $pl --sweep "sweeps/$sw.txt" --csv "$out" ${ladder_args[@]+"${ladder_args[@]}"} || rc=1
    done
    cp "$out" "$final"
    echo "wrote $final"
    continue
  fi
  if [ -n "${RUNGS:-}" ] && [ -f "$final" ]; then
    # keep every row not being re-measured
    grep -Ev "$pat" "$final" > "$out"
    echo "# rerun: rungs $RUNGS at commit $ATTN_COMMIT on $(date -u +%Y-%m-%dT%H:%M:%SZ)" >> "$out"
    if printf '%s\n' $RUNGS | grep -qx ceilings; then "$BIN/00_baseline" --ceilings --csv "$out" || rc=1; fi
  else
    "$BIN/00_baseline" --ceilings --csv "$out" || rc=1
  fi
  # the pass this sweep times: the backward sweep's rows are backward passes, every other's forward
  pass=forward; [ "$sw" = backward ] && pass=backward
  if { [ -z "${RUNGS:-}" ] || printf '%s\n' $RUNGS | grep -qx peers; } &&
     [ -x tools/peers.py ] && python3 -c 'import torch' 2>/dev/null; then
    echo "== peers (PyTorch SDPA$([ $pass = backward ] && echo ", backward")): sweeps/$sw.txt"
    python3 tools/peers.py $([ $pass = backward ] && echo --backward) ${warm[@]+"${warm[@]}"} --sweep "sweeps/$sw.txt" --csv "$out" ||
      echo "peers failed (optional; rows left out)"
  fi
  if [ "$sw" = decode ] && { [ -z "${RUNGS:-}" ] || printf '%s\n' $RUNGS | grep -qx floor; }; then
    echo "== floor-read: sweeps/$sw.txt"
    "$BIN/00_baseline" --read-floor --sweep "sweeps/$sw.txt" --csv "$out" ${warm[@]+"${warm[@]}"} || rc=1
  fi
  for b in "$BIN"/0[0-9]_*; do
    [ "$("$b" --pass)" = $pass ] || continue
    id=$(basename "$b" | cut -c1-2)
    if [ -n "${RUNGS:-}" ] && ! printf '%s\n' $RUNGS | grep -q "^$id[a-z]*$"; then continue; fi
    for v in $("$b" --list | cut -f1); do
      # a variant named in RUNGS alone, when RUNGS names variants of this rung and not the rung
      if [ -n "${RUNGS:-}" ] && printf '%s\n' $RUNGS | grep -q "^$id[a-z]" && ! printf '%s\n' $RUNGS | grep -qx "$id" &&
         ! printf '%s\n' $RUNGS | grep -qx "$v"; then continue; fi
      echo "== $v: sweeps/$sw.txt ($(mmss $((SECONDS - t0))) so far)"
      "$b" --variant "$v" --sweep "sweeps/$sw.txt" --csv "$out" ${ladder_args[@]+"${ladder_args[@]}"} || rc=1
      cp "$out" "$final.partial"      # progress survives an interrupted run
    done
  done
  cp "$out" "$final"
  rm -f "$final.partial"
  echo "wrote $final"
done
echo "make ladder: $(mmss $((SECONDS - t0))) (estimated $(mmss "$est"))"
exit $rc
