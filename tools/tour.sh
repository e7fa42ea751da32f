#!/usr/bin/env bash
# make: the course on the GPU in a few minutes. The two ceilings, every rung variant, and the PyTorch
# peers where PyTorch is installed, on the two shapes of the README's ladder table (sweeps/tour.txt:
# prefill, then decode) into results/<gpu>-tour.csv; then that table, printed; then the plots
# (tools/plots.sh). One line per step: the time so far, what the step measured, and what is left,
# with an estimate (tools/estimate.awk) from the last tour on this GPU, else from its
# results/<gpu>-{prefill,decode}.csv rows on the two shapes, else from another GPU's results.
# Without a CUDA device: one line, then the plots from the committed results/; without gnuplot
# (tools/plots.sh installs it where it can: as root, with apt-get), one more line naming the command
# that draws them, and still success: the build is what make was asked for.
#
# results/<gpu>-tour.csv holds one whole tour (each tour rewrites it): the ladder's columns (a row
# per variant and shape, the ceilings first), plus a "# step: STEP SECONDS" line per step. It is
# one run at one commit, so the ratios between its rows are ratios within one run: the README's
# ladder block can read it (<!-- results:ladder from=tour -->); the top README's table and
# plots/<gpu>-progression.png read the sweeps that make ladder keeps (results/<gpu>-<sweep>.csv).
#
#   tools/tour.sh     what make runs after the build; it takes no argument but --help (-h): this text
set -u
. "$(dirname "$0")/args.sh"
tool_noargs "$@"
cd "$(dirname "$0")/.." || exit 1
BIN=build/bin
probe=$("$BIN/00_baseline" --probe 2>/dev/null || echo none)
if [ "$probe" = none ]; then
  echo "no CUDA device found: skipping the tour; drawing the plots from the committed results/"
  tools/plots.sh; prc=$?
  [ $prc -eq 2 ] && exit 0       # no usable gnuplot: said in one line, with the command to run
  exit $prc
fi
gpu=${probe%% *} name=$(printf '%s' "$probe" | cut -d' ' -f3-)
export ATTN_COMMIT=${ATTN_COMMIT:-$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD -- 2>/dev/null || echo -dirty)}
export ATTN_DRIVER=${ATTN_DRIVER:-$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -n 1)}
W=build/tour
mkdir -p "$W" results
out=$W/$gpu-tour.csv final=results/$gpu-tour.csv
rm -f "$out"

# ---- the steps, and what each should take -------------------------------------------------------
# The forward rungs alone: the tour's shapes are forward ones, its CSV a forward table, and its
# time make's budget; a backward binary (--pass says so, rung 08) is make stage 8's and the
# backward sweep's (SWEEPS=backward make ladder -> results/<gpu>-backward.csv).
ids=(ceilings) bins=("")
for b in "$BIN"/0[0-9]_*; do
  [ "$("$b" --pass)" = forward ] || continue
  for v in $("$b" --list | cut -f1); do ids+=("$v"); bins+=("$b"); done
