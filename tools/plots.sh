#!/usr/bin/env bash
# make plots: each plots/<name>.gp with a "# csv: <sweep> ..." line draws <gpu>-<name>.png from
# results/<gpu>-<sweep>.csv for each <gpu> that has one (from results/<sweep>.csv: <name>.png; a
# "+<sweep>" is one the PNG needs). The scripts read the CSVs; this hands them the paths, ids, rung
# names and a subtitle (CSVs, commits; sub_<sweep>: one CSV's part of it).
# A CSV need not have the ladder's columns: results/<gpu>-fp8-accuracy.csv (method,d,N,rmse,rel_l2)
# is drawn by plots/fp8-accuracy.gp, its ids the methods; without that CSV no such PNG is drawn.
#   RESULTS_DIR=results   where the CSVs are          PLOTS_OUT=plots   where the PNGs go
#   ATTN_NO_INSTALL=1     never apt-get install a missing gnuplot (else, as root, gnuplot-nox is)
#   PLOTS_TERMINAL=png    force a gnuplot terminal (default pngcairo, else png)
# Exit 0: drawn; 1: a script failed; 2: no usable gnuplot here (nothing drawn; the tour goes on), or
# an argument: tools/plots.sh (make plots) takes none but --help (-h), which prints this text.
set -u
. "$(dirname "$0")/args.sh"
tool_noargs "$@"
caller=$PWD
cd "$(dirname "$0")/.." || exit 1
here() { case $1 in /*) printf '%s' "$1" ;; *) printf '%s/%s' "$caller" "$1" ;; esac; }
RES=results;  [ -n "${RESULTS_DIR:-}" ] && RES=$(here "$RESULTS_DIR")
OUT=plots;    [ -n "${PLOTS_OUT:-}" ] && OUT=$(here "$PLOTS_OUT")
RES=${RES%/} OUT=${OUT%/}
shopt -s nullglob
compgen -G "$RES/*.csv" >/dev/null || { echo "no $RES/*.csv yet: nothing to plot"; exit 0; }
# ---- gnuplot 5.4 or later (arrays, assignments inside expressions) -------------------------------
# Without one, a single line: what is missing, and the one command that draws the plots.
if command -v apt-get >/dev/null; then
  get="$([ "$(id -u)" = 0 ] || echo "sudo ")apt-get install gnuplot-nox && make plots"
else
  get="install gnuplot 5.4 or later (with a png terminal), then make plots"
fi
tried=""
if ! command -v gnuplot >/dev/null && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null && [ -z "${ATTN_NO_INSTALL:-}" ]; then
  echo "gnuplot not found: installing gnuplot-nox with apt-get"
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gnuplot-nox; } >/dev/null 2>&1 ||
    tried=" (apt-get install gnuplot-nox failed here)"
fi
command -v gnuplot >/dev/null ||
  { echo "gnuplot not found$tried: plots/*.png stay as committed; to draw them: $get"; exit 2; }
gnuplot -V | awk '{ exit !($2 >= 5.4) }' ||
  { echo "plots need gnuplot 5.4 or later, not $(gnuplot -V): plots/*.png stay as committed; to draw them: $get"; exit 2; }
term=${PLOTS_TERMINAL:-}
for t in pngcairo png; do [ -z "$term" ] && gnuplot -e "set terminal" 2>&1 | grep -qw "$t" && term=$t; done
[ -n "$term" ] || { echo "this gnuplot has no png terminal: plots/*.png stay as committed; to draw them: $get"; exit 2; }
[ "$term" = png ] && export GDFONTPATH=${GDFONTPATH:-/usr/share/fonts/truetype/dejavu}
mkdir -p "$OUT" || exit 1
# ---- what gnuplot is told ---------------------------------------------------------------------------
meta() { sed -n "s/^#[[:space:]]*$2:[[:space:]]*//p" "$1" | head -n 1 | tr -d "\"'\\\\\r\`"; }
provenance() {  # "<csv> (measured at commit C on D; rerun: the last rerun line (and N earlier))"
  local c d r n
  c=$(meta "$1" commit) d=$(meta "$1" date) n=$(grep -c '^#[[:space:]]*rerun:' "$1")
  r=$(sed -n 's/^#[[:space:]]*rerun:[[:space:]]*//p' "$1" | tail -n 1 | tr -d "\"'\\\\\r\`" | sed 's/ on [0-9][0-9T:.-]*Z*$//')
  [ "$n" -gt 1 ] && r="$r (and $((n - 1)) earlier)"
  printf '%s%s' "${1#"$PWD"/}" "${c:+ (measured at commit $c${d:+ on ${d%%T*}}${r:+; rerun: $r})}"
}
ids() {  # ids with an ok row, rungs in ladder order (a bare "06" after its lettered variants), then peers;
  # float8 e4m3 rows (rung 07's FP8 step, 07g) are not the ladder's: left out, so that the last 16-bit
  # variant still names its rung and no plot draws an FP8 row among 16-bit ones (07's NOTES.md has them)
  for f; do sed '/^#/d' "$f" | awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) { if ($i == "status") s = i; if ($i == "dtype") t = i }; next }
                                         (!s || $s == "ok") && !(t && $t == "e4m3") { print $1 }'; done | tr -d '\r' | grep -v -e '^ceiling-' -e '^$' |
    sed 's/^[0-9][0-9]$/&~/' | LC_ALL=C sort -u | sed 's/~$//' | tr '\n' ' '
}
names=""                 # the rung folders' names: name_05 = "FA2 outer Q"
for d in [0-9][0-9]_*/; do
  d=${d%/}; names="$names name_${d%%_*} = \"$(printf ' %s ' "${d#*_}" | tr '_' ' ' |
    sed 's/ fa\([0-9]\) / FA\1 /; s/ wmma / WMMA /; s/ kv / KV /; s/ br / Br /; s/ q $/ Q /; s/^ //; s/ $//')\";"
