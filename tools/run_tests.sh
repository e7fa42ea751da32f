#!/usr/bin/env bash
# make test: the CPU tests always; the GPU correctness matrix when a CUDA device is present.
# Ends with "N passed, N failed, N skipped" and exits non-zero on any failure.
#
#   tools/run_tests.sh          what make test runs; it takes no argument but --help (-h): this text
#   RUNG_ARGS="--kv-block 64"   more arguments for every rung of the GPU matrix (make test RUNG_ARGS=...;
#                               split as a shell splits words, nothing expanded: tools/args.sh)
set -u
. "$(dirname "$0")/args.sh"
tool_noargs "$@"
cd "$(dirname "$0")/.." || exit 1
tool_words "${RUNG_ARGS:-}" || { echo "make test: RUNG_ARGS has $WORDS_ERR: $(tool_shown "$RUNG_ARGS")" >&2; exit 2; }
rung_args=(${WORDS[@]+"${WORDS[@]}"})
BIN=build/bin
pass=0 fail=0 skip=0

count() {  # count <passed> <failed> <skipped>
  pass=$((pass + $1)); fail=$((fail + $2)); skip=$((skip + $3))
}

# section COMMAND...: run a test program that prints "ok ...", "FAIL ..." or "skip ..." per check;
# show all but the ok lines, count them. A program that exits non-zero without a FAIL line, or
# prints no result at all, counts as one failure.
section() {
  local out rc p f s
  out=$("$@" 2>&1); rc=$?
  printf '%s\n' "$out" | grep -v '^ok ' || true
  p=$(printf '%s\n' "$out" | grep -c '^ok ')
  f=$(printf '%s\n' "$out" | grep -c '^FAIL ')
  s=$(printf '%s\n' "$out" | grep -c '^skip ')
  [ $rc -ne 0 ] && [ "$f" -eq 0 ] && { echo "FAIL $1 exited $rc"; f=1; }
  [ "$p" -eq 0 ] && [ "$f" -eq 0 ] && [ "$s" -eq 0 ] && { echo "FAIL $1 printed no result"; f=1; }
  echo "   $p passed, $f failed$([ "$s" -gt 0 ] && echo ", $s skipped")"
  count "$p" "$f" "$s"
}

# --- 1. CPU unit tests (reference, {m, d} merge, masks, CLI parsing, .npy, planners, ...) ---
echo "== CPU unit tests"
section "$BIN/cpu_tests"

# --- 1b. The fuzz test: the .npy reader, the sweep-file reader and the command line fed issue 21's
#         cases and a few thousand seeded mutated and random inputs, in one process (tests/fuzz.c);
#         under AddressSanitizer and UBSan where their runtime is here and starts, else without ---
echo "== fuzz: .npy files, sweep files, the command line (tests/fuzz.c)"
fuzz=$BIN/fuzz note=""
if [ -x "$BIN/fuzz_asan" ]; then
  if "$BIN/fuzz_asan" --probe >/dev/null 2>&1; then fuzz=$BIN/fuzz_asan
  elif ASAN_OPTIONS=detect_leaks=0 "$BIN/fuzz_asan" --probe >/dev/null 2>&1; then
    fuzz=$BIN/fuzz_asan note="LeakSanitizer cannot run here: leak checks off"; export ASAN_OPTIONS=detect_leaks=0
  else note="the sanitizer runtime does not start here: fuzzing without sanitizers"; fi
else
  note="this gcc cannot link -fsanitize=address,undefined (no libasan/libubsan): fuzzing without sanitizers"
fi
[ -n "$note" ] && echo "   note: $note"
section "$fuzz" --dir build/test/fuzz
unset ASAN_OPTIONS

# --- 2. The command line, through a real rung binary (no GPU needed: these fail before one) ---
echo "== command-line refusals"
section tests/cli.sh "$BIN"

# --- 2b. Every repository path that a README or a source comment names exists (no build needed) ---
echo "== paths named in READMEs and comments"
section tests/paths.sh

