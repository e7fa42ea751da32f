#!/usr/bin/env bash
# shellcheck disable=SC2016  # the $(...) handed to make are make variables, expanded by make
# Rung 05's tuning run (lab, not course). Builds lab/tune05.cu -- fa2.cu's kernel in every
# candidate configuration and ablation, one variant each (t0, t1, ...) -- into $BUILD/bin/tune05,
# then times every variant on the shapes of its head dim: N = 1024 and 4096, causal and not,
# B = 16384 / N, H = 2048 / d (2^25 elements of Q per shape).
#
#   lab/tune05.sh [CSV]          build, then time (needs a GPU); CSV defaults to $BUILD/tune05.csv
#   lab/tune05.sh --build-only   build only (nvcc; no GPU needed)
#
# The CSV is the driver's (metadata lines, then its columns) with two columns in front:
# cfg (the variant's index) and config (its tile sizes and switches). One line per row is printed.
# BUILD, NVCC and ARCH as for make; TUNE_IDS (e.g. "t2 t17") times only those variants.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}

# --- build. The Makefile builds the rung (its common objects, and 05a's object, which fa2.cu's
# own list of variants names) and says what it compiles and links a rung with; tune05.cu is then
# compiled and linked the same way, by nvcc.
make -s BUILD="$BUILD" "$BUILD/bin/05_fa2_outer_q"
mk() { make -s BUILD="$BUILD" --eval "tune05-print: ; @echo $1" tune05-print; }
nvcc=$(mk '$(NVCC)')
nvflags=$(mk '$(filter-out -MMD -MP,$(NVFLAGS))')
arch=$(mk '$(ARCH)')
ldlibs=$(mk '$(LDLIBS)')
read -r -a link_objs <<< "$(mk '$(DRIVER_OBJ) $(COMMON_OBJ)')"
mkdir -p "$BUILD/obj/lab" "$BUILD/bin"
# shellcheck disable=SC2086  # flag lists
"$nvcc" $nvflags -c lab/tune05.cu -o "$BUILD/obj/lab/tune05.o"
# shellcheck disable=SC2086
"$nvcc" $arch -o "$BUILD/bin/tune05" "$BUILD/obj/lab/tune05.o" "$BUILD/obj/05_fa2_outer_q/fa2_wmma.o" \
    "${link_objs[@]}" $ldlibs
bin=$BUILD/bin/tune05
echo "built $bin: $("$bin" --list | wc -l) configurations"
[ "${1:-}" = --build-only ] && exit 0

# --- time
out=${1:-$BUILD/tune05.csv}
tmp=$BUILD/tune05.rows.csv
rows=$BUILD/tune05.rows
rm -f "$out" "$tmp" "$rows"
"$bin" --list | while IFS=$'\t' read -r id config _; do
  if [ -n "${TUNE_IDS:-}" ] && ! printf '%s\n' $TUNE_IDS | grep -qx "$id"; then continue; fi
  d=${config#d=}; d=${d%% *}
  for c in "" --causal; do
    for n in 1024 4096; do
      before=0; [ -f "$tmp" ] && before=$(wc -l < "$tmp")
      # shellcheck disable=SC2086  # $c is empty or one flag
      "$bin" --variant "$id" --b $((16384 / n)) --h $((2048 / d)) --n $n --d "$d" $c \
          --quiet --csv "$tmp" < /dev/null > /dev/null 2>&1 || true
      # the run's row, if it wrote one (ok, FAIL or unsupported)
      if [ -f "$tmp" ] && [ "$(wc -l < "$tmp")" -gt "$before" ]; then
        tail -n 1 "$tmp" | sed "s/^/${id#t},$config,/" >> "$rows"
      else
        echo "tune05: $id d=$d N=$n $c wrote no row" >&2
      fi
    done
  done
done
if [ ! -s "$rows" ]; then
  echo "tune05: no rows: is there a CUDA device? ($bin --probe)" >&2
  exit 1
fi
{ grep '^#' "$tmp"; echo "cfg,config,$(grep '^rung,' "$tmp")"; cat "$rows"; } > "$out"
rm -f "$tmp" "$rows"
awk -F, '!/^#/ && !/^cfg,/ {printf "tune %-2s %-44s N=%-5s causal=%s %-12s %9s ms %8s TFLOP/s\n",
         $1, $2, $7, $10, substr($12, 1, 12), $13, $16}' "$out"
