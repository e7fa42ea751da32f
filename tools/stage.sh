#!/usr/bin/env bash
# make stage N [ARGS="..."]: run one rung on its default shape (or ARGS), every variant it has, as one
# table: one header, then one row per variant (each variant runs in a process of its own, with
# --no-header once the header is out, so that a crash in one still lets the others run).
# Each rung's default shape is one it runs (rung 06's is a decode step; build/bin/<rung> --help
# shows it), so without a GPU this reaches the device check (exit 4) for every rung.
#
# Exit: 0 every variant ran and passed, or refused the shape by design (the binary's exit 3, an
#       'unsupported' row: an FP8 step given 16-bit inputs, say), at least one of them ran;
#       1 a variant failed its check or crashed (any other exit), named on the last lines;
#       2 bad arguments (usage, or ARGS the binary refuses: said once, for the first variant);
#       3 every variant refused the shape: nothing ran;
#       4 no CUDA device (said once).
# STAGE_BIN: the folder of the binaries (default build/bin; tests/tools.sh points it at fakes).
set -u
cd "$(dirname "$0")/.." || exit 1
n=${1:-}
args=${2:-}
bindir=${STAGE_BIN:-build/bin}
rungs=$(ls -d 0[0-9]_* | tr '\n' ' ')
if [ -z "$n" ]; then
  echo "usage: make stage 3   (or make stage N=3; add ARGS=\"--n 8192 --causal\" for another shape)"
  echo "rungs: $rungs"
  exit 2
fi
case $n in
  *[!0-9]*) echo "make stage: expected a rung number, got '$n'; the rungs are $rungs"; exit 2 ;;
esac
dir=$(ls -d "$(printf '%02d' "$((10#$n))")"_* 2>/dev/null | head -n 1)
if [ -z "$dir" ] || [ ! -x "$bindir/$dir" ]; then
  echo "no rung $n: the rungs are $rungs"
  exit 2
fi
bin=$bindir/$dir
echo "== $dir ($(sed -n 's/^# //p' "$dir/README.md" 2>/dev/null | head -n 1))"
seen=$(mktemp) || exit 1
trap 'rm -f "$seen"' EXIT
ran=0 failed="" header=""
for v in $("$bin" --list | cut -f1); do
  # shellcheck disable=SC2086
  "$bin" --variant "$v" $header $args | tee "$seen"
  rc=${PIPESTATUS[0]}
  case $rc in
    0) ran=$((ran + 1)) ;;
    3) ;;                        # refused by design: its row says unsupported, and why
    4) exit 4 ;;                 # no device: said once is enough
    2) exit 2 ;;                 # bad arguments: the same for every variant
    *) failed="$failed $v (exit $rc$( [ "$rc" -gt 128 ] && echo ", signal $((rc - 128))"))," ;;
  esac
  [ -z "$header" ] && grep -q '^rung ' "$seen" && header=--no-header
done
echo
example=$("$bin" --help | sed -n 's/^example:[[:space:]]*//p')
echo "other shapes: make stage $n ARGS=\"$example\"   (build/bin/$dir --help lists every flag and the defaults)"
if [ -n "$failed" ]; then
  echo "make stage $n: FAILED:${failed%,}"
  exit 1
fi
[ "$ran" -gt 0 ] || exit 3
exit 0
