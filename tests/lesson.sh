#!/usr/bin/env bash
# The lesson format (issue 34; CONTRIBUTING.md says it): each rung's README.md is the lesson,
# <rung>/NOTES.md the lab notebook. Checks, without a build or a GPU:
#   - budgets: a rung's README.md <= 250 lines (07: 450, 08: 350), the top README.md <= 300,
#     CONTRIBUTING.md <= 150, tests/prose_numbers.txt <= 300 rows (not counting # lines and blank ones);
#   - the top README.md: the heading right after "## Start here" is the code map (it says "code map");
#   - no README.md names a commit (7 to 40 lowercase hex digits with a letter and a digit, a word of
#     its own, not 1e100-like: the rule of the project's before-stop hook) or results/lab;
#   - a rung's README.md: its first line "# Rung NN ..." (NN its folder's number), then these level-2
#     headings and no other, in this order: What changed, Reading order, Prediction, Result, What is
#     still wrong; no other level-1 heading; level-3 and deeper headings only in rungs 07 and 08,
#     inside What changed, Reading order or Prediction (per-step subsections);
#   - its "## Reading order": at least 3 anchors, each numbered item starting with one; an anchor is
#     `path:identifier` in backticks, the path from the rung's folder, else from the repository root
#     (`../common/softmax_state.h:md_merge` or `common/softmax_state.h:md_merge`); the file exists and
#     DEFINES the identifier: a function with its body, a struct, union, enum or class with its body
#     (a template's too), a typedef or using alias, a #define, or a variable with an initializer at
#     file scope (C, C++, CUDA); a def or class (Python); a function (shell); a target (Makefile). A
#     call, or a declaration ending in ';', is not a definition;
#   - every rung folder has its <rung>/NOTES.md.
# Headings and anchors inside ``` fences do not count. Each check prints "ok ..." or "FAIL file:
# why", and below a FAIL the lines at fault as "    file:line: ...".
#
#   tests/lesson.sh              the self-test (the checks on made-up files, good and bad), then this
#                                repository
#   tests/lesson.sh ROOT         the self-test, then the tree at ROOT
#   tests/lesson.sh --self-test  the self-test alone
# Exits 1 when a check fails. make test runs it (tools/run_tests.sh).
here=$PWD
. "$(dirname "$0")/lib.sh"
MAX_SHOWN=12       # lines at fault shown under a FAIL; the rest counted

# ---- helpers: each reads one file and prints what it finds, one item a line ----

# headings FILE: "LINE<TAB>LEVEL<TAB>TEXT" per ATX heading outside ``` / ~~~ fences
headings() {
  awk '/^[ \t]*(```|~~~)/ { fence = !fence; next } !fence && /^##?#?#?#?#?[ \t]/ {
    m = $0; match(m, /^#+/); lvl = RLENGTH; t = substr(m, lvl + 1); sub(/^[ \t]+/, "", t); sub(/[ \t#]+$/, "", t)
    printf "%d\t%d\t%s\n", FNR, lvl, t }' "$1"
}
# hashes FILE: "LINE: HASH" per word that looks like a commit (the rule of the project's before-stop hook)
hashes() {
  grep -noE '\b[0-9a-f]{7,40}\b' "$1" | awk -F: '$2 ~ /[a-f]/ && $2 ~ /[0-9]/ && $2 !~ /^[0-9]+e[0-9]+$/ { print $1 ": " $2 }'
}
# section FILE TITLE: "LINE<TAB>TEXT" of the lines under "## TITLE" up to the next level-1 or -2
# heading, fenced lines left out
section_lines() {
  awk -v T="$2" '/^[ \t]*(```|~~~)/ { fence = !fence; next } fence { next }
    /^##?[ \t]/ { t = $0; sub(/^#+[ \t]+/, "", t); sub(/[ \t#]+$/, "", t); in_ = (t == T && /^##[ \t]/); next }
    in_ { printf "%d\t%s\n", FNR, $0 }' "$1"
}