# --- 2c. make profile's arithmetic: an ncu export parsed, the roofline's placement, its README block
#         and plot (no GPU, no ncu: tests/data/ncu-raw.csv is written in ncu's layout) ---
echo "== profile CSV and roofline (tests/profile.sh)"
section tests/profile.sh

# --- 2d. The models sweep: NOTES.md's models block and plot made of a synthetic CSV
#         (tests/data/models-synthetic.csv), and the peers' reading of sweeps/models.txt ---
echo "== models table and plot (tests/models.sh)"
section tests/models.sh

# --- 2e. A newcomer's first commands: make without gnuplot, make stage N, readme_results.sh --help ---
echo "== first commands: make without gnuplot, make stage, --help (tests/tools.sh)"
section tests/tools.sh

# --- 2f. CONTRIBUTING.md's "Adding a rung", done in a copy of the repository: a plain rung and a
#         Hopper rung (an ARCH file, no Makefile edit) built by make, listing their variants ---
echo "== a new rung as CONTRIBUTING.md says (tests/new_rung.sh)"
section tests/new_rung.sh

# --- 2g. common/ without circles: its files' call graph and include graph (tsort), driver.c main() alone ---
echo "== common/ call and include graphs (tests/common_graph.sh)"
section tests/common_graph.sh

# --- 2h. Numbers typed into README prose, each checked against its committed CSV (tests/prose_numbers.txt) ---
echo "== numbers in README prose against the CSVs (tests/prose_numbers.sh)"
section tests/prose_numbers.sh

# --- 2i. The lesson format: the budgets, no commit or results/lab in a README, each rung README's
#         headings in order and its reading-order anchors defined where they point, a notebook per rung ---
echo "== the lesson format: READMEs and notebooks (tests/lesson.sh)"
section tests/lesson.sh

# --- 2j. Rung 07 in step order: each step's file includes the one before, no declaration of a later
#         step's function, no FP8 in the 16-bit files, those and common/hopper.cuh at most 1,250
#         lines (tests/rung07_layout.sh) ---
echo "== rung 07 in step order (tests/rung07_layout.sh)"
section tests/rung07_layout.sh

# --- 2k. 07d's overlap in the machine code, where this machine has cuobjdump (tests/sass_overlap.sh) ---
echo "== 07d's overlap in the SASS (tests/sass_overlap.sh)"
section tests/sass_overlap.sh

# --- 2l. The binding: every rung's library (common/ladder.h through ctypes) and python/ladder/,
#         no GPU and no PyTorch needed (tests/binding.py) ---
echo "== the C API and the Python package (tests/binding.py)"
if command -v python3 >/dev/null 2>&1; then
  section python3 tests/binding.py
else
  echo "   skipped: python3 not installed (the binding is checked with it)"; count 0 0 1
fi

echo "== tools/peers.py refusals (tests/peers.sh)"
section tests/peers.sh

