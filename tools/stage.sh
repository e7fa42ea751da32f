#!/usr/bin/env bash
# make stage N [ARGS="..."]: run one rung on its default shape (or ARGS), every variant it has, as one
# table: one header, then one row per variant (each variant runs in a process of its own, with
# --no-header once the header is out, so that a crash in one still lets the others run).
# Each rung's default shape is one it runs (rung 06's is a decode step; build/bin/<rung> --help
# shows it), so without a GPU this reaches the device check (exit 4) for every rung.
#
#   tools/stage.sh N [ARGS]   rung N (3 or 03); ARGS one string, e.g. '--n 8192 --causal'
#   tools/stage.sh --make     what make stage runs: the rung from make (make stage 3, or N=3), ARGS
#                             from the environment, where make puts them as they were typed
#   tools/stage.sh --help     this text
#
# ARGS reaches each variant's binary split as a shell splits words, and nothing more (tools/args.sh,
# tool_words): blanks separate arguments, '...' and "..." keep blanks, a backslash keeps the next
# character; nothing in it is expanded or run. make stage 5 ARGS='--csv "my file.csv"' passes --csv
# and my file.csv; a `...` or $(...) in ARGS is passed as those characters. An unmatched quote is
# refused (exit 2).
# make stage refuses two rung numbers (make stage 5 6), a second one in N (make stage 5 N=6) and a
# word that is not a number (make stage abc), each in one line (exit 2), building nothing. make reads
# a word that starts with - as an option of its own before the Makefile is read: make stage -1 gets
# make's "invalid option" and its usage (exit 2), and nothing of this project runs (make stage -- -1
# hands it on, and it is refused here).
#
# Exit: 0 every variant ran and passed, or refused the shape by design (the binary's exit 3, an
#       'unsupported' row: an FP8 step given 16-bit inputs, say), at least one of them ran;
#       1 a variant failed its check or crashed (any other exit), named on the last lines;
#       2 bad arguments (usage, or ARGS the binary refuses: said once, for the first variant);
#       3 every variant refused the shape: nothing ran;
#       4 no CUDA device (said once).
# STAGE_BIN: the folder of the binaries (default build/bin; tests/tools.sh points it at fakes).
set -u
. "$(dirname "$0")/args.sh"
cd "$(dirname "$0")/.." || exit 1
bindir=${STAGE_BIN:-build/bin}
case ${1:-} in
  -h|--help) [ $# -eq 1 ] || tool_refuse "$2" "--help takes nothing after it"; tool_usage ;;
  --make)    [ $# -eq 1 ] || tool_refuse "$2" "--make takes nothing after it: make passes N and ARGS in the environment"
             n=$(tool_rung_of_make stage) || exit 2; args=${ARGS:-} ;;
  -*)        tool_refuse "$1" "tools/stage.sh N [ARGS], --make, --help" ;;
  *)         [ $# -le 2 ] || tool_refuse "$3" "tools/stage.sh N [ARGS]: ARGS is one string; quote it"
             n=${1:-}; [ -z "$n" ] || n=$(tool_rung stage "$n") || exit 2; args=${2:-} ;;
esac
if [ -z "$n" ]; then
  echo "usage: make stage 3   (or make stage N=3; add ARGS=\"--n 8192 --causal\" for another shape)"
  echo "rungs: $(tool_rungs)"
  exit 2
fi
tool_words "$args" || { echo "make stage: ARGS has $WORDS_ERR: $(tool_shown "$args") (tools/args.sh says how ARGS is split)" >&2; exit 2; }
dir=$(tool_rung_dir "$n")
if [ -z "$dir" ]; then
  echo "make stage: no rung $n: the rungs are $(tool_rungs)" >&2
  exit 2
fi
if [ ! -x "$bindir/$dir" ]; then
  echo "make stage: $bindir/$dir is not built: make stage $n builds it" >&2
  exit 2
fi
bin=$bindir/$dir
echo "== $dir ($(sed -n 's/^# //p' "$dir/README.md" 2>/dev/null | head -n 1))"
seen=$(mktemp) || exit 1
trap 'rm -f "$seen"' EXIT
ran=0 failed="" header=()
for v in $("$bin" --list | cut -f1); do
  "$bin" --variant "$v" ${header[@]+"${header[@]}"} ${WORDS[@]+"${WORDS[@]}"} | tee "$seen"
  rc=${PIPESTATUS[0]}
  case $rc in
    0) ran=$((ran + 1)) ;;
    3) ;;                        # refused by design: its row says unsupported, and why
    4) exit 4 ;;                 # no device: said once is enough
    2) exit 2 ;;                 # bad arguments: the same for every variant
    *) failed="$failed $v (exit $rc$( [ "$rc" -gt 128 ] && echo ", signal $((rc - 128))"))," ;;
  esac
  [ ${#header[@]} -eq 0 ] && grep -q '^rung ' "$seen" && header=(--no-header)
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