# The definitions of an identifier in a C, C++ or CUDA file: "KIND LINE" per definition (macro,
# struct, typedef, function, variable), "declaration LINE" per declaration ending in ';', "mention LINE"
# per other use. Comments, strings and preprocessor lines (but #define) are left out; the rest is
# split into tokens, and each token equal to ID is judged by the tokens around it.
read -r -d '' AWK_C_DEFS <<'EOF'
function push(t) { T[++n] = t; L[n] = FNR }
function iskw(t) { return t ~ /^(return|else|do|case|goto|sizeof|new|delete|throw|typeof|decltype|if|while|for|switch|co_return|co_await|and|or|not)$/ }
function isattr(t) { return t ~ /^(__attribute__|__launch_bounds__|__align__|alignas|__declspec|__cluster_dims__|__maxnreg__)$/ }
function isword(t) { return t ~ /^[A-Za-z_][A-Za-z0-9_]*$/ }
function before(k) { k--; while (k > 0 && T[k] == ")" && (k in M) && isattr(T[M[k] - 1])) k = M[k] - 2; return k }   # skip __launch_bounds__(..) etc.
function after_angle(j,   d) { if (T[j] != "<") return j; d = 0     # past a template argument list
  for (; j <= n; j++) { if (T[j] == "<") d++; else if (T[j] == ">") { if (--d == 0) return j + 1 } else if (T[j] ~ /^[;{}]$/) return j } return j }
