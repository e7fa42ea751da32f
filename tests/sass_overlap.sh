#!/usr/bin/env bash
# 07d's overlap in the machine code: in every kernel that runs 07d's loop (07d, 07e, 07f and the FP8
# step), the softmax of tile j must sit between the two waits of the loop -- WARPGROUP.DEPBAR.LE
# gsb0, 0x1 (S(j) is there, P V(j - 1) may still run) and WARPGROUP.DEPBAR.LE gsb0, 0x0 (P V(j - 1)
# done) -- so that its exponentials (MUFU.EX2) run under that product. Without the pin
# (07_fa3_wgmma_tma/intra_overlap.cuh, f3_wait_pv) ptxas lifts the second wait above them.
#
#   tests/sass_overlap.sh [BINARY]      default build/bin/07_fa3_wgmma_tma; needs cuobjdump (CUDA)
#   tests/sass_overlap.sh --excerpt     also print the loop's waits and exponentials of one kernel
#
# Per kernel: the exponentials between the first 0x1 wait and the 0x0 wait after it, against the
# least the softmax of a K/V tile needs (BC / 2 a thread: its share of the tile's scores). The pin is
# up to DK = 128 (where the turns are); beyond, the count is reported, not checked. Prints "ok ..."
# or "FAIL ..." per kernel (make test counts them), "skip ..." without cuobjdump; exit 1 on a
# failure.
set -u
cd "$(dirname "$0")/.." || exit 1
excerpt=0 bin=build/bin/07_fa3_wgmma_tma
for a in "$@"; do
  case $a in
    --excerpt) excerpt=1 ;;
    -h|--help) sed -n '2,/^set -u$/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "sass_overlap.sh: unknown argument '$a' (--excerpt, --help)" >&2; exit 2 ;;
    *) bin=$a ;;
  esac
done
command -v cuobjdump >/dev/null 2>&1 || { echo "skip 07d's overlap in the SASS: no cuobjdump here"; exit 0; }
[ -f "$bin" ] || { echo "FAIL 07d's overlap in the SASS: no $bin (make it first)"; exit 1; }

cuobjdump -sass "$bin" 2>/dev/null | awk -v excerpt=$excerpt '
  function flush(   kind, dk, bc, need, step) {
    if (name == "" || name !~ /f3_loop_ov/) return
    seen++
    # the tile from the mangled name: f3_tileILi<DK>ELb<WIDE>ELi<CW>ELb<BF16>E or f8_tileILi<DK>ELi<BC>ELi<CW>E
    if (match(name, /f3_tileILi[0-9]+ELb[01]ELi[0-9]ELb[01]E/)) {
      split(substr(name, RSTART, RLENGTH), t, /[A-Za-z_]+/); dk = t[3] + 0; wide = t[4] + 0
      bc = wide ? 176 : (t[5] == 3 && dk == 96) ? 96 : dk <= 128 ? 128 : dk <= 192 ? 112 : 80
      kind = "f3_tile<" dk "," (wide ? "wide" : "narrow") ",CW=" t[5] "," (t[6] ? "bf16" : "f16") ">"
    } else if (match(name, /f8_tileILi[0-9]+ELi[0-9]+ELi[0-9]E/)) {
      split(substr(name, RSTART, RLENGTH), t, /[A-Za-z_]+/); dk = t[3] + 0; bc = t[4] + 0
      kind = "f8_tile<" dk "," bc ",CW=" t[5] ">"
    } else { print "FAIL unknown tile in " name; bad++; return }
    step = name ~ /f3_grid/ ? "07d" : name ~ /f3_lazy/ ? (name ~ /f8_tile/ ? "07g" : "07f") : "07e"
    need = bc / 2
    if (dk > 128) {
      printf "ok %s %s: no pin beyond DK = 128, %d exponentials between the waits\n", step, kind, between
      return
    }
    if (w1 && w0 && between >= need)
      printf "ok %s %s: %d exponentials between wait 1 and wait 0 (the softmax of a tile: %d)\n", step, kind, between, need
    else { printf "FAIL %s %s: %d exponentials between the waits (wait 1 %s, wait 0 %s; need %d): ptxas lifted the wait\n",
                  step, kind, between, w1 ? "found" : "missing", w0 ? "found" : "missing", need; bad++ }
    if (excerpt && !shown && step == "07d" && dk == 128 && !wide && kind ~ /f16>/) { shown = 1; print ex }
  }
  /Function : / { flush(); name = $3; w1 = w0 = between = 0; ex = ""; n = 0; next }
  /WARPGROUP\.DEPBAR\.LE gsb0, 0x1/ && !w1 { w1 = 1; ex = ex "   " clean($0) "\n"; next }
  w1 && !w0 && /MUFU\.EX2/ { between++; if (between <= 3) ex = ex "   " clean($0) "\n"; else if (between == 4) ex = ex "   ...\n"; next }
  w1 && !w0 && /WARPGROUP\.DEPBAR\.LE gsb0, 0x0/ { w0 = 1; ex = ex "   " clean($0) "\n"; next }
  function clean(s) { sub(/^[ \t]*/, "", s); sub(/[ \t]*\/\* 0x[0-9a-f]+ \*\/[ \t]*$/, "", s); gsub(/[ \t]+/, " ", s); return s }
  END { flush(); if (!seen) print "skip 07d'\''s overlap in the SASS: this cuobjdump showed no kernel of 07d'\''s loop (one that cannot read sm_90a?)"; exit bad > 0 }'
