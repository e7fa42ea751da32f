#!/usr/bin/env bash
# Every repository path that a README or a source comment names exists.
#
#   tests/paths.sh [ROOT]      (default: the repository this script lives in)
#
# Read: every *.md (except under results/, which holds logs) in full, and the comments of every
# *.c, *.h, *.cu, *.cuh (/* */ and //), *.sh, *.gp and Makefile (#). build/ and hidden folders are
# not read.
#
# A path is
#   - a token whose first folder is a top-level folder of the repository or one of common/ tools/
#     lab/ results/ plots/ sweeps/ tests/ 0N_*/ (a rung folder counts without its slash too):
#     looked up from the repository root;
#   - a bare document name (any *.md, e.g. README.md) or Makefile: looked up beside the
#     file that names it, then at the root -- a document outside the repository is reported;
#   - in a README, a link target [text](target) that is not a URL, and a token starting with ../:
#     looked up from the README's folder.
# Tokens with <, >, *, $, {, } or [ are patterns or placeholders (results/<gpu>-<sweep>.csv,
# results/*.csv) and are not looked up; trailing punctuation and a #anchor are dropped.
#
# Prints "ok <file> ..." per file whose paths all exist, "FAIL <file>: ..." per file that names a
# missing one (each listed below it with its line), and first a check that the test itself can
# fail: a made-up README with missing paths must be reported.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
ROOT=${1:-$here}