done
# ---- one PNG per script and set of CSVs ---------------------------------------------------------------
status=0
for gp in plots/*.gp; do
  sweeps=$(sed -n 's/^# csv:[[:space:]]*//p' "$gp" | head -n 1)
  [ -n "$sweeps" ] || continue                        # common.gp, series.gp: loaded by the others
  name=$(basename "$gp" .gp) req=$(printf '%s\n' $sweeps | sed -n 's/^+//p') sweeps=${sweeps//+/}
  # shellcheck disable=SC2086  # (sweep names, split on purpose; a +name is a CSV the PNG needs)
  # a GPU's prefix has one hyphen: h200-profile-backward.csv is make profile's, not the backward sweep
  for px in $(for s in ${req:-$sweeps}; do for f in "$RES"/*-"$s".csv; do f=${f##*/}; f=${f%"$s".csv}
                case $f in *-*-) ;; *) echo "$f" ;; esac; done
                [ -f "$RES/$s.csv" ] && echo "."; done | sort -u); do
    px=${px#.} files=(); png=$OUT/$px$name.png
    vars="TERMINAL = '$term'; OUTFILE = '$png'; $names"
    for s in $sweeps; do
      f=$RES/$px$s.csv; [ -f "$f" ] && files+=("$f") || f=""
      vars="$vars ${s//-/_} = '${f#"$PWD"/}'; sub_${s//-/_} = \"${f:+$(provenance "$f")}\";"
    done
    sub=""; for f in "${files[@]}"; do sub="$sub${sub:+\\nand }$(provenance "$f")"; done
    dev=$(meta "${files[0]}" device) ids=$(ids "${files[@]}")
    [ -n "$ids" ] || { echo "no rows in ${files[*]#"$PWD"/}: ${png#"$PWD"/} not drawn"; continue; }
    vars="$vars DEVICE = '${dev:-${px%-}}'; SUBTITLE = \"numbers from the committed $sub\"; IDS = '$ids'"
    rm -f "$png"
    if err=$(gnuplot -e "$vars" "$gp" 2>&1 >/dev/null) && [ -s "$png" ]; then
      [ -n "$err" ] && printf '%s\n' "$err" | sed "s|^|  ($gp) |" | head -n 10
      echo "wrote ${png#"$PWD"/}"
    else
      echo "plots: gnuplot $gp failed for ${png#"$PWD"/}:"; printf '%s\n' "$err" | sed 's/^/  /' | head -n 20; status=1
    fi
  done
done
# the READMEs' numbers, from the same results (only when drawing the committed plots from results/)
[ -x tools/readme_results.sh ] && [ "$OUT" = plots ] && [ "$RES" = results ] && { tools/readme_results.sh || status=1; }
exit $status
