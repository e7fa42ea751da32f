#!/usr/bin/env bash
# Rung 07 in step order (issue 34), checked without a GPU:
#   - each step's file includes the step before it, in the order 07a-07f, and nothing later;
#   - no step file declares a function without defining it (a later step's functions are policies
#     given as template parameters, never forward declarations);
#   - the 16-bit files name nothing of the FP8 step (FP8, f8_, e4m3): it lives in fp8.cuh, fp8.cu,
#     fp8_quant.h and common/hopper_fp8.cuh;
#   - the lines a learner reads for 07f, the 16-bit files and common/hopper.cuh: at most 1,250
#     (issue 34); a self-test shows the check fails on a list one line over; a note of the kernels'
#     path alone.
# Prints "ok ..." / "FAIL ..." per check; exit 1 on a failure. bash, grep and awk only.
set -u
cd "$(dirname "$0")/.." || exit 1
R=07_fa3_wgmma_tma fail=0
ok() { echo "ok $*"; }
bad() { echo "FAIL $*"; fail=1; }
steps=(tma_wgmma.cuh warp_specialized.cuh ping_pong.cuh intra_overlap.cuh persistent.cuh lazy_rescale.cuh)
prev=""
for f in "${steps[@]}"; do
  [ -f "$R/$f" ] || { bad "$R/$f: missing"; continue; }
  inc=$(grep -oE '^#include "[a-z_0-9]+\.cuh?"' "$R/$f" | sed 's/#include "//; s/"$//')
  if [ -z "$prev" ]; then
    [ -z "$inc" ] && ok "$f: the first step includes no other step" || bad "$f: includes $inc"
  else
    [ "$inc" = "$prev" ] && ok "$f: includes $prev alone, the step before" || bad "$f: includes '$(echo $inc)', not the step before ($prev) alone"
  fi
  # a declaration without a body: a line ending in ");" at file scope whose line starts a function
  decl=$(awk '/^[[:space:]]*(\/\/|\*|\/\*)/ { next } /\{/ { depth += gsub(/\{/, "{") } /\}/ { depth -= gsub(/\}/, "}") }
              depth == 0 && /^(static|template|extern|__device__|inline)/ && /\);[[:space:]]*$/ && /\(/ { print FILENAME ":" NR ": " $0 }' "$R/$f")
  [ -z "$decl" ] && ok "$f: no function declared without its body" || bad "$f: a declaration without a body: $decl"
  prev=$f
done
sixteen=("$R/fa3.cu" "$R/fa3.h" "${steps[@]/#/$R/}")
fp8=$(grep -nE 'FP8|f8_|e4m3' "${sixteen[@]}" common/hopper.cuh | grep -v 'rung_fp8_variants')
[ -z "$fp8" ] && ok "the 16-bit files and common/hopper.cuh name nothing of the FP8 step" || bad "FP8 in a 16-bit file: $fp8"
BUDGET=1250
budget() {  # budget FILE...: the files' lines together against BUDGET
  local n; n=$(cat "$@" | wc -l)
  if [ "$n" -le "$BUDGET" ]; then ok "the 16-bit files of rung 07 and common/hopper.cuh: $n lines (at most $BUDGET)"
  else bad "the 16-bit files of rung 07 and common/hopper.cuh: $n lines, over issue 34's $BUDGET"; fi
}
budget "${sixteen[@]}" common/hopper.cuh
tmp=$(mktemp) || exit 1
awk -v n=$((BUDGET + 1)) 'BEGIN { for (i = 0; i < n; i++) print "//" }' > "$tmp"
case $(budget "$tmp") in FAIL*) ok "self-test: $((BUDGET + 1)) lines fail the budget" ;; *) bad "self-test: $((BUDGET + 1)) lines pass the budget" ;; esac
rm -f "$tmp"
echo "note: the kernels' path alone (the step files and common/hopper.cuh, no host code): $(cat "${steps[@]/#/$R/}" common/hopper.cuh | wc -l) lines"
exit $fail
