#!/usr/bin/env bash
# common/ without circles (issues 23 and 34). Three graphs, each through tsort, which names a loop
# if there is one:
#   calls     file B -> file A when B calls a function that A defines (common/*.c and *.cu);
#   includes  file B -> header A when B #includes "A";
#   units     a file and its header are one unit (driver_state.c and driver_state.h): the calls and
#             the includes between units. A job that includes the header of the file that runs it,
#             and is called by it, closes a circle here that the two graphs above miss.
# And driver.c is main() alone (every other function in it static), so that no job calls into it.
# Then the checks are shown to fail: each is run on a copy of common/ with a circle planted in it.
# Prints "ok ..." or "FAIL ..." per check; exit 1 on a failure.
#   tests/common_graph.sh             check common/
#   tests/common_graph.sh --dir DIR   check DIR instead (the self-test runs it on its copies)
#   GRAPH_DEBUG=1 tests/common_graph.sh   also print what it read: the definitions and the pairs
set -u
cd "$(dirname "$0")/.." || exit 1
dir=common
self_test=1
if [ "${1:-}" = --dir ] && [ -n "${2:-}" ]; then dir=${2%/}; self_test=0; fi
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok $*"; }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }

# A file without its comments and with its string and character literals emptied, so that neither
# a word in prose nor one in a message reads as a call.
code() {
  perl -0777 -pe 's{(/\*.*?\*/)|(//[^\n]*)|("(?:\\.|[^"\\\n])*")|(\x27(?:\\.|[^\x27\\\n])*\x27)}
                   {defined $1 ? "\n" x ($1 =~ tr/\n//) : defined $2 ? "" : defined $3 ? "\"\"" : "\x27\x27"}gse' "$1"
}
unit() { local b=${1##*/}; echo "${b%.*}"; }

shopt -s nullglob
srcs=("$dir"/*.c "$dir"/*.cu)
# The functions each file defines for the others: a line at column 0 that names a function, not
# static, not a declaration (extern "C" in front is allowed; __global__ kernels and __attributes__
# are not functions another file calls by name).
defs=$(for f in "${srcs[@]}"; do
  code "$f" | sed 's/^extern ""[[:space:]]*//' |
    awk -v f="$f" '/^[A-Za-z_][A-Za-z0-9_ *]*[ *][A-Za-z_][A-Za-z0-9_]*\(/ && !/^static/ && !/^typedef/ && !/^__global__/ && !/;[ \t]*$/ {
         s = $0; sub(/\(.*/, "", s); n = split(s, w, /[ *]+/); if (w[n] !~ /^__/) print w[n], f }'
done)
# Who calls whom, by file: every name followed by "(" in a file's code.
calls=$(for g in "${srcs[@]}"; do
  code "$g" | grep -oE '\b[A-Za-z_][A-Za-z0-9_]*[[:space:]]*\(' | tr -d '( \t' | sort -u |
    awk -v g="$g" 'NR == FNR { file[$1] = $2; next } ($1 in file) && file[$1] != g { print g, file[$1] }' \
        <(printf '%s\n' "$defs") -
done | sort -u)
includes=$(for h in "$dir"/*.c "$dir"/*.cu "$dir"/*.h "$dir"/*.cuh; do
  sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"/]*\)".*/\1/p' "$h" |
    while read -r inc; do [ -e "$dir/$inc" ] && echo "$h $dir/$inc"; done
done | sort -u)
units=$(printf '%s\n%s\n' "$calls" "$includes" | while read -r a b; do
  [ -n "$a" ] && [ "$(unit "$a")" != "$(unit "$b")" ] && echo "$dir/$(unit "$a") $dir/$(unit "$b")"
done | sort -u)

loop() {  # loop PAIRS: empty, or the loop tsort found, on one line
  local out
  out=$(printf '%s\n' "$1" | sed '/^$/d' | tsort 2>&1 >/dev/null) || true
  printf '%s' "$out" | grep -v '^tsort: -: input contains a loop:$' | sed 's/^tsort: //' | tr '\n' ' '
}
[ -n "$calls" ] || bad "$dir: no call found between its files (the scan is broken)"
l=$(loop "$calls")
if [ -z "$l" ]; then ok "$dir/*.c, *.cu: no call circle"; else bad "$dir/ files call one another in a circle: $l"; fi
l=$(loop "$includes")
if [ -z "$l" ]; then ok "$dir/ headers: no include circle"; else bad "$dir/ headers include one another in a circle: $l"; fi
l=$(loop "$units")
if [ -z "$l" ]; then ok "$dir/ units (a file and its header): no circle of calls and includes"
else bad "$dir/ units (a file and its header) call or include one another in a circle: $l"; fi

extra=$(printf '%s\n' "$defs" | awk -v f="$dir/driver.c" '$2 == f && $1 != "main" { print $1 }')
if [ -z "$extra" ]; then ok "$dir/driver.c: main() alone"; else bad "$dir/driver.c defines more than main() for the others: $extra"; fi

# ---- the checks can fail: each planted circle, on a copy of common/, fails its check ----
if [ "$self_test" = 1 ]; then
  tmp=$(mktemp -d) || exit 1
  trap 'rm -rf "$tmp"' EXIT
  plant() {  # plant NAME WANT EDIT: copy common/, run EDIT in the copy; WANT: the FAIL text expected, or "" for none
    local name=$1 want=$2 edit=$3 out rc
    rm -rf "$tmp/common" && cp -r common "$tmp/common"
    (cd "$tmp/common" && eval "$edit")
    out=$("$0" --dir "$tmp/common" 2>&1); rc=$?
    if [ -z "$want" ] && [ "$rc" -eq 0 ]; then ok "self-test: $name"
    elif [ -n "$want" ] && [ "$rc" -ne 0 ] && printf '%s\n' "$out" | grep -q "^FAIL .*$want"; then ok "self-test: $name is found"
    else bad "self-test: $name: exit $rc, output: $(printf '%s' "$out" | tr '\n' ' ')"; fi
  }
  # report.c calls the sweep, which calls report_emit (report.c)
  plant "a call circle (report.c -> sweep.c -> report.c)" "call one another in a circle" \
    'printf "int run_sweep(void *);\nint planted(void) { return run_sweep(0); }\n" >> report.c'
  # harness.h includes jobs.h, which includes driver_state.h, which includes harness.h
  plant "an include circle (harness.h -> jobs.h -> driver_state.h -> harness.h)" "include one another in a circle" \
    'printf "#include \"jobs.h\"\n" >> harness.h'
  # report.c includes driver_state.h, and driver_state.c calls report_emit: the files' graphs have
  # no circle, the units' has (the shape of the circle through driver.h before issue 34)
  plant "a unit circle (report.c includes driver_state.h; driver_state.c calls report.c)" "units .* in a circle" \
    'printf "#include \"driver_state.h\"\n" >> report.c'
  # driver.c defines a function a job could call
  plant "a function beside main() in driver.c" "driver.c defines more than main" \
    'printf "int planted_helper(void) { return 0; }\n" >> driver.c'
  # a function named in a comment or a message is not a call
  plant "a function named in a comment or a string is not a call" "" \
    'printf "/* run_sweep(D)\n   run_one(D) */\nstatic const char *planted = \"run_sweep(D)\";\n" >> report.c'
fi

[ -n "${GRAPH_DEBUG:-}" ] && printf "%s\n" "--- defs" "$defs" "--- calls" "$calls" "--- includes" "$includes" "--- units" "$units"
[ "$fail" -eq 0 ]