done
nvar=$((${#ids[@]} - 1))
if [ -x tools/peers.py ] && python3 -c 'import torch' 2>/dev/null; then ids+=(peers); bins+=(""); fi
ids+=(table plots); bins+=("" "")
from=()
if [ -f "$final" ]; then from=("$final")
else for f in "results/$gpu-prefill.csv" "results/$gpu-decode.csv"; do [ -f "$f" ] && from+=("$f"); done; fi
if [ ${#from[@]} -eq 0 ]; then
  f=$(ls results/*-tour.csv 2>/dev/null | head -n 1)
  if [ -n "$f" ]; then from=("$f"); else mapfile -t from < <(ls results/*-prefill.csv results/*-decode.csv 2>/dev/null | head -n 2); fi
fi
shapes=$(grep -v '^[[:space:]]*\(#\|$\)' sweeps/tour.txt | awk '{ print $1, $2, $3, $4, $5, $6, $7 }' | paste -sd'|')
declare -A EST
if [ ${#from[@]} -gt 0 ]; then
  while read -r s e; do EST[$s]=$e; done < <(awk -v SHAPES="$shapes" -f tools/estimate.awk "${from[@]}")
fi
EST[table]=${EST[table]:-1} EST[plots]=${EST[plots]:-5}
left() {  # left I: seconds the steps after step I should take (a step with no estimate: 3 s)
  local i t=0
  for ((i = $1 + 1; i < ${#ids[@]}; i++)); do t=$(awk -v a="$t" -v b="${EST[${ids[$i]}]:-3}" 'BEGIN { print a + b }'); done
  echo "$t"
}
mmss() { awk -v s="$1" 'BEGIN { s = int(s + 0.5); printf "%d:%02d", s / 60, s % 60 }'; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
shape_words() { awk -F'|' '{ for (i = 1; i <= NF; i++) { split($i, a, " "); printf "%s%s B=%s Hq=%s%s N=%s M=%s d=%s%s", (i > 1 ? " and " : ""), \
  (a[4] == 1 ? "decode" : "prefill"), a[1], a[2], (a[3] == a[2] ? "" : " Hkv=" a[3]), a[4], a[5], a[6], (a[7] == 1 ? " causal" : "") } }' <<< "$shapes"; }
echo "tour on the $name: ${#ids[@]} steps (the ceilings; $nvar rung variants$([ "${ids[$((nvar + 1))]}" = peers ] && echo " and the PyTorch peers") on $(shape_words); the table; the plots), about $(mmss "$(left -1)")${from[0]:+ by ${from[*]}}"

# ---- one line per step ------------------------------------------------------------------------------
# what the rows of ID in the tour CSV say: per shape (prefill first), its rate or its status
said() {
  grep -v '^#' "$out" 2>/dev/null | awk -F, -v ID="$1" '
    $1 == "rung" { for (i = 1; i <= NF; i++) C[$i] = i; next }
    $1 == ID || (ID == "peers" && $1 ~ /^torch-/) || (ID == "ceilings" && $1 ~ /^ceiling-/) {
      st = $(C["status"]); sub(/:.*/, "", st); dec = $(C["N"]) == 1
      if ($1 == "ceiling-copy") v = sprintf("copy %.0f GB/s", $(C["gbps"]))
      else if ($1 == "ceiling-gemm") v = sprintf("GEMM %.0f TFLOP/s", $(C["tflops"]))
      else v = ($1 == ID ? "" : $1 " ") (dec ? "decode " : "prefill ") \
               (st != "ok" ? st : dec ? r($(C["gbps"])) " GB/s" : r($(C["tflops"])) " TFLOP/s")
      T[dec] = T[dec] (T[dec] == "" ? "" : ", ") v
    }
    function r(x) { return x >= 100 ? sprintf("%.0f", x) : sprintf("%.3g", x) }
    END { t = T[0] (T[0] != "" && T[1] != "" ? ", " : "") T[1]; print (t == "" ? "no rows" : t) }'
}
t0=$(now) rc=0
for ((i = 0; i < ${#ids[@]}; i++)); do
  id=${ids[$i]} b=${bins[$i]} ts=$(now) msg=""
  case $id in
    ceilings) "$BIN/00_baseline" --ceilings --csv "$out" > "$W/$id.log" 2>&1 || rc=1 ;;
    peers)    python3 tools/peers.py --sweep sweeps/tour.txt --csv "$out" > "$W/$id.log" 2>&1 || msg="peers failed (optional; see $W/$id.log)" ;;
    table)    cp "$out" "$final"; msg="wrote $final" ;;
    plots)    tools/plots.sh > "$W/$id.log" 2>&1; prc=$?
              case $prc in
                2) msg="skipped: $(tail -n 1 "$W/$id.log")" ;;     # no usable gnuplot: the line names the command
                *) [ $prc -eq 0 ] || rc=1
                   msg="$(grep -c '^wrote ' "$W/$id.log") PNGs drawn$(grep -q 'failed' "$W/$id.log" && echo ", some failed:") (log: $W/$id.log)" ;;
              esac ;;
    *)        "$b" --variant "$id" --sweep sweeps/tour.txt --csv "$out" --quiet > "$W/$id.log" 2>&1 || rc=1 ;;
  esac
  secs=$(since "$ts")
  case $id in table|plots) ;; *) echo "# step: $id $secs" >> "$out"; msg=${msg:-$(said "$id")} ;; esac
  n_left=$((${#ids[@]} - i - 1))
  printf '[%2d/%d %5s] %-8s %s (%s s)%s\n' $((i + 1)) ${#ids[@]} "$(mmss "$(since "$t0")")" "$id" "$msg" "$secs" \
    "$([ $n_left -gt 0 ] && echo "; $n_left left, about $(mmss "$(left "$i")")")"
  if [ "$id" = table ]; then        # the README's ladder table, for a terminal: no links, no idea column
    tools/readme_results.sh --print "ladder from=tour gpu=$gpu" | sed -E 's/\[([^]]*)\]\([^)]*\)/\1/g; s/\*\*//g' | awk '
      /^\|---/ { next }
      /^\|/ { n = split(substr($0, 3, length($0) - 4), c, " [|] ")
              printf "  %-20s %16s %10s %14s %10s\n", c[1], c[3], c[4], c[5], c[6]; next }
      NF { print }' | fold -s -w 110
  fi
done
grep -q ',FAIL' "$final" && rc=1
[ $rc -eq 0 ] || { echo "failed:"; grep ',FAIL' "$final" | cut -d, -f1-8,10 | sed 's/^/  /'
  grep -il 'error' "$W"/*.log 2>/dev/null | sed 's/^/  see /'; }
echo "tour: $(mmss "$(since "$t0")") in all; $final$([ $rc -ne 0 ] && echo '; some steps failed (above)')"
exit $rc