# candidates FILE...: "file<TAB>line<TAB>path to look up<TAB>the token as written", run in ROOT
read -r -d '' AWK_CANDIDATES <<'EOF'
function type_of(f) {
  if (f ~ /\.md$/) return "md"
  if (f ~ /\.(c|h|cu|cuh)$/) return "c"
  return "hash"                               # .sh, .gp, Makefile
}
function dirof(f) { return (f ~ /\//) ? substr(f, 1, match(f, /\/[^\/]*$/) - 1) : "" }
# a/b/../c -> a/c; ./a -> a; a path that climbs out of the root comes back with a leading ../
function norm(p,   a, n, i, o, m) {
  n = split(p, a, "/"); m = 0
  for (i = 1; i <= n; i++) {
    if (a[i] == "." || (a[i] == "" && i > 1 && i < n)) continue
    if (a[i] == ".." && m > 0 && o[m] != "..") { m--; continue }
    o[++m] = a[i]
  }
  p = ""; for (i = 1; i <= m; i++) p = p (i > 1 ? "/" : "") o[i]
  return p
}
function join(d, p) { return norm(d == "" ? p : d "/" p) }
function clean(t) {
  sub(/#.*/, "", t)
  while (t ~ /[.,:;!?'-]$/) t = substr(t, 1, length(t) - 1)
  return t
}
function emit(line, look, tok,   k) {
  if (look == "" || look ~ /^\.\.(\/|$)/) look = "(outside the repository)/" tok   # missing
  k = FILENAME SUBSEP look
  if (k in SEEN) return
  SEEN[k] = 1
  printf "%s\t%d\t%s\t%s\n", FILENAME, line, look, tok
}
function scan(text, line, md,   t, tok, first, d) {
  d = dirof(FILENAME)
  if (md) {                                   # link targets, from the README's folder
    t = text
    while (match(t, /\]\([^) ]+\)/)) {
      tok = substr(t, RSTART + 2, RLENGTH - 3); t = substr(t, RSTART + RLENGTH)
      if (tok ~ /^[a-zA-Z][a-zA-Z+.-]*:/ || tok ~ /^#/ || tok ~ /[<>*${}\[]/) continue
      tok = clean(tok); if (tok == "") continue
      emit(line, join(d, tok), tok)
    }
  }
  t = text
  while (match(t, /[A-Za-z0-9_.\/<>*${}#\[\]-]+/)) {
    tok = substr(t, RSTART, RLENGTH); t = substr(t, RSTART + RLENGTH)
    if (tok ~ /[<>*${}\[\]]/) continue
    tok = clean(tok); if (tok == "" || tok ~ /^\/\//) continue
    if (md && tok ~ /^\.\.\//) { emit(line, join(d, tok), tok); continue }
    sub(/^\.\//, "", tok)
    first = tok; sub(/\/.*/, "", first)
    if (tok ~ /\// && (first in TOP)) { emit(line, norm(tok), tok); continue }
    if (first ~ /^0[0-9]_[A-Za-z0-9_]+$/) { emit(line, norm(tok), tok); continue }
    if (tok ~ /^[A-Za-z0-9_.-]+\.md$/ || tok == "Makefile") {
      if (d != "" && system("test -e '" ROOTQ "/" d "/" tok "'") == 0) emit(line, d "/" tok, tok)
      else emit(line, tok, tok)
    }
  }
}
BEGIN { n = split(TOPS, a, " "); for (i = 1; i <= n; i++) TOP[a[i]] = 1 }
FNR == 1 { kind = type_of(FILENAME); inb = 0 }
kind == "md" { scan($0, FNR, 1); next }
kind == "c" {                                 # the text of /* */ and // comments
  s = $0; out = ""; i = 1; n = length(s); instr = 0
  while (i <= n) {
    c = substr(s, i, 1); c2 = substr(s, i, 2)
    if (inb) { if (c2 == "*/") { inb = 0; i += 2; out = out " "; continue } out = out c; i++; continue }
    if (instr) { if (c == "\\") { i += 2; continue } if (c == q) instr = 0; i++; continue }
    if (c == "\"" || c == "'") { instr = 1; q = c; i++; continue }
    if (c2 == "/*") { inb = 1; i += 2; continue }
    if (c2 == "//") { out = out " " substr(s, i + 2); break }
    i++
  }
  if (out != "") scan(out, FNR, 0)
  next
}
{                                             # a # comment: outside quotes, after a blank or ;
  s = $0; n = length(s); instr = 0
  for (i = 1; i <= n; i++) {
    c = substr(s, i, 1)
    if (instr) { if (c == "\\" && q == "\"") { i++; continue } if (c == q) instr = 0; continue }
    if (c == "\"" || c == "'") { instr = 1; q = c; continue }
    if (c == "#" && (i == 1 || substr(s, i - 1, 1) ~ /[ \t;]/)) { scan(substr(s, i + 1), FNR, 0); break }
  }
}
EOF

# check ROOT: the ok/FAIL lines for every file under ROOT
check() {
  local root=$1 tops files
  tops="common tools lab results plots sweeps tests $(cd "$root" && find . -mindepth 1 -maxdepth 1 -type d \
        -not -name build -not -name .git | sed 's|^\./||' | tr '\n' ' ')"
  mapfile -t files < <(cd "$root" && find . \( -path ./build -o -path ./results -o -path './.*' \) -prune -o \
        -type f \( -name '*.md' -o -name '*.c' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' \
        -o -name '*.sh' -o -name '*.gp' -o -name Makefile \) -print | sed 's|^\./||' | sort)
  [ ${#files[@]} -gt 0 ] || { echo "FAIL paths: no file to read under $root"; return; }
  (cd "$root" && awk -v TOPS="$tops" -v ROOTQ="$root" "$AWK_CANDIDATES" "${files[@]}") |
  while IFS=$'\t' read -r file line look tok; do
    if [ -e "$root/$look" ]; then printf '%s\t+\n' "$file"; else printf '%s\t-\t%s\t%s\n' "$file" "$line" "$tok"; fi
  done |
  awk -F'\t' -v ALL="${files[*]}" '
    { if ($2 == "+") good[$1]++; else { nbad[$1]++; bad[$1] = bad[$1] sprintf("      line %d: %s\n", $3, $4) } }
    END {
      n = split(ALL, f, " ")
      for (i = 1; i <= n; i++) {
        if (nbad[f[i]]) printf("FAIL %s: %d missing path%s\n%s", f[i], nbad[f[i]], (nbad[f[i]] > 1 ? "s" : ""), bad[f[i]])
        else if (good[f[i]]) printf "ok %s (%d paths)\n", f[i], good[f[i]]
      }
    }'
}

# The test can fail: a made-up repository whose README names missing paths.
self=$(mktemp -d) || exit 1
trap 'rm -rf "$self"' EXIT
mkdir -p "$self/tools" "$self/01_rung"
: > "$self/tools/real.sh"
cat > "$self/README.md" <<'EOF'
tools/real.sh and [rung 01](01_rung/) exist; results/<gpu>-<sweep>.csv and plots/*.png are patterns.
tools/fake.sh, see DESIGN.md and [missing](01_rung/gone.md#part).
EOF
printf '/* names tools/alsofake.c in a comment */\nconst char *s = "tools/notacomment.c";\n' > "$self/01_rung/k.cu"
got=$(check "$self")
want_fail="tools/fake.sh DESIGN.md 01_rung/gone.md tools/alsofake.c"
miss=""
for p in $want_fail; do printf '%s\n' "$got" | grep -q "line [0-9]*: $p\$" || miss="$miss $p"; done
if [ -n "$miss" ]; then echo "FAIL paths self-check: not reported:$miss"
elif printf '%s\n' "$got" | grep -qE 'real\.sh$|notacomment|<gpu>|\*\.png|01_rung/$'; then
  echo "FAIL paths self-check: reported a path that exists, a pattern or code: $got"
else echo "ok paths self-check: made-up paths in a README and a comment are reported"; fi

check "$ROOT"