function tagged(o) { return T[o - 1] ~ /^(struct|union|enum)$/ || (isword(T[o - 1]) && T[o - 2] ~ /^(struct|union|enum)$/) }   # { of a struct body
function stmt_start(k) {                      # the first token of the statement that holds token k (a struct body inside it skipped)
  for (k = k - 1; k > 0; k--) { if ((k in M) && (T[k] == ")" || T[k] == "]" || (T[k] == "}" && tagged(M[k])))) { k = M[k]; continue } if (T[k] ~ /^[;{}]$/) break }
  return k + 1 }
{ s = $0; out = ""; i = 1; len = length(s)
  while (i <= len) { c = substr(s, i, 1); c2 = substr(s, i, 2)
    if (incmt) { if (c2 == "*/") { incmt = 0; i += 2; out = out " " } else i++; continue }
    if (c2 == "//") break
    if (c2 == "/*") { incmt = 1; i += 2; continue }
    if (c == "\"" || (c == "'" && substr(s, i - 1, 1) !~ /[0-9A-Fa-f]/)) { q = c; i++; while (i <= len && substr(s, i, 1) != q) { if (substr(s, i, 1) == "\\") i++; i++ } i++; out = out " 0 "; continue }
    out = out c; i++ }
  if (cont) { cont = (s ~ /\\[ \t]*$/); next }
  if (out ~ /^[ \t]*#/) { cont = (s ~ /\\[ \t]*$/)
    if (match(out, /^[ \t]*#[ \t]*define[ \t]+[A-Za-z_][A-Za-z0-9_]*/)) { m = substr(out, RSTART, RLENGTH); sub(/.*[ \t]/, "", m); if (m == ID) print "macro " FNR }
    next }
  while (match(out, /[A-Za-z_][A-Za-z0-9_]*|[0-9][A-Za-z0-9_.]*|::|->|==|!=|<=|>=|[^ \t\r]/)) { push(substr(out, RSTART, RLENGTH)); out = substr(out, RSTART + RLENGTH) } }
END { for (i = 1; i <= n; i++) { t = T[i]; D[i] = bd; PD[i] = pd     # brackets matched; D, PD: the brace and paren depth of each token
    if (t == "(" || t == "[" || t == "{") { S[++sp] = i; if (t == "{") bd++; if (t == "(") pd++ }
    else if (t == ")" || t == "]" || t == "}") { if (t == "}") D[i] = --bd; if (t == ")") PD[i] = --pd; if (sp > 0) { M[S[sp]] = i; M[i] = S[sp]; sp-- } } }
  for (i = 1; i <= n; i++) { if (T[i] != ID) continue; b = before(i); p = T[b]; kind = ""
    if (p ~ /^(struct|union|enum|class)$/) {                          # struct X { / struct X<64> { / struct X : base { / struct X;
      j = after_angle(i + 1); if (T[j] == ":") for (; j <= n && T[j] !~ /^[;{(=]$/; j++) ;
      kind = T[j] == "{" ? "struct" : T[j] == ";" ? "declaration" : "" }
    else if (p == "using" && T[i + 1] == "=") kind = "typedef"
    else if (T[stmt_start(i)] == "typedef" && (T[i + 1] ~ /^[;\[]$/ || (p == "*" && T[i - 2] == "(" && T[i + 1] == ")" && T[i + 2] == "("))) kind = "typedef"
    else if (T[j = after_angle(i + 1)] == "(" && (j in M)) {       # name(...) then { : a function, if a type stands before the name
      for (k = M[j] + 1; k <= n; k++) { if (T[k] ~ /^(const|noexcept|override|final|volatile|__restrict__|mutable)$/) continue
        if (isattr(T[k]) && T[k + 1] == "(" && ((k + 1) in M)) { k = M[k + 1]; continue }
        if (T[k] == "->") { while (k < n && T[k + 1] !~ /^[;{]$/) k++; continue }
        break }
      typed = (isword(p) && !iskw(p)) || p ~ /^(\*|&|>|::)$/
      if (T[k] == "{" && typed) kind = "function"; else if (T[k] == ";" && typed) kind = "declaration" }
    else if (D[i] == 0 && PD[i] == 0 && T[stmt_start(i)] != "template" && (isword(p) && !iskw(p) || p == "*") && (T[i + 1] == "=" || (T[i + 1] == "[" && ((i + 1) in M) && T[M[i + 1] + 1] == "="))) kind = "variable"
    print (kind == "" ? "mention" : kind) " " L[i] } }
EOF
# defs FILE ID: the lines "KIND LINE" for FILE (C family, Python, shell, Makefile); "unknown" where
# the kind of file is not one of these
defs() {
  case $1 in
    *.c|*.h|*.cu|*.cuh|*.cc|*.cpp|*.hpp|*.cxx|*.inl) awk -v ID="$2" "$AWK_C_DEFS" "$1" ;;
    *.py) awk -v ID="$2" '{ s = $0; sub(/^[ \t]*(async[ \t]+)?/, "", s) }
            s ~ "^(def|class)[ \t]+" ID "[ \t]*[(:]" { print "function " FNR; next } index($0, ID) { print "mention " FNR }' "$1" ;;
    *.sh|*.bash) awk -v ID="$2" '$0 ~ "^[ \t]*(function[ \t]+)?" ID "[ \t]*\\(\\)" || $0 ~ "^[ \t]*function[ \t]+" ID "([ \t]|$)" { print "function " FNR; next }
            index($0, ID) { print "mention " FNR }' "$1" ;;
    Makefile|*/Makefile|*.mk) awk -v ID="$2" '$0 ~ "^" ID "[ \t]*(:|[:?+]?=)" || $0 ~ "^[^\t#:=]*[ \t]" ID "[ \t]*:" { print "target " FNR; next }
            index($0, ID) { print "mention " FNR }' "$1" ;;
    *) echo unknown ;;
  esac
}

# report FILE WHAT WHY LINES: "ok FILE: WHAT" when LINES is empty, else "FAIL FILE: WHY" and LINES
# (each "LINE: text") below it as "    FILE:LINE: text", the first MAX_SHOWN of them
report() {
  if [ -z "$4" ]; then echo "ok $1: $2"; return; fi
  echo "FAIL $1: $3"
  printf '%s\n' "$4" | head -n "$MAX_SHOWN" | sed "s|^|    $1:|"
  local more; more=$(( $(printf '%s\n' "$4" | wc -l) - MAX_SHOWN ))
  [ "$more" -gt 0 ] && echo "    ... and $more more"
  return 0
}
budget() {  # budget FILE MAX WHAT [HINT]: a file's lines against its budget
  local n; n=$(wc -l < "$1")
  if [ "$n" -le "$2" ]; then echo "ok $1: $n lines, within the budget of $2"
  else echo "FAIL $1: $n lines; the budget of $3 is $2${4:+ ($4)}"; fi
}

# ---- the checks, on the tree in the current folder ----
check_tree() {
  local d f n lim rows hs hd next_ text bad sec nanch anchors a path id file what item inum first
  # budgets
  for f in 0[0-9]_*/README.md; do
    [ -f "$f" ] || continue
    case $f in 07_*) lim=450 ;; 08_*) lim=350 ;; *) lim=250 ;; esac
    budget "$f" "$lim" "rung ${f:0:2}'s README.md" "the lab notebook's part belongs in the rung's NOTES.md"
  done
  if [ -f README.md ]; then budget README.md 300 "the top README.md" "the detail belongs in the rungs' pages or CONTRIBUTING.md"; else echo "FAIL README.md: there is none"; fi
  if [ -f CONTRIBUTING.md ]; then budget CONTRIBUTING.md 150 "CONTRIBUTING.md" "the lesson format and the budgets, said once"; else echo "FAIL CONTRIBUTING.md: there is none"; fi
  if [ -f tests/prose_numbers.txt ]; then
    rows=$(grep -cvE '^[[:space:]]*(#|$)' tests/prose_numbers.txt)
    if [ "$rows" -le 300 ]; then echo "ok tests/prose_numbers.txt: $rows rows, within the budget of 300"
    else echo "FAIL tests/prose_numbers.txt: $rows rows; the budget is 300 (keep the few typed numbers that matter; a generated block needs none)"; fi
  fi
  # the top README: the code map right after "Start here"
  if [ -f README.md ]; then
    hd=$(headings README.md)
    n=$(printf '%s\n' "$hd" | awk -F'\t' '$2 == 2 && tolower($3) == "start here" { print $1; exit }')
    if [ -z "$n" ]; then echo "FAIL README.md: no \"## Start here\" heading (the code map comes right after it)"
    else
      next_=$(printf '%s\n' "$hd" | awk -F'\t' -v N="$n" '$1 > N { print $1 ": " substr("######", 1, $2) " " $3; exit }')
      case $(printf '%s' "$next_" | tr '[:upper:]' '[:lower:]') in
        *"code map"*) echo "ok README.md: the code map right after \"## Start here\" (line ${next_%%:*})" ;;
        *) report README.md "" "the heading right after \"## Start here\" (line $n) is not the code map (it must say \"code map\")" "${next_:-$n: (no heading after it)}" ;;
      esac
    fi
  fi
  # every README.md: no commit, no results/lab
  while IFS= read -r f; do
    hs=$(hashes "$f")
    report "$f" "no commit hash" "$(printf '%s\n' "$hs" | grep -c .) commit hash(es); a README names none (the CSVs carry their commits; NOTES.md may name them)" "$hs"
    report "$f" "no results/lab path" "names results/lab (the lab's results belong in NOTES.md)" "$(grep -n 'results/lab' "$f" | cut -c1-160)"
  done < <(find . \( -path ./.git -o -path ./build \) -prune -o -name README.md -type f -print | sed 's|^\./||' | sort)
  # each rung folder
  for d in 0[0-9]_*/; do
    d=${d%/}; f=$d/README.md
    if [ -f "$d/NOTES.md" ]; then echo "ok $d/NOTES.md: there"; else echo "FAIL $d: no NOTES.md (the lab notebook: what leaves the README goes there)"; fi
    [ -f "$f" ] || { echo "FAIL $f: there is none"; continue; }
    # first line and headings
    bad=$(head -n 1 "$f" | awk -v NN="${d:0:2}" '$0 !~ ("^# Rung " NN "([ \t]|$)") { print "1: the first line is \"" substr($0, 1, 80) "\", not \"# Rung " NN " — <title>\"" }')
    bad+=$(headings "$f" | awk -F'\t' -v STEPS="$([[ $d == 07_* || $d == 08_* ]] && echo 1)" '
      BEGIN { nw = split("What changed|Reading order|Prediction|Result|What is still wrong", W, "|") }
      $1 == 1 && $2 == 1 { next }
      $2 == 1 { printf "\n%d: a level-1 heading \"# %s\" (only the first line is one)", $1, $3; next }
      $2 == 2 { cur = $3; for (i = 1; i <= nw && W[i] != $3; i++) ;
        if (i > nw) printf "\n%d: \"## %s\" is not one of the lesson'"'"'s headings", $1, $3
        else if (i in SEEN) printf "\n%d: a second \"## %s\"", $1, $3
        else if (i < top) printf "\n%d: \"## %s\" out of order: it comes after \"## %s\" (the order: %s, %s, %s, %s, %s)", $1, $3, W[top], W[1], W[2], W[3], W[4], W[5]
        if (i <= nw) { SEEN[i] = 1; if (i > top) top = i }; next }
      !STEPS { printf "\n%d: a level-%d heading \"%s\" (subsections only in rungs 07 and 08)", $1, $2, $3; next }
      cur !~ /^(What changed|Reading order|Prediction)$/ { printf "\n%d: a level-%d heading \"%s\" under \"## %s\" (per-step subsections only under What changed, Reading order, Prediction)", $1, $2, $3, cur }
      END { for (i = 1; i <= nw; i++) if (!(i in SEEN)) printf "\nend: no \"## %s\"", W[i] }')
    report "$f" "first line and the five headings in order" "not the lesson's layout (\"# Rung NN — title\", then ## What changed, Reading order, Prediction, Result, What is still wrong, nothing else at that level)" "$(printf '%s' "$bad" | sed '/^$/d')"
    # the reading order's anchors
    sec=$(section_lines "$f" "Reading order")
    bad="" nanch=0 anchors=""
    while IFS=$'\t' read -r n text; do
      [ -n "$n" ] || continue
      if [[ $text =~ ^[0-9]+\.[[:space:]] ]]; then
        item=${text#*.}; item=${item#"${item%%[![:space:]]*}"}; inum=${text%%.*}
        first=""; [[ $item =~ ^\`([^\`]+)\` ]] && first=${BASH_REMATCH[1]}
        [[ $first =~ ^[^[:space:]:]*[./][^[:space:]:]*:[^[:space:]]+$ ]] || bad+=$'\n'"$n: item $inum does not start with a \`file:function\` anchor"
      fi
      while [[ $text =~ \`([^\`]*)\` ]]; do
        a=${BASH_REMATCH[1]}; text=${text#*"\`$a\`"}
        [[ $a =~ ^[^[:space:]:]*[./][^[:space:]:]*:[^[:space:]]+$ ]] || continue     # path:thing, the path with a . or a /
        path=${a%%:*} id=${a#*:}; id=${id%()}
        case " $anchors " in *" $a "*) ;; *) anchors+=" $a"; nanch=$((nanch + 1)) ;; esac
        if ! [[ $id =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]]; then bad+=$'\n'"$n: \`$a\`: \"$id\" is not an identifier (an anchor is file:function)"; continue; fi
        if [ -f "$d/$path" ]; then file=$d/$path; elif [ -f "$path" ]; then file=$path
        else bad+=$'\n'"$n: \`$a\`: no file $path (looked for $d/$path, then $path from the repository root)"; continue; fi
        what=$(defs "$file" "$id")
        case $what in
          unknown) bad+=$'\n'"$n: \`$a\`: $file is not C, C++, CUDA, Python, shell or a Makefile: its definitions cannot be checked" ;;
          *macro*|*struct*|*typedef*|*function*|*variable*|*target*) ;;
          *declaration*) bad+=$'\n'"$n: \`$a\`: $file only declares $id (line $(printf '%s\n' "$what" | awk '$1 == "declaration" { print $2; exit }'), ending in ';'); the anchor names the file that defines it" ;;
          *mention*) bad+=$'\n'"$n: \`$a\`: $file does not define $id, only uses it (line $(printf '%s\n' "$what" | awk '{ print $2; exit }'))" ;;
          *) bad+=$'\n'"$n: \`$a\`: no $id in $file" ;;
        esac
      done
    done <<< "$sec"
    if [ -z "$sec" ]; then bad+=$'\n'"1: no \"## Reading order\" section"
    elif [ "$nanch" -lt 3 ]; then bad+=$'\n'"$(( $(printf '%s\n' "$sec" | head -n 1 | cut -f1) - 1 )): $nanch anchor(s); a reading order has at least 3 (\`file:function\` in backticks)"; fi
    report "$f" "$nanch reading-order anchors, each defined where it points" "a reading-order anchor that does not resolve, or too few" "$(printf '%s' "$bad" | sed '/^$/d')"
  done
}

# ---- the self-test: the checks on made-up files, where the right answer is known ----
self_test() {
  local st=$tmp/self got want out
  mkdir -p "$st"
  # the definition finder on one C/CUDA file
  cat > "$st/defs.cu" <<'EOF'
#define SQUARE(x) ((x) * (x))
#define MULTI_LINE(a) \
    not_a_definition(a) { }
struct declared_only;
struct with_body { int a; };
typedef struct { float m, d; } md_t;
typedef float scalar_t;
enum class step { one, two };
template <int Br> struct __align__(16) tile_t { float v[Br]; };
__device__ float forward_declared(float x);
/* a comment: comment_only(x) { } */
// line_comment_only(x) { }
static const char *s = "string_only(x) { }";
template <int Br, typename T>
__global__ void __launch_bounds__(256) kernel_def(const T *q, float *o) {
    float y = called_only(q[0]);
    if (y > 0) o[0] = forward_declared(y);
}
__device__ __forceinline__ float
split_line_def(float x)
{
    return called_only(x) * 2.0f;
}
static inline int *pointer_def(int n) { return 0; }
extern "C" const int *const variants_def[] = {0, 0};
static const int a_value = 1;
int main(void) { return called_only(1) > 0 ? a_value : 0; }
EOF
  for want in "SQUARE macro" "MULTI_LINE macro" "not_a_definition -" "declared_only declaration" "with_body struct" \
              "md_t typedef" "scalar_t typedef" "step struct" "tile_t struct" "forward_declared declaration" \
              "comment_only -" "line_comment_only -" "string_only -" "kernel_def function" "called_only mention" \
              "split_line_def function" "pointer_def function" "variants_def variable" "a_value variable" "missing_name -"; do
    got=$(defs "$st/defs.cu" "${want%% *}" | awk '{ print $1 }' | sort -u | paste -sd' ')
    case ${want#* } in
      -) check "self-test: defs.cu has no ${want%% *}" "${got:--}" - ;;
      mention) check "self-test: defs.cu only calls ${want%% *}" "$got" mention ;;
      *) case " $got " in *" ${want#* } "*) echo "ok self-test: defs.cu defines ${want%% *} (${want#* })" ;;
           *) echo "FAIL self-test: defs.cu defines ${want%% *} (${want#* }); the finder says '${got:-nothing}'" ;; esac ;;
    esac
  done
  printf 'def lesson_fn(x):\n    return helper(x)\n' > "$st/p.py"
  check "self-test: p.py defines lesson_fn, only calls helper" "$(defs "$st/p.py" lesson_fn | cut -d' ' -f1):$(defs "$st/p.py" helper | cut -d' ' -f1)" "function:mention"
  printf 'step_begin() { :; }\nfunction step_done { :; }\nstep_begin\n' > "$st/s.sh"
  check "self-test: s.sh defines step_begin and step_done" "$(defs "$st/s.sh" step_begin | head -n 1 | cut -d' ' -f1):$(defs "$st/s.sh" step_done | cut -d' ' -f1)" "function:function"
  # the hash rule: prose that only looks like hex is no commit
  printf 'tolerance 1e-3, mask 0x7fffffff, 1e10000 FLOP, deadbeef, sm_90a, e4m3, fp16x2\nrows at commit 9c21c3d and fabeb235bcf3\n' > "$st/h.md"
  check "self-test: the hash rule finds the two commits and nothing else" "$(hashes "$st/h.md" | paste -sd' ')" "2: 9c21c3d 2: fabeb235bcf3"

  # a whole made-up tree, first good: no FAIL
  local g=$st/good
  mkdir -p "$g/common" "$g/tests" "$g/01_first" "$g/07_hopper"
  printf '# A course\n\nOne line.\n\n## Start here\n\n```\n# a shell comment in a fence is no heading\nmake\n```\n\n## The code map\n\ncommon/ and the rungs.\n\n## More\n' > "$g/README.md"
  printf '# Contributing\n\nShort.\n' > "$g/CONTRIBUTING.md"
  printf '# FILE ;; CSV ;; FILTER ;; VALUE ;; FORMAT ;; TEXT\n01_first/README.md ;; results/x.csv ;; rung=01 ;; tflops ;; %%.1f ;; 1.0\n\n' > "$g/tests/prose_numbers.txt"
  printf '#pragma once\n/* the state */\ntypedef struct { float m, d; } md;\nstatic inline md md_merge(md a, md b) { return a; }\n' > "$g/common/md.h"
  printf '#include "../common/md.h"\n__global__ void first_kernel(float *o) { o[0] = 0; }\nstatic const int first_rung = 1;\n' > "$g/01_first/first.cu"
  printf '__global__ void hop_kernel(float *o) { o[0] = 0; }\n__device__ void hop_step(float *o) { o[0] = 1; }\n' > "$g/07_hopper/hop.cu"
  cat > "$g/01_first/README.md" <<'EOF'
# Rung 01 — the first kernel

One thread per row, after the article.

## What changed

Everything.

## Reading order

1. `first.cu:first_kernel` — the whole kernel; see `first.cu` too.
2. `../common/md.h:md_merge` and `common/md.h:md` — the merge.
3. `first.cu:first_rung()` — the descriptor.

```
1. `nothing.cu:in_a_fence` — fences do not count
```

## Prediction

Slow: 4 FLOP per byte.

## Result

A table.

## What is still wrong

- Slow ([NOTES.md](NOTES.md)).
EOF
  sed -e 's/^# Rung 01 — the first kernel/# Rung 07 — Hopper/' -e 's/first\.cu:first_kernel/hop.cu:hop_kernel/' -e 's/first\.cu:first_rung()/hop.cu:hop_step/' \
      -e 's/^Everything\./### 07a\n\nOne step./' "$g/01_first/README.md" > "$g/07_hopper/README.md"
  touch "$g/01_first/NOTES.md" "$g/07_hopper/NOTES.md"
  out=$(cd "$g" && check_tree)
  check "self-test: a good tree has no FAIL" "$(printf '%s\n' "$out" | grep -c '^FAIL')" 0
  [ "$(printf '%s\n' "$out" | grep -c '^FAIL')" = 0 ] || printf '%s\n' "$out" | grep -v '^ok' | sed 's/^/    /'
  check "self-test: ... and counts its anchors" "$(printf '%s\n' "$out" | grep -c '^ok 0[17]_[a-z]*/README.md: 4 reading-order anchors')" 2

  # then bad: each fault in its own place, each found with its file and line
  local b=$st/bad; cp -r "$g" "$b"
  printf '# A course\n\n## Start here\n\nmake\n\n## Install\n\n## Code map\n' > "$b/README.md"
  { echo '# Contributing'; seq 150; } > "$b/CONTRIBUTING.md"
  for n in $(seq 301); do echo "x ;; y ;; z ;; $n ;; %d ;; $n"; done >> "$b/tests/prose_numbers.txt"
  rm "$b/07_hopper/NOTES.md"
  mkdir -p "$b/tests/data"; printf '# data\n\nfrom results/lab/h100-x.csv at commit 2e58e75\n' > "$b/tests/data/README.md"
  cat > "$b/01_first/README.md" <<'EOF'
# Rung 1 — first

## Reading order

1. `first.cu:first_kernel` — fine.
2. `first.cu:md_merge` — a call? no: not in first.cu at all.
3. Read `first.cu:first_kernel` first (the item starts with a word).
4. `../common/md.h:md.m` — not an identifier.
5. `missing.cu:gone` — no such file.

## What changed

## Prediction

### a subsection in rung 01

## Notes

## Result
EOF
  printf '__device__ void hop_step(float *o);\n__global__ void hop_kernel(float *o) { hop_step(o); helper(o); }\n' > "$b/07_hopper/hop.cu"
  cat > "$b/07_hopper/README.md" <<'EOF'
# Rung 07 — Hopper

## What changed

## Reading order

1. `hop.cu:hop_step` — declared only.
2. `hop.cu:helper` — called only.

## Prediction

## Result

### a subsection under Result

## What is still wrong
EOF
  seq 500 >> "$b/07_hopper/README.md"
  out=$(cd "$b" && check_tree)
  for want in \
      "FAIL README.md: the heading right after \"## Start here\" (line 3) is not the code map" "    README.md:7: ## Install" \
      "FAIL CONTRIBUTING.md: 151 lines; the budget of CONTRIBUTING.md is 150" \
      "FAIL tests/prose_numbers.txt: 302 rows; the budget is 300" \
      "FAIL 07_hopper/README.md: 516 lines; the budget of rung 07's README.md is 450" \
      "FAIL 07_hopper: no NOTES.md" \
      "FAIL tests/data/README.md: 1 commit hash(es)" "    tests/data/README.md:3: 2e58e75" \
      "FAIL tests/data/README.md: names results/lab" "    tests/data/README.md:3:from results/lab/h100-x.csv at commit 2e58e75" \
      "    01_first/README.md:1: the first line is \"# Rung 1 — first\", not \"# Rung 01 — <title>\"" \
      "    01_first/README.md:11: \"## What changed\" out of order: it comes after \"## Reading order\" (the order: What changed, Reading order, Prediction, Result, What is still wrong)" \
      "    01_first/README.md:15: a level-3 heading \"a subsection in rung 01\" (subsections only in rungs 07 and 08)" \
      "    01_first/README.md:17: \"## Notes\" is not one of the lesson's headings" \
      "    01_first/README.md:end: no \"## What is still wrong\"" \
      "    01_first/README.md:6: \`first.cu:md_merge\`: no md_merge in 01_first/first.cu" \
      "    01_first/README.md:7: item 3 does not start with a \`file:function\` anchor" \
      "    01_first/README.md:8: \`../common/md.h:md.m\`: \"md.m\" is not an identifier (an anchor is file:function)" \
      "    01_first/README.md:9: \`missing.cu:gone\`: no file missing.cu (looked for 01_first/missing.cu, then missing.cu from the repository root)" \
      "    07_hopper/README.md:14: a level-3 heading \"a subsection under Result\" under \"## Result\" (per-step subsections only under What changed, Reading order, Prediction)" \
      "    07_hopper/README.md:7: \`hop.cu:hop_step\`: 07_hopper/hop.cu only declares hop_step (line 1, ending in ';'); the anchor names the file that defines it" \
      "    07_hopper/README.md:8: \`hop.cu:helper\`: 07_hopper/hop.cu does not define helper, only uses it (line 2)" \
      "    07_hopper/README.md:5: 2 anchor(s); a reading order has at least 3 (\`file:function\` in backticks)"; do
    if printf '%s\n' "$out" | grep -qF -- "$want"; then echo "ok self-test: a bad tree: ${want#"${want%%[! ]*}"}"
    else echo "FAIL self-test: a bad tree: no line with '$want' in:"; printf '%s\n' "$out" | grep -v '^ok ' | sed 's/^/    /'; fi
  done
  check "self-test: a bad tree passes none of its rung READMEs' layout and anchor checks" \
    "$(printf '%s\n' "$out" | grep -c '^ok 0[17]_[a-z]*/README.md: \(first line\|[0-9]* reading-order\)')" 0
}

case ${1:-} in
  -h|--help) sed -n '2,/^here=/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
  --self-test) out=$(self_test) ;;
  -*) echo "lesson.sh: unknown option '$1' (ROOT, --self-test, --help)" >&2; exit 2 ;;
  *) root=${1:-.}; case $root in /*|.) ;; *) root=$here/$root ;; esac
     [ -d "$root" ] || { echo "lesson.sh: no folder $root" >&2; exit 2; }
     out=$(self_test; cd "$root" && check_tree) ;;
esac
printf '%s\n' "$out"
! printf '%s\n' "$out" | grep -q '^FAIL '      # exit 1 on any FAIL