# --- 3. Plots draw from the committed results (needs gnuplot) ---
echo "== plots from results/"
if command -v gnuplot >/dev/null 2>&1; then
  have=0
  for f in results/*-prefill.csv results/*-decode.csv results/*-article.csv results/splits-sim.csv; do
    [ -f "$f" ] && have=1
  done
  if [ $have -eq 1 ]; then
    tmp=$(mktemp -d)
    if PLOTS_OUT="$tmp" tools/plots.sh >"$tmp/log" 2>&1 && ls "$tmp"/*.png >/dev/null 2>&1; then
      echo "   ok: $(ls "$tmp"/*.png | wc -l) PNGs drawn"; count 1 0 0
    else
      echo "FAIL plots: $(tail -n 5 "$tmp/log")"; count 0 1 0
    fi
    rm -rf "$tmp"
  else
    echo "   skipped: no results/*.csv yet"; count 0 0 1
  fi
else
  echo "   skipped: gnuplot not installed (apt-get install gnuplot-nox)"; count 0 0 1
fi

# --- 4. The GPU matrix: every rung (and variant) on every line of tests/gpu_cases.txt ---
# A backward binary (--pass says backward: rung 08) runs every line too, as a gradient case: dQ, dK
# and dV checked against common/ref_bwd.c.
# Rung 06 runs it again under each split planner by name and with 64-key blocks, so that every
# plan shape (one segment per CTA, CTAs that walk several segments; fused, cluster and kernel
# merges) is checked, not only the ones the default planner picks.
echo "== GPU matrix (tests/gpu_cases.txt)"
probe=$("$BIN/00_baseline" --probe 2>/dev/null || echo none)
cases=$(grep -cv '^\s*\(#\|$\)' tests/gpu_cases.txt)
EXTRA_06="fa greedy balanced block64"
# matrix_run LABEL BINARY VARIANT -- [ARGS ...]
matrix_run() {
  local label=$1 b=$2 v=$3; shift 3
  shift
  local csv=build/test/matrix-$label.csv
  rm -f "$csv"
  "$b" --variant "$v" --sweep tests/gpu_cases.txt --no-time --quiet --csv "$csv" \
      ${rung_args[@]+"${rung_args[@]}"} "$@" > build/test/matrix-$label.log 2>&1
  local rc=$?
  # rows: status is column 10
  local rows p f s missing
  rows=$(grep -v '^#' "$csv" 2>/dev/null | tail -n +2)
  p=$(printf '%s\n' "$rows" | awk -F, '$10=="ok"' | grep -c . )
  f=$(printf '%s\n' "$rows" | awk -F, '$10 ~ /^FAIL/' | grep -c . )
  s=$(printf '%s\n' "$rows" | awk -F, '$10 ~ /^unsupported/' | grep -c . )
  missing=$((cases - p - f - s))
  if [ $missing -gt 0 ]; then
    echo "FAIL $label: $missing cases never reported (exit $rc): $(tail -n 3 build/test/matrix-$label.log)"
    f=$((f + missing))
  fi
  printf '   %-14s %2d passed, %d failed, %d refused\n' "$label" "$p" "$f" "$s"
  printf '%s\n' "$rows" | awk -F, -v L="$label" '$10 ~ /^FAIL/ {printf "FAIL %s B=%s Hq=%s Hkv=%s N=%s M=%s d=%s causal=%s: %s\n", L,$2,$3,$4,$5,$6,$7,$8,$10}'
  printf '%s\n' "$rows" | awk -F, '$10 ~ /^unsupported/ {printf "      refused B=%s Hq=%s Hkv=%s N=%s M=%s d=%s causal=%s %s: %s\n", $2,$3,$4,$5,$6,$7,$8,$9,$10}'
  count "$p" "$f" "$s"
}
if [ "$probe" = none ]; then
  nbin=0
  for b in "$BIN"/0[0-9]_*; do
    nbin=$((nbin + $("$b" --list | wc -l)))
  done
  n06=$("$BIN/06_split_kv" --list | wc -l)
  nbin=$((nbin + n06 * $(echo $EXTRA_06 | wc -w)))
  echo "   skipped: no CUDA device found ($nbin rung variant runs x $cases cases not run)"
  count 0 0 $((nbin * cases))
else
  echo "   device: $probe"
  mkdir -p build/test
  for b in "$BIN"/0[0-9]_*; do
    for v in $("$b" --list | cut -f1); do
      matrix_run "$v" "$b" "$v" --
    done
  done
  for v in $("$BIN/06_split_kv" --list | cut -f1); do
    for x in $EXTRA_06; do
      case $x in
        block64) matrix_run "$v:$x" "$BIN/06_split_kv" "$v" -- --kv-block 64 ;;
        *)       matrix_run "$v:$x" "$BIN/06_split_kv" "$v" -- --planner "$x" ;;
      esac
    done
  done
fi

# --- 5. The binding on the GPU: ladder.attention and its gradient (rung 08) against SDPA in float64,
#        every step of every rung (tests/binding_gpu.py); one skip line without PyTorch or a device ---
echo "== ladder.attention against SDPA in float64 (tests/binding_gpu.py)"
if [ "$probe" = none ]; then
  echo "   skipped: no CUDA device found"; count 0 0 1
elif command -v python3 >/dev/null 2>&1; then
  section python3 tests/binding_gpu.py
else
  echo "   skipped: python3 not installed"; count 0 0 1
fi

echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
