#!/usr/bin/env bash
# common/ without circles (issue 23): no file of it calls, however far round, a function of a file
# that calls it back; no header includes, however far round, one that includes it back; and
# driver.c is main() alone (every other function in it static), so that no job calls into it.
# The pairs (caller file, file of the callee) and (includer, included) go through tsort, which
# names a loop if there is one. Prints "ok ..." or "FAIL ..." per check; exit 1 on a failure.
set -u
cd "$(dirname "$0")/.."
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok $*"; }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }

# The functions each C file defines for the others: a line at column 0 that names a function,
# not static, not a declaration.
defs=$(for f in common/*.c; do
  awk -v f="$f" '/^[A-Za-z_][A-Za-z0-9_ *]*[ *][A-Za-z_][A-Za-z0-9_]*\(/ && !/^static/ && !/^typedef/ && !/;[ \t]*$/ {
         s = $0; sub(/\(.*/, "", s); n = split(s, w, /[ *]+/); print w[n], f }' "$f"
done)
# Who calls whom, by file: every name followed by "(" in a file, outside its /* */ comments.
calls=$(for g in common/*.c; do
  sed 's@/\*.*\*/@@g' "$g" | grep -oE '\b[A-Za-z_][A-Za-z0-9_]*[[:space:]]*\(' | tr -d '( \t' | sort -u |
    awk -v g="$g" 'NR == FNR { file[$1] = $2; next } ($1 in file) && file[$1] != g { print g, file[$1] }' \
        <(printf '%s\n' "$defs") - 
done | sort -u)
if out=$(printf '%s\n' "$calls" | tsort 2>&1 >/dev/null) && [ -z "$out" ]; then ok "common/*.c: no call circle"
else bad "common/*.c call one another in a circle: ${out//$'\n'/ }"; fi

includes=$(for h in common/*.c common/*.cu common/*.h common/*.cuh; do
  sed -n 's/^#include "\([^"/]*\)".*/\1/p' "$h" | while read -r inc; do echo "$h common/$inc"; done
done | sort -u)
if out=$(printf '%s\n' "$includes" | tsort 2>&1 >/dev/null) && [ -z "$out" ]; then ok "common/ headers: no include circle"
else bad "common/ headers include one another in a circle: ${out//$'\n'/ }"; fi

extra=$(printf '%s\n' "$defs" | awk '$2 == "common/driver.c" && $1 != "main" { print $1 }')
if [ -z "$extra" ]; then ok "common/driver.c: main() alone"; else bad "common/driver.c defines more than main() for the others: $extra"; fi

# The test can fail: a made-up pair that closes a loop is found.
if printf '%s\ncommon/report.c common/driver.c\ncommon/driver.c common/report.c\n' "$calls" | tsort >/dev/null 2>&1; then
  bad "tsort did not see a planted loop"
else ok "self-check: a planted loop is found"; fi

[ "$fail" -eq 0 ]
