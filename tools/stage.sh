#!/usr/bin/env bash
# make stage N [ARGS="..."]: run one rung on its default shape (or ARGS), every variant it has.
set -u
cd "$(dirname "$0")/.."
n=${1:-}
args=${2:-}
if [ -z "$n" ]; then
  echo "usage: make stage 3   (or make stage N=3; add ARGS=\"--n 8192 --causal\" for another shape)"
  echo "rungs: $(ls -d 0[0-9]_* | tr '\n' ' ')"
  exit 2
fi
dir=$(ls -d "$(printf '%02d' "$((10#$n))")"_* 2>/dev/null | head -n 1)
if [ -z "$dir" ] || [ ! -x "build/bin/$dir" ]; then
  echo "no rung $n: the rungs are $(ls -d 0[0-9]_* | tr '\n' ' ')"
  exit 2
fi
bin=build/bin/$dir
echo "== $dir ($(sed -n 's/^# //p' "$dir/README.md" 2>/dev/null | head -n 1))"
rc=0
for v in $("$bin" --list | cut -f1); do
  # shellcheck disable=SC2086
  "$bin" --variant "$v" $args || rc=$?
  [ $rc -eq 4 ] && exit 4      # no device: said once is enough
done
echo
echo "other shapes: make stage $n ARGS=\"--b 1 --h 16 --n 8192 --d 128 --causal\"   (--help lists every flag)"
exit $rc
