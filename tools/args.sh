# shellcheck shell=bash
# What the scripts of tools/ share about their command line. Sourced, not run, before the script
# changes folder:  . "$(dirname "$0")/args.sh"
#
#   tool_noargs "$@"        for a script that takes no argument: --help or -h prints its usage
#                           (exit 0); anything else is refused (exit 2) before the script does a thing
#   tool_usage              print the script's usage, its header comment (the # lines after line 1), exit 0
#   tool_refuse ARG ALLOWED one line on stderr, "tools/<name>: unknown argument 'ARG' (ALLOWED)", exit 2
#   tool_shown TEXT         TEXT as a message shows it: in single quotes, each control byte (a newline,
#                           an escape) as \xNN, cut after 200 characters with "..."
#   tool_words TEXT         TEXT into the array WORDS, split as below; 1 (WORDS_ERR says why) on an
#                           unmatched quote or a backslash at the end
#   tool_rung WHAT TEXT     TEXT printed if it is a rung number (digits: 3 or 03), else refused in one
#                           line naming the rungs (exit 2); WHAT (stage, profile) names the make target
#   tool_rung_dir N         rung N's folder (N from tool_rung; 1 or 2 digits), or nothing
#   tool_rung_of_make WHAT  the rung that make stage / make profile was given (below), checked by
#                           tool_rung: printed (nothing for none), or refused (one line, exit 2)
#
# tool_words: how make's ARGS (make stage 5 ARGS="..."), LADDER_ARGS and RUNG_ARGS become arguments.
# A shell's word splitting and quotes, and nothing else: nothing is expanded or run.
#   - blanks (spaces, tabs, newlines) separate arguments;
#   - '...' keeps everything inside as it is, blanks included;
#   - "..." too, except that \" \\ \$ \` inside stand for " \ $ `;
#   - outside quotes, a backslash keeps the next character as it is (\  is a blank inside an argument);
#   - quotes next to other text join it: --csv="my file.csv" is one argument, --csv=my file.csv;
#   - $HOME, $(...), `...`, *, ~ stay as written: the argument is those characters.
# So ARGS='--csv "my file.csv"' is the two arguments --csv and my file.csv, and ARGS='"" x' is an
# empty argument and x. This is not eval: no text from a user is ever run by a shell.
#
# tool_rung_of_make: make hands the words after "stage" or "profile" (make stage 5 -> 5) in
# MAKE_RUNG_GOALS, and N (make stage N=5, or N in the environment) in N, with where N came from
# (make's $(origin N)) in MAKE_RUNG_N_FROM. One of the two, or both when they are the same text;
# one word (make profile: or none). Two words (make stage 5 6), two different numbers (make stage 5
# N=6) or a word that is not a number (make stage abc, make stage "1; echo hi") are refused in one
# line. make reads a word that starts with - as an option of its own, before the Makefile is read:
# make stage -1 gets make's own "invalid option" and usage (exit 2), and nothing of this project runs
# (after --, make stage -- -1, it is a goal, and refused here).

TOOL_SELF=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
TOOL_NAME=tools/$(basename "$0")

tool_usage() {
  awk 'NR == 1 { next } /^#/ { sub(/^# ?/, ""); print; next } { exit }' "$TOOL_SELF"
  exit 0
}

tool_shown() {
  local s=${1:0:200} out="" c i
  if [[ $s == *[[:cntrl:]]* ]]; then
    for ((i = 0; i < ${#s}; i++)); do
      c=${s:i:1}
      if [[ $c == [[:cntrl:]] ]]; then printf -v c '\\x%02x' "'$c"; fi
      out+=$c
    done
  else
    out=$s
  fi
  printf "'%s'%s" "$out" "$([ ${#1} -gt 200 ] && echo ...)"
}

tool_refuse() {
  echo "$TOOL_NAME: unknown argument $(tool_shown "$1") ($2)" >&2
  exit 2
}

tool_noargs() {
  case ${1-} in
    -h|--help) [ $# -eq 1 ] && tool_usage ;;
  esac
  [ $# -eq 0 ] || tool_refuse "$1" "it takes none; --help shows its usage"
}

tool_words() {
  local s=$1 n=${#1} i c w="" inw=0 q=""
  WORDS=() WORDS_ERR=""
  for ((i = 0; i < n; i++)); do
    c=${s:i:1}
    if [ "$q" = "'" ]; then
      if [ "$c" = "'" ]; then q=""; else w+=$c; fi
    elif [ "$q" = '"' ]; then
      if [ "$c" = '"' ]; then q=""
      elif [ "$c" = '\' ] && [[ ${s:i+1:1} == [\"\\\$\`] ]]; then w+=${s:i+1:1}; i=$((i + 1))
      else w+=$c; fi
    else
      case $c in
        [[:space:]]) [ $inw = 1 ] && WORDS+=("$w"); w="" inw=0 ;;
        "'"|'"') q=$c inw=1 ;;
        '\') if [ $((i + 1)) -ge "$n" ]; then WORDS_ERR="a backslash at the end"; return 1; fi
             w+=${s:i+1:1} inw=1; i=$((i + 1)) ;;
        *) w+=$c inw=1 ;;
      esac
    fi
  done
  if [ -n "$q" ]; then WORDS_ERR="an unmatched $q quote"; return 1; fi
  [ $inw = 1 ] && WORDS+=("$w")
  return 0
}

tool_rungs() { ls -d 0[0-9]_* 2>/dev/null | tr '\n' ' ' | sed 's/ $//'; }

tool_rung() {  # tool_rung WHAT TEXT: TEXT if it is a rung number (digits), else refused in one line
  case $2 in
    ''|*[!0-9]*) echo "make $1: expected a rung number, got $(tool_shown "$2"); the rungs are $(tool_rungs)" >&2; exit 2 ;;
  esac
  printf '%s' "$2"
}

tool_rung_of_make() {
  local what=$1 g=${MAKE_RUNG_GOALS:-} n=${N:-} from=${MAKE_RUNG_N_FROM:-undefined} w
  read -ra w <<< "$g"
  if [ ${#w[@]} -gt 1 ]; then
    echo "make $what: expected one rung number, got $(tool_shown "$g"); the rungs are $(tool_rungs)" >&2
    exit 2
  fi
  if [ -n "$g" ] && [ -n "$n" ] && [ "$g" != "$n" ]; then
    case $from in environment*) from=" (from the environment)" ;; *) from="" ;; esac
    echo "make $what: the rung is given twice, as $(tool_shown "$g") and as N=$(tool_shown "$n")$from: give one" >&2
    exit 2
  fi
  [ -z "$g$n" ] || tool_rung "$what" "${g:-$n}"
}

tool_rung_dir() {  # tool_rung_dir N: rung N's folder (N = 3 or 03), or nothing (as make finds it)
  [ ${#1} -le 2 ] || return 0
  ls -d "$(printf '%02d' "$((10#$1))")"_* 2>/dev/null | head -n 1
}
