# How long a run of the ladder (tools/ladder.sh) or of the tour (tools/tour.sh) should take, from the
# CSVs of an earlier run. Per row: its launches (the warmups and runs its extra field names, else
# 3 + 20) times its median, plus ROW seconds for the shape (inputs, copies, the float64 check); per
# step of each CSV, PROC seconds more (a process starting: the CUDA context, cuBLAS, PyTorch for the
# peers). Rows refused or skipped as too slow cost nothing. A tour CSV's "# step: STEP SECONDS"
# lines (each step's wall time, written by tools/tour.sh) replace that estimate for their step.
#
#   awk [-v PAT=ERE] [-v SHAPES="B Hq Hkv N M d causal|..."] [-v ROW=1 -v PROC=1] [-v WARM=MS] -f tools/estimate.awk CSV...
#
# PAT keeps the rows (whole lines) that match it; SHAPES keeps the rows of those shapes (ceiling rows
# always). WARM (make ladder's WARM_MS, --warm-ms): a row's warm-ups take at least WARM ms (a
# ceiling's none). Prints "STEP SECONDS" per step, in the order first seen: "ceilings", "peers", "floor",
# or a rung variant's id.
BEGIN { FS = ","; if (ROW == "") ROW = 1; if (PROC == "") PROC = 1; if (SHAPES != "") n = split(SHAPES, a, "|"); for (i = 1; i <= n; i++) WANT[a[i]] = 1 }
{ sub(/\r$/, "") }
/^# step: / { split($0, a, " "); STEPS[a[3]] = a[4]; see(a[3]); next }
/^#/ { next }
$1 == "rung" { for (i = 1; i <= NF; i++) C[$i] = i; next }
PAT != "" && $0 !~ PAT { next }
{
  id = $1; s = id ~ /^ceiling-/ ? "ceilings" : id ~ /^torch-/ ? "peers" : id ~ /^floor-/ ? "floor" : id
  if (id !~ /^ceiling-/ && SHAPES != "" && !(($(C["B"]) " " $(C["Hq"]) " " $(C["Hkv"]) " " $(C["N"]) " " $(C["M"]) " " $(C["d"]) " " $(C["causal"])) in WANT)) next
  see(s)
  if (!((FILENAME, s) in P)) { P[FILENAME, s] = 1; EST[s] += PROC + (s == "peers" ? 4 * PROC : 0) }
  st = $(C["status"]); if (st ~ /^(unsupported|skipped)/) next
  EST[s] += ROW
  if (st != "ok") next
  w = match($(C["extra"]), /warmups=[0-9]+/) ? substr($(C["extra"]), RSTART + 8, RLENGTH - 8) : 3
  r = match($(C["extra"]), /runs=[0-9]+/) ? substr($(C["extra"]), RSTART + 5, RLENGTH - 5) : 20
  wt = w * $(C["ms_median"]); if (s != "ceilings" && WARM + 0 > wt) wt = WARM + 0
  EST[s] += (wt + r * $(C["ms_median"])) / 1000
}
function see(s) { if (!(s in SEEN)) { SEEN[s] = 1; ORD[++ns] = s } }
END { for (i = 1; i <= ns; i++) printf "%s %.1f\n", ORD[i], (ORD[i] in STEPS) ? STEPS[ORD[i]] : EST[ORD[i]] }
