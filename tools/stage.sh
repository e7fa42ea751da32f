#!/usr/bin/env bash
# make stage N [ARGS="..."]: run one rung on its default shape (or ARGS), every variant it has.
# Each rung's default shape is one it runs (rung 06's is a decode step; build/bin/<rung> --help
# shows it), so without a GPU this reaches the device check (exit 4) for every rung.
set -u
cd "$(dirname "$0")/.." || exit 1
n=${1:-}
args=${2:-}
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
if [ -z "$dir" ] || [ ! -x "build/bin/$dir" ]; then
  echo "no rung $n: the rungs are $rungs"
  exit 2
fi
bin=build/bin/$dir
echo "== $dir ($(sed -n 's/^# //p' "$dir/README.md" 2>/dev/null | head -n 1))"
rc=0
for v in $("$bin" --list | cut -f1); do
  # shellcheck disable=SC2086
  "$bin" --variant "$v" $args || rc=$?
  [ $rc -eq 4 ] && exit 4      # no device: said once is enough
  [ $rc -eq 2 ] && exit 2      # bad arguments: the same for every variant
done
echo
example=$("$bin" --help | sed -n 's/^example:[[:space:]]*//p')
echo "other shapes: make stage $n ARGS=\"$example\"   (build/bin/$dir --help lists every flag and the defaults)"
exit $rc
