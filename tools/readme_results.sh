#!/usr/bin/env bash
# The figures in the READMEs, from the committed results: every test count, ceiling and headline
# number that a README shows is written here, between marker lines, and nowhere by hand.
#
#   tools/readme_results.sh             rewrite every marked block of every README (make plots runs it)
#   tools/readme_results.sh --check     change nothing; exit 1 if a block is not what the results give
#   tools/readme_results.sh --print "NAME key=value ..."    print one block's text (no README changes)
#   tools/readme_results.sh --help      this text
#
# A block is
#
#   <!-- results:NAME [key=value ...] -->
#   (generated text: replaced on every run)
#   <!-- /results -->
#
# NAME        what fills it, from which file (<gpu> is gpu=..., else $RESULTS_GPU, else h100)
#   ladder      the course table: per rung id of the CSVs (lesson order, then the peers) prefill
#               TFLOP/s and decode GB/s on one shape each (sweeps/tour.txt), with the ratio to rung 00
#               in the same CSV (ids with no number on either shape are left out);
#               results/<gpu>-prefill.csv and results/<gpu>-decode.csv, or with from=tour both
#               columns from results/<gpu>-tour.csv (make's tour: one run, one commit)
#   ceilings    the ceiling-copy and ceiling-gemm rows (GB/s, TFLOP/s, commit) of
#               results/<gpu>-<sweep>.csv for each sweep of sweeps=prefill,decode (the default)
#   gpu-tests   results/<gpu>-gpu-tests.log (make test on the GPU): without arguments, its total
#               line and the GPU matrix summed over every rung variant; with rungs=01,02 (exact
#               labels) or prefix=06 (every label that starts so), those variants' lines
#   decode      the decode sweep of results/<gpu>-decode.csv, one line per shape (B x M) in µs: the read
#               floor, each rung of rungs=06a,06b,06c, the peers; then the last rung's share of the copy
#               ceiling, cuDNN's time over its time, and how it merged (its merge= field)
#   ab06        results/<gpu>-ab06-refactor.csv (lab/ab.sh): per shape, the mean of the medians of
#               each run it names and each run over the first, and the largest such ratio
#   table       any CSV of the results (csv=PATH): one line per shape, one column per id of ids=a,b,...
#               with the column col= (default tflops) of each row; shape=prefill: the table's
#               prefill shape only
#   fa3-first   that table for results/lab/<gpu>-fa3-first.csv: 05c, rung 07's variants, the peers
#   best        any CSV of the results (csv=PATH): per shape, the fastest of ids=a,b,... against
#               ref= (default torch-cudnn), TFLOP/s and the ratio; then on how
#               many shapes the ratio is at least 1.00 and at least 0.95, and the lowest
#   models      results/<gpu>-models.csv (lab/gpu_run.sh models, the shapes of sweeps/models.txt): a
#               table per prefill shape (TFLOP/s) and per decode shape of decode=16x4096,1x32768 (B x M,
#               GB/s), a row per model (the rows' model= label, in the sweep file's order), a column per
#               rung (its best variant, named where it has several) and peer that ran a row of the
#               table; a paged KV cache or a storage type other than bfloat16 is a column of its own;
#               under each table, why the empty cells and the missing columns are empty
#   report-row  one row of results/<gpu>-prefill.csv (rung=05c, on the ladder's prefill shape)
#               printed as the rung binaries print their table (common/report.c)
#   profile     results/<gpu>-profile.csv (make profile): per variant (rungs=05a,05c exact, or
#               prefix=05; default all) and shape, its kernels, time, DRAM bytes, FLOP/byte,
#               TFLOP/s and its share of the roof (tools/roofline.awk, with the ceilings of the first
#               of results/<gpu>-{tour,prefill,decode}.csv that has them), tensor pipe, occupancy,
#               registers, shared memory and the top stall reasons
#
# Only the text between the two marker lines changes; a block whose source file is missing is left
# as it is; running it twice changes nothing. Needs bash and awk only: no build, no GPU, no Python.
set -u
case ${1:-} in
  -h|--help) sed -n '2,/^set -u$/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
  ''|--check|--print) ;;
  *) echo "readme_results.sh: unknown argument '$1' (--check, --print \"NAME key=value ...\", --help)" >&2; exit 2 ;;
esac
cd "$(dirname "$0")/.." || exit 1
RES=${RESULTS_DIR:-results}
CHECK=0
[ "${1:-}" = --check ] && CHECK=1
TMP=$(mktemp -d) || exit 1
trap 'rm -rf "$TMP"' EXIT

# The shapes of the ladder table: the tour's (sweeps/tour.txt, prefill then decode; the same as
# plots/<gpu>-progression.png's), Hkv left out where it equals Hq; float16 (the sweeps also hold
# bfloat16 rows of the same sizes).
tour_shape() {
  awk -v K="$1" '!/^[[:space:]]*(#|$)/ && ++n == K { printf "B=%s Hq=%s%s N=%s M=%s d=%s causal=%s dtype=f16", \
    $1, $2, ($3 == $2 ? "" : " Hkv=" $3), $4, $5, $6, $7 }' sweeps/tour.txt
}
PREFILL_SHAPE=$(tour_shape 1)
DECODE_SHAPE=$(tour_shape 2)

# Hand-written words, not figures: the table's label and idea for each rung id. An id the results
# have and this list lacks is shown by its id alone. Columns: id | label | idea.
IDEAS=$TMP/ideas.txt
cat > "$IDEAS" <<'EOF'
00|00 baseline|cuBLAS QKᵀ → three-pass safe softmax → cuBLAS PV; S and P in device memory
01|01 minimal|no S in memory: K/V tiles, online softmax; one thread per query row; O and {m, l} in device memory every tile (FA1 order)
02|02 row per block|one query row per block: coalesced tiles, block reductions of the {m, d} state
03|03 Br rows per warp|one warp per row: shuffles instead of block barriers
04|04 d tiled, WMMA|both products on the tensor cores (WMMA), d tiled so the tiles stay large
05a|05a|FlashAttention-2 loop order: Q outer, O on chip, written once; still WMMA
05b|05b|mma.sync + ldmatrix: S, P, O in registers, P re-packed as the A operand
05c|05c = rung 05|K/V double-buffered with cp.async, XOR-swizzled shared tiles
06|06 split KV|Flash-Decoding: GQA heads packed, KV split across CTAs by a planner, partials merged by LSE
06s|06s|as 06, the partials always merged by a separate combine kernel
06a|06a|Flash-Decoding: GQA heads packed, KV split across CTAs by a planner, partials merged by LSE in a second kernel
06b|06b|a request cut into at most 4 partials is merged by its last CTA: no second kernel
06c|06c = rung 06|on Hopper, a request's CTAs merge in a thread-block cluster, through each other's shared memory
07a|07a|FlashAttention-3's first step on Hopper: tiles by TMA on mbarriers, both products on wgmma
07b|07b|warp specialization: a producer warpgroup feeds two consumers through rings of full/empty mbarriers
07c|07c|ping-pong: the two consumers take turns on the tensor cores, one's softmax under the other's products
07d|07d|and inside each consumer, the softmax of tile j under the P V product of tile j − 1: FlashAttention-3's loop
07e|07e|persistent: one block per SM walks the work tiles, the next tile's loads under this one, O out by TMA
07f|07f = rung 07|lazy rescale (FlashAttention-4): O rescaled only when a row's max has grown by more than 2^8 since the max in use
torch-flash|torch-flash|PyTorch SDPA, FlashAttention-2 backend
torch-cudnn|torch-cudnn|PyTorch SDPA, cuDNN backend
fa4|fa4|FlashAttention-4 (flash-attn-4, CuTe DSL), its Hopper forward
EOF

# ---- awk shared by the CSV blocks: columns by name, '#' lines are metadata --------------------
read -r -d '' AWK_CSV <<'EOF'
BEGIN {
  FS = ","
  n = split("rung B Hq Hkv N M d causal dtype status ms_median ms_min ms_max tflops gbps rel_err max_abs_err lse_err workspace_bytes device commit extra", h, " ")
  for (i = 1; i <= n; i++) C[h[i]] = i
}
{ sub(/\r$/, "") }
/^#/ { if (match($0, /^# *commit: */)) META_COMMIT[FILENAME] = substr($0, RLENGTH + 1); next }
$1 == "rung" { split("", C); for (i = 1; i <= NF; i++) C[$i] = i; next }
NF < 10 || $1 == "" { next }
function f(k) { return (k in C) ? $(C[k]) : "" }
function ok() { return f("status") == "ok" }
function kind(id) { return id ~ /^ceiling-/ ? "ceiling" : id ~ /^floor-/ ? "floor" : (id ~ /^[0-9][0-9][a-z]*$/ ? "rung" : "peer") }
# "d=128 N=4096 causal=0": every named column equals its value
function want(flt,   a, n, i, kv, v) { n = split(flt, a, " "); for (i = 1; i <= n; i++) { split(a[i], kv, "="); v = f(kv[1])
  if (kv[1] == "dtype" && v == "") v = "f16"; if (v != kv[2]) return 0 } return 1 }   # a CSV without dtype: float16
# rung ids in lesson order: 00 01 ... 05a 05b 05c, 06 06s, 06a 06b 06c
function key(id) { return id }
function sortids(s,   a, n, i, j, t, out) {
  n = split(s, a, " ")
  for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && key(a[j]) > key(t); j--) a[j + 1] = a[j]; a[j + 1] = t }
  out = ""; for (i = 1; i <= n; i++) out = out (i > 1 ? " " : "") a[i]; return out
}
function add(list, w) { return index(" " list " ", " " w " ") ? list : (list == "" ? w : list " " w) }
function floor_(x) { return x == int(x) ? x : (x < 0 ? int(x) - 1 : int(x)) }
# n significant digits, whole numbers from 10^n up (0.196, 21.4, 359, 2077); never more decimals
# than the CSV's own text of the number has (its "2.0" stays 2.0)
function sig(v, n,   e, p, d) {
  if (v + 0 <= 0) return v
  e = floor_(log(v + 0) / log(10) + 1e-9); p = n - 1 - e; if (p < 0) p = 0
  if (v "" ~ /^[0-9]*\.[0-9]+$/) { d = length(v) - index(v, "."); if (p > d) p = d }
  else if (v "" ~ /^[0-9]+$/) p = 0
  return sprintf("%." p "f", v + 0)
}
function ratio(v) { return v >= 10 ? sig(v, 3) : v >= 1 ? sprintf("%.2f", v) : sig(v, 2) }
function shape_text(flt,   a, n, i, kv, s) {
  n = split(flt, a, " "); s = ""
  for (i = 1; i <= n; i++) {
    split(a[i], kv, "=")
    if (kv[1] == "causal") s = s (s == "" ? "" : ", ") (kv[2] == 1 ? "causal" : "not causal")
    else if (kv[1] == "dtype") { if (kv[2] != "f16") s = s (s == "" ? "" : ", ") kv[2] }
    else s = s (s == "" ? "" : ", ") kv[1] " = " kv[2]
  }
  return s
}
EOF

# ---- the blocks ---------------------------------------------------------------------------------
# Each gen_* prints the block's text, or returns 1 with a reason in $why to keep the block as it is.
why=""
arg() {  # arg SPEC KEY DEFAULT: the value of key=value in a marker's arguments
  local a
  for a in $1; do case $a in "$2"=*) printf '%s' "${a#*=}"; return ;; esac; done
  printf '%s' "$3"
}

gen_ladder() {  # gen_ladder GPU FROM: FROM=tour reads both columns from results/<gpu>-tour.csv
  local gpu=$1 pre=$RES/$1-prefill.csv dec=$RES/$1-decode.csv
  [ "$2" = tour ] && pre=$RES/$1-tour.csv dec=$RES/$1-tour.csv
  if [ ! -f "$pre" ] && [ ! -f "$dec" ]; then why="no $pre or $dec"; return 1; fi
  local files=()
  [ -f "$pre" ] && files+=("$pre")
  [ -f "$dec" ] && [ "$dec" != "$pre" ] && files+=("$dec")
  awk -v PRE="$pre" -v DEC="$dec" -v FP="$PREFILL_SHAPE" -v FD="$DECODE_SHAPE" -v IDEAS="$IDEAS" \
      "$AWK_CSV"$'\n'"$(cat <<'EOF'
BEGIN {
  while ((getline line < IDEAS) > 0) { split(line, a, "|"); LABEL[a[1]] = a[2]; IDEA[a[1]] = a[3] }
  col["p"] = "tflops"; col["d"] = "gbps"; SRC["p"] = PRE; SRC["d"] = DEC; SH["p"] = FP; SH["d"] = FD
}
{
  id = $1; k = kind(id); HAVE[FILENAME] = 1
  if (k == "ceiling" || k == "floor") next
  if (k == "rung") RUNGS = add(RUNGS, id); else PEERS = add(PEERS, id)
  for (s in col) if (FILENAME == SRC[s] && want(SH[s])) {
    ST[s, id] = f("status")                                # a later row (a rerun) wins
    if (ok() && f(col[s]) + 0 > 0) { V[s, id] = f(col[s]) + 0; T[s, id] = f(col[s]); CM[s, id] = f("commit") } else delete V[s, id]
  }
}
function cell(s, id,   st) {
  if ((s, id) in V) return sig(T[s, id], 3)
  if (!((s, id) in ST)) return "–"
  st = ST[s, id]; sub(/:.*/, "", st); return st
}
function x00(s, id) { return ((s, id) in V && (s, "00") in V) ? ratio(V[s, id] / V[s, "00"]) : "" }
function bold(t, s, id) { return (t != "" && id == BEST[s]) ? "**" t "**" : t }
# "commit A (ids), commit B (ids)": which rows of the table came from which commit
function provenance(s,   i, c, out, L, nc) {
  nc = 0
  for (i = 1; i <= NALL; i++) if ((s, ALL[i]) in V) {
    c = CM[s, ALL[i]]
    if (!(c in L)) { nc++; ORD[nc] = c; L[c] = "" }
    L[c] = L[c] (L[c] == "" ? "" : " ") ALL[i]
  }
  out = ""
  for (i = 1; i <= nc; i++) out = out (i > 1 ? "; " : "") (nc > 1 ? L[ORD[i]] " at commit " : "at commit ") ORD[i]
  return out
}
function link(id,   dir, lab) {
  lab = (id in LABEL) ? LABEL[id] : id
  dir = (id in DIRS) ? DIRS[id] : ""
  return dir == "" ? lab : "[" lab "](" dir "/)"
}
END {
  n = split(sortids(RUNGS), R, " "); np = split(PEERS, P, " ")
  # a row for every id with a number in either column (an id whose rows are all refusals, or
  # another shape's, has nothing to show)
  NALL = 0
  for (i = 1; i <= n; i++) if (("p", R[i]) in V || ("d", R[i]) in V) ALL[++NALL] = R[i]
  for (i = 1; i <= np; i++) if (("p", P[i]) in V || ("d", P[i]) in V) ALL[++NALL] = P[i]
  for (i = 1; i <= n; i++) {
    cmd = "ls -d " substr(R[i], 1, 2) "_*/ 2>/dev/null"
    if ((cmd | getline d) > 0) { sub(/\/$/, "", d); DIRS[R[i]] = d }
    close(cmd)
    for (s in col) if ((s, R[i]) in V && (BEST[s] == "" || V[s, R[i]] > V[s, BEST[s]])) BEST[s] = R[i]
  }
  pp = provenance("p"); pd = provenance("d")
  printf "Prefill: %s; %s. ", shape_text(FP), HAVE[PRE] ? PRE (pp != "" ? ", rows " pp : ": no ok row on this shape") : "no " PRE " yet"
  printf "Decode: %s; %s. ", shape_text(FD), HAVE[DEC] ? DEC (pd != "" ? ", rows " pd : ": no ok row on this shape") : "no " DEC " yet"
  print "Each × is against rung 00 in the same CSV; bold: the fastest rung in the column."
  print ""
  print "| rung | idea | prefill TFLOP/s | × rung 00 | decode GB/s | × rung 00 |"
  print "|---|---|---|---|---|---|"
  for (i = 1; i <= NALL; i++) {
    id = ALL[i]
    printf "| %s | %s | %s | %s | %s | %s |\n", link(id), (id in IDEA) ? IDEA[id] : "", \
      bold(cell("p", id), "p", id), bold(x00("p", id), "p", id), bold(cell("d", id), "d", id), bold(x00("d", id), "d", id)
  }
}
EOF
)" "${files[@]}"
}

gen_ceilings() {
  local gpu=$1 sweeps=${2//,/ } files=() sw
  for sw in $sweeps; do [ -f "$RES/$gpu-$sw.csv" ] && files+=("$RES/$gpu-$sw.csv"); done
  if [ ${#files[@]} -eq 0 ]; then why="no $RES/$gpu-{${2}}.csv"; return 1; fi
  awk -v LIST="${files[*]}" "$AWK_CSV"$'\n'"$(cat <<'EOF'
$1 == "ceiling-copy" && ok() { COPY[FILENAME] = f("gbps"); CC[FILENAME] = f("commit") }
$1 == "ceiling-gemm" && ok() { GEMM[FILENAME] = f("tflops"); GC[FILENAME] = f("commit"); GX[FILENAME] = f("extra") }
END {
  out = ""; nf = split(LIST, FILES, " ")
  for (i = 1; i <= nf; i++) {
    F = FILES[i]; t = ""
    if (F in COPY) t = "device-to-device copy " sig(COPY[F], 3) " GB/s"
    if (F in GEMM) { x = GX[F]; gsub(/=/, " = ", x)
      t = t (t == "" ? "" : ", ") "cuBLAS float16 GEMM " sig(GEMM[F], 3) " TFLOP/s" (x != "" ? " (" x ")" : "") }
    if (t == "") t = "no ceiling rows"
    c = (F in CC) ? CC[F] : (F in GC) ? GC[F] : META_COMMIT[F]
    out = out (out == "" ? "" : "; ") F " at commit " c ": " t
  }
  print "Ceilings, each measured in the same run as the rows of its CSV (rows `ceiling-copy`, counting bytes read and written, and `ceiling-gemm`): " out "."
}
EOF
)" "${files[@]}"
}

gen_gpu_tests() {
  local gpu=$1 rungs=$2 prefix=$3 log=$RES/$1-gpu-tests.log
  if [ ! -f "$log" ]; then why="no $log"; return 1; fi
  awk -v LOG="$log" -v RUNGS="$rungs" -v PREFIX="$prefix" "$(cat <<'EOF'
{ sub(/\r$/, "") }
NR == 1 && match($0, /at commit [^ ]+/) { COMMIT = substr($0, RSTART + 10, RLENGTH - 10) }
/^== / { SEC = substr($0, 4); next }
/^   device: / { DEV = $0; sub(/^   device: [^ ]+ [0-9]+ /, "", DEV); next }
/^ +[^ ]+ +[0-9]+ passed, [0-9]+ failed, [0-9]+ refused$/ {
  lab = $1; nl++; L[nl] = lab; P[lab] = $2; F[lab] = $4; S[lab] = $6
  TP += $2; TF += $4; TS += $6; cur = lab; next
}
/^      refused / && cur != "" {
  r = $0; sub(/^      refused /, "", r); c = r; sub(/: unsupported: .*/, "", c); sub(/.*: unsupported: /, "", r)
  NR_[cur]++; RC[cur, NR_[cur]] = c; RR[cur, NR_[cur]] = r; next
}
/^ +[0-9]+ passed, [0-9]+ failed/ && SEC != "" { SL[SEC] = $0; sub(/^ +/, "", SL[SEC]); SO[++ns] = SEC; next }
/^   skipped: / && SEC != "" { SL[SEC] = substr($0, 4); SO[++ns] = SEC; next }
/^[0-9]+ passed, [0-9]+ failed/ { TOTAL = $0 }
function line(lab,   t, i) {
  t = P[lab] " passed, " F[lab] " failed, " S[lab] " refused"
  if (NR_[lab] > 0 && NR_[lab] <= 2) {
    t = t " ("
    for (i = 1; i <= NR_[lab]; i++) t = t (i > 1 ? "; " : "") RC[lab, i] ": " RR[lab, i]
    t = t ")"
  }
  return t
}
END {
  src = "`make test` at commit " COMMIT (DEV != "" ? " on the " DEV : " on the GPU") " (" LOG ")"
  if (RUNGS == "" && PREFIX == "") {
    if (TOTAL == "") { print "no total line in " LOG; exit 1 }
    printf "%s: **%s**. ", src, TOTAL
    cases = nl ? P[L[1]] + F[L[1]] + S[L[1]] : 0
    printf "The GPU matrix (tests/gpu_cases.txt): %d runs of %d cases, one per rung variant and some again under other settings; %d passed, %d failed, %d refused with a reason", nl, cases, TP, TF, TS
    t = ""
    for (i = 1; i <= ns; i++) if (SO[i] !~ /^GPU matrix/) t = t (t == "" ? "" : "; ") SO[i] ": " SL[SO[i]]
    print (t != "" ? ". The rest: " t : "") "."
    exit 0
  }
  m = 0
  for (i = 1; i <= nl; i++) {
    if (RUNGS != "" && index("," RUNGS ",", "," L[i] ",")) W[++m] = L[i]
    else if (PREFIX != "" && index(L[i], PREFIX) == 1) W[++m] = L[i]
  }
  if (m == 0) { print "none of " RUNGS PREFIX " in " LOG; exit 1 }
  if (m == 1) { printf "The GPU matrix in %s, variant %s: %s.\n", src, W[1], line(W[1]); exit 0 }
  print "The GPU matrix in " src ":"
  print ""
  print "| run | passed | failed | refused |"
  print "|---|---|---|---|"
  for (i = 1; i <= m; i++) printf "| %s | %d | %d | %d |\n", W[i], P[W[i]], F[W[i]], S[W[i]]
}
EOF
)" "$log" || { why="the block's lines are not in $log"; return 1; }
}

gen_decode() {
  local gpu=$1 rungs=$2 dec=$RES/$1-decode.csv
  if [ ! -f "$dec" ]; then why="no $dec"; return 1; fi
  awk -v RUNGS="$rungs" -v DEC="$dec" "$AWK_CSV"$'\n'"$(cat <<'EOF'
$1 == "ceiling-copy" && ok() { COPY = f("gbps"); next }
ok() && $1 !~ /^ceiling-/ {
  k = f("B") " x " f("M")
  if (!(k in SEEN)) { SEEN[k] = 1; ORD[++ns] = k; KV[k] = 4.0 * f("B") * f("Hkv") * f("M") * f("d") / 1e6; SH = f("Hq") " " f("Hkv") " " f("N") " " f("d") }
  T[k, $1] = f("ms_median") * 1000; G[k, $1] = f("gbps"); CM[$1] = f("commit")
  if (match(f("extra"), /merge=[a-z]+/)) MG[k, $1] = substr(f("extra"), RSTART + 6, RLENGTH - 6)
}
function us(k, id) { return ((k, id) in T) ? sprintf("%.1f", T[k, id]) : "–" }
END {
  nr = split(RUNGS, R, ","); last = R[nr]
  if (n == 0) { print "no decode rows in " DEC; exit 1 }
  split(SH, sh, " ")
  printf "Decode sweep (Hq = %s, Hkv = %s, N = %s query token, d = %s), µs, the median of each row; %s at commit %s, with the peers and the read floor in the same run (%s; copy ceiling %s GB/s):\n\n", \
    sh[1], sh[2], sh[3], sh[4], RUNGS, CM[last], DEC, sig(COPY, 3)
  printf "| B x M | KV | floor |"; for (i = 1; i <= nr; i++) printf " %s |", R[i]
  printf " torch-flash | torch-cudnn | %s, %% of copy | cuDNN / %s | %s merges |\n", last, last, last
  printf "|---|---|---|"; for (i = 1; i <= nr + 5; i++) printf "---|"; printf "\n"
  for (j = 1; j <= ns; j++) {
    k = ORD[j]
    printf "| %s | %.0f MB | %s |", k, KV[k], us(k, "floor-read")
    for (i = 1; i <= nr; i++) printf " %s |", us(k, R[i])
    printf " %s | %s | %s | %s | %s |\n", us(k, "torch-flash"), us(k, "torch-cudnn"), \
      ((k, last) in G && COPY > 0) ? sprintf("%.0f%%", 100 * G[k, last] / COPY) : "–", \
      ((k, last) in T && (k, "torch-cudnn") in T) ? sprintf("%.2f", T[k, "torch-cudnn"] / T[k, last]) : "–", \
      ((k, last) in MG) ? MG[k, last] : "–"
  }
}
EOF
)" "$dec"
}

gen_ab06() {
  local gpu=$1 csv=$RES/$1-ab06-refactor.csv
  if [ ! -f "$csv" ]; then why="no $csv"; return 1; fi
  awk -F, -v CSV="$csv" '
/^# A\/B/ { HEAD = $0; sub(/^# /, "", HEAD) }
/^# [a-z]+ = / { NOTE = NOTE " " substr($0, 3) }
/^#/ { next }
$12 == "ok" { r = $1; k = $4 " x " $8; if (!(k in SEEN)) { SEEN[k] = 1; ORD[++ns] = k }
              if (!(r in HAVE)) { HAVE[r] = 1; RO[++nr] = r }; S[k, r] += $13 * 1000; N[k, r]++ }
END {
  if (nr < 2) { print "fewer than two runs in " CSV; exit 1 }
  printf "%s (%s.%s) µs, the mean of each run'"'"'s medians, and each run over the first:\n\n", CSV, HEAD, NOTE
  printf "| B x M |"; for (i = 1; i <= nr; i++) printf " %s |", RO[i]
  for (i = 2; i <= nr; i++) printf " %s / %s |", RO[i], RO[1]
  printf "\n|---|"; for (i = 2; i <= 2 * nr; i++) printf "---|"; printf "\n"
  for (j = 1; j <= ns; j++) { k = ORD[j]; printf "| %s |", k
    for (i = 1; i <= nr; i++) printf " %s |", N[k, RO[i]] ? sprintf("%.2f", S[k, RO[i]] / N[k, RO[i]]) : "–"
    for (i = 2; i <= nr; i++) {
      q = (N[k, RO[i]] && N[k, RO[1]]) ? (S[k, RO[i]] / N[k, RO[i]]) / (S[k, RO[1]] / N[k, RO[1]]) : 0
      if (q > W[i]) { W[i] = q; WK[i] = k }
      printf " %s |", q ? sprintf("%.3f", q) : "–" }
    printf "\n" }
  printf "\nThe largest ratio to %s:", RO[1]
  for (i = 2; i <= nr; i++) printf "%s %s %.3f at %s", (i > 2 ? ";" : ""), RO[i], W[i], WK[i]
  printf ".\n"
}' "$csv"
}

gen_table() {  # gen_table CSV IDS COL SHAPE (SHAPE: "prefill" = only the table's prefill shape)
  local csv=$1 ids=$2 col=$3 flt=""
  if [ ! -f "$csv" ]; then why="no $csv"; return 1; fi
  [ "${4:-}" = prefill ] && flt=$PREFILL_SHAPE
  awk -v IDS="$ids" -v COL="$col" -v CSV="$csv" -v FLT="$flt" "$AWK_CSV"$'\n'"$(cat <<'EOF'
$1 !~ /^ceiling-/ && (FLT == "" || want(FLT)) {
  k = f("B") "|" f("Hq") "|" f("Hkv") "|" f("N") "|" f("M") "|" f("d") "|" f("causal") "|" f("dtype")
  if (!(k in SEEN)) { SEEN[k] = 1; ORD[++ns] = k }
  V[k, $1] = ok() ? sig(f(COL), 3) : (f("status") ~ /^unsupported/ ? "refused" : "FAIL")
  if (ok()) CM[$1] = f("commit")
}
END {
  nr = split(IDS, R, ","); cm = ""
  for (i = 1; i <= nr; i++) if (R[i] in CM && index(cm, CM[R[i]]) == 0) cm = cm (cm == "" ? "" : ", ") CM[R[i]]
  printf "%s, %s %s; %s of each row:\n\n| B | Hq | Hkv | N | M | d | causal | dtype |", CSV, \
    index(cm, ",") ? "rows from the runs at commits" : "one run, commit", cm, COL
  for (i = 1; i <= nr; i++) printf " %s |", R[i]
  printf "\n|---|---|---|---|---|---|---|---|"; for (i = 1; i <= nr; i++) printf "---|"; printf "\n"
  for (j = 1; j <= ns; j++) { split(ORD[j], a, "|"); printf "| %s | %s | %s | %s | %s | %s | %s | %s |", a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8]
    for (i = 1; i <= nr; i++) printf " %s |", ((ORD[j], R[i]) in V) ? V[ORD[j], R[i]] : "–"
    printf "\n" }
}
EOF
)" "$csv"
}

gen_best() {  # gen_best CSV IDS REF
  local csv=$1 ids=$2 ref=$3
  if [ ! -f "$csv" ]; then why="no $csv"; return 1; fi
  awk -v IDS="$ids" -v REF="$ref" -v CSV="$csv" "$AWK_CSV"$'\n'"$(cat <<'EOF'
$1 !~ /^ceiling-/ && ok() {
  k = f("B") "|" f("Hq") "|" f("Hkv") "|" f("N") "|" f("M") "|" f("d") "|" f("causal") "|" f("dtype")
  if (!(k in SEEN)) { SEEN[k] = 1; ORD[++ns] = k }
  T[k, $1] = f("tflops"); CM[$1] = f("commit")
}
END {
  nr = split(IDS, R, ","); cm = ""
  for (i = 1; i <= nr; i++) if (R[i] in CM && index(cm, CM[R[i]]) == 0) cm = cm (cm == "" ? "" : ", ") CM[R[i]]
  if (REF in CM && index(cm, CM[REF]) == 0) cm = cm ", " CM[REF]
  printf "%s, %s %s; per shape the fastest of %s against %s (TFLOP/s):\n\n", CSV, \
    index(cm, ",") ? "rows from the runs at commits" : "one run, commit", cm, IDS, REF
  printf "| B | Hq | Hkv | N | M | d | causal | dtype | fastest | TFLOP/s | %s | ratio |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n", REF
  n = 0; n1 = 0; n95 = 0; lo = 1e9
  for (j = 1; j <= ns; j++) {
    k = ORD[j]; b = ""; bt = 0
    for (i = 1; i <= nr; i++) if ((k, R[i]) in T && T[k, R[i]] + 0 > bt) { bt = T[k, R[i]] + 0; b = R[i] }
    if (b == "" || !((k, REF) in T)) continue
    r = bt / T[k, REF]; n++; if (r >= 1) n1++; if (r >= 0.95) n95++; if (r < lo) { lo = r; lk = k }
    split(k, a, "|")
    printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %.3f |\n", a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], b, sig(bt, 3), sig(T[k, REF], 3), r
  }
  split(lk, a, "|")
  printf "\nAt least 1.00x on %d of %d shapes, at least 0.95x on %d; the lowest %.3f (B = %s, N = %s, d = %s, %s, %s).\n", \
    n1, n, n95, lo, a[1], a[4], a[6], a[7] == 1 ? "causal" : "not causal", a[8]
}
EOF
)" "$csv"
}

gen_report_row() {
  local gpu=$1 rung=$2 pre=$RES/$1-prefill.csv
  if [ ! -f "$pre" ]; then why="no $pre"; return 1; fi
  awk -v RUNG="$rung" -v FP="$PREFILL_SHAPE" -v PRE="$pre" "$AWK_CSV"$'\n'"$(cat <<'EOF'
$1 == RUNG && want(FP) { ROW = $0; for (k in C) X[k] = f(k) }
END {
  if (ROW == "") { print "no " RUNG " row on the prefill shape in " PRE; exit 1 }
  print "```"
  # the layout of report_table_header / report_table_row (common/report.c)
  printf "%-5s %4s %4s %4s %6s %6s %5s %1s %9s %9s %9s %8s %7s %9s %9s  %s\n", \
    "rung", "B", "Hq", "Hkv", "N", "M", "d", "c", "ms_med", "ms_min", "ms_max", "TFLOP/s", "GB/s", "rel_err", "lse_err", "status"
  st = X["status"]
  if (match(X["extra"], /checked=sample:[0-9]+\/[0-9]+/)) {
    c = substr(X["extra"], RSTART + 15, RLENGTH - 15); split(c, cc, "/")
    st = st " (checked " cc[1] " of " cc[2] " rows)"
  }
  printf "%-5s %4d %4d %4d %6d %6d %5d %1d %9.4f %9.4f %9.4f %8.2f %7.0f %9.2e %9.2e  %s\n", \
    X["rung"], X["B"], X["Hq"], X["Hkv"], X["N"], X["M"], X["d"], X["causal"], \
    X["ms_median"], X["ms_min"], X["ms_max"], X["tflops"], X["gbps"], X["rel_err"], X["lse_err"], st
  print "```"
}
EOF
)" "$pre"
}

gen_profile() {  # gen_profile GPU RUNGS PREFIX
  local gpu=$1 csv=$RES/$1-profile.csv files=() sw
  if [ ! -f "$csv" ]; then why="no $csv"; return 1; fi
  for sw in tour prefill decode; do [ -f "$RES/$gpu-$sw.csv" ] && files+=("$RES/$gpu-$sw.csv"); done
  awk -v CSV="$csv" -v RUNGS="$2" -v PREFIX="$3" -v FP="$PREFILL_SHAPE" -v FD="$DECODE_SHAPE" \
      "$AWK_CSV"$'\n'"$(cat tools/roofline.awk)"$'\n'"$(cat <<'EOF'
FILENAME != CSV {                                # the ceilings: the first CSV that has them
  if ($1 == "ceiling-copy" && ok() && !COPY) { COPY = f("gbps") + 0; CF = FILENAME }
  if ($1 == "ceiling-gemm" && ok() && !GEMM) { GEMM = f("tflops") + 0; GF = FILENAME }
  next
}
{ id = $1 }
RUNGS != "" && !index("," RUNGS ",", "," id ",") { next }
PREFIX != "" && index(id, PREFIX) != 1 { next }
{
  sh = want(FP) ? "prefill" : want(FD) ? "decode" : shape_text("B=" f("B") " N=" f("N") " M=" f("M") " d=" f("d"))
  k = id SUBSEP sh
  if (f("kernel") != "total") {                  # the kernels: names, and the longest one's resources
    if (!(k in KN)) { KN[k] = ""; LT[k] = -1 }
    KN[k] = KN[k] (KN[k] == "" ? "" : ", ") short(f("kernel")) (f("launches") > 1 ? " ×" f("launches") : "")
    if (f("time_ns") + 0 > LT[k]) { LT[k] = f("time_ns") + 0; REG[k] = f("registers"); SM[k] = f("smem_static_bytes") + f("smem_dynamic_bytes") }
    next
  }
  if (!(k in ROW)) ORD[++nr] = k
  ROW[k] = 1; for (c in C) X[k, c] = f(c); CM = add(CM, f("commit"))
}
function short(s) { return length(s) > 28 ? substr(s, 1, 27) "…" : s }
function pct(v) { return v == "" ? "–" : sprintf("%.0f%%", v) }
function tensor(k,   h, g) {
  h = X[k, "tensor_hmma_pct"]; g = X[k, "tensor_gmma_pct"]
  if (h == "" && g == "") return "–"
  return (g != "" && g + 0 > h + 0) ? sprintf("%.0f%% (wgmma)", g) : sprintf("%.0f%%", h)
}
function stalls(s,   a, n, i, t) { n = split(s, a, ";"); t = ""; for (i = 1; i <= n; i++) { sub(/=/, " ", a[i]); t = t (i > 1 ? ", " : "") a[i] } return t == "" ? "–" : t }
END {
  if (nr == 0) { print "no profile rows" (RUNGS PREFIX != "" ? " of " RUNGS PREFIX : "") " in " CSV; exit 1 }
  roof = COPY > 0 ? sprintf("min(GEMM ceiling, FLOP/byte × copy ceiling), with the ceilings of %s: %s TFLOP/s, %s GB/s", \
    CF (GF != CF ? " and " GF : ""), sig(GEMM, 3), sig(COPY, 3)) : "no ceiling rows found: no roof"
  printf "Nsight Compute (%s; commit %s), one profiled launch per variant and shape, its kernels summed: time, DRAM bytes read + written, the course's FLOP count over them (FLOP/byte, TFLOP/s) and its share of the roof, %s. Tensor pipe: busy cycles of ncu's hmma tensor pipe over its peak (the H100's ncu has no separate gmma counter; rung 07's kernels, which issue wgmma and no mma.sync, keep it busy, so wgmma counts there too). Tensor pipe and occupancy: means over the launch weighted by kernel time; registers and shared memory: the longest kernel's; stalls: warps stalled per issued instruction, the three largest reasons.\n\n", CSV, CM, roof
  print "| variant | shape | kernels | µs | DRAM MB read + written | FLOP/byte | TFLOP/s | of the roof | tensor pipe | occupancy | registers | shared memory | top stalls |"
  print "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
  for (i = 1; i <= nr; i++) {
    k = ORD[i]; split(k, p, SUBSEP); ai = X[k, "flop_per_byte"] + 0
    printf "| %s | %s | %s | %s | %s + %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", p[1], p[2], KN[k], \
      sig(X[k, "time_ns"] / 1000, 3), sig(X[k, "dram_read_bytes"] / 1e6, 3), sig(X[k, "dram_write_bytes"] / 1e6, 3), \
      sig(X[k, "flop_per_byte"], 3), sig(X[k, "tflops"], 3), (COPY > 0 ? pct(100 * X[k, "tflops"] / attainable(ai, GEMM, COPY)) : "–"), \
      tensor(k), pct(X[k, "occupancy_pct"]), (REG[k] == "" ? "–" : REG[k]), (SM[k] == "" ? "–" : SM[k] < 1024 ? SM[k] " B" : sprintf("%.0f KiB", SM[k] / 1024)), stalls(X[k, "stalls"])
  }
}
EOF
)" "$csv" ${files[@]+"${files[@]}"}
}

gen_models() {  # gen_models GPU DECODE: DECODE = "16x4096,1x32768", the decode shapes (B x M) shown
  local gpu=$1 csv=$RES/$1-models.csv
  if [ ! -f "$csv" ]; then why="no $csv"; return 1; fi
  awk -v CSV="$csv" -v DECODE="$2" -v SWEEP=sweeps/models.txt "$AWK_CSV"$'\n'"$(cat <<'EOF'
BEGIN {   # the order of the models in the sweep file
  while ((getline line < SWEEP) > 0)
    if (line !~ /^[[:space:]]*#/ && match(line, /model=[^ \t#]+/)) SW[++nsw] = substr(line, RSTART + 6, RLENGTH - 6)
  nd = split(DECODE, D, ",")
}
function model_seen(m) { if (!(m in MI)) { MI[m] = ++ncm; CM[ncm] = m } }
function field(x, k) { return match(";" x, ";" k "=[^;]*") ? substr(";" x, RSTART + length(k) + 2, RLENGTH - length(k) - 2) : "" }
$1 ~ /^(ceiling|floor)-/ { next }
{
  m = field(f("extra"), "model"); if (m == "") next
  id = $1; k = kind(id); grp = k == "rung" ? substr(id, 1, 2) : id
  # the table: a prefill shape (a table each), or one of the decode shapes asked for
  if (f("N") > 1) { t = "p " f("B") " " f("N") " " f("M") " " f("causal"); if (!(t in TI)) { TI[t] = 1; TP[++ntp] = t } }
  else { t = ""; for (i = 1; i <= nd; i++) if (D[i] == f("B") "x" f("M")) t = "d " D[i]; if (t == "") next }
  model_seen(m)
  if (!(m in SHAPE)) SHAPE[m] = f("Hq") " / " f("Hkv") " / " f("d")
  # the column: a rung (its best variant) or a peer; on a paged KV cache, or in a storage type
  # other than bfloat16, a column of its own
  q = field(f("extra"), "page") != "" ? "paged" : ""
  if (f("dtype") != "bf16") q = q (q == "" ? "" : ", ") (f("dtype") == "f16" ? "float16" : f("dtype"))
  c = grp (q == "" ? "" : " (" q ")")
  if (!((t, c) in COLSEEN)) { COLSEEN[t, c] = 1; NC[t]++; COL[t, NC[t]] = c }
  if (!(c in CK)) CK[c] = (k == "rung" ? "0" grp : "1" (100 + ++npeer)) (q == "" ? "0" : "1" q)
  if (k == "rung" && !((grp, id) in VSEEN)) { VSEEN[grp, id] = 1; NV[grp]++ }
  st = f("status"); v = ok() ? f(f("N") > 1 ? "tflops" : "gbps") : ""
  # a later row of the same variant (a rerun) replaces the earlier one
  if (!((t, m, c, id) in CS)) { NI[t, m, c]++; CID[t, m, c, NI[t, m, c]] = id }
  CV[t, m, c, id] = (st == "ok" && v + 0 > 0) ? v : ""; CS[t, m, c, id] = st
  if (st == "ok") { if (!index(" " COMMITS " ", " " f("commit") " ")) COMMITS = COMMITS (COMMITS == "" ? "" : ", ") f("commit"); DEV = f("device") }
}
function why(st) { sub(/^(unsupported|skipped): */, "", st); return st }
function label(m,   x) { x = m; gsub(/\+/, ", ", x); return x }
function note(t, s) { NOTES[t] = NOTES[t] (NOTES[t] == "" ? "" : "; ") s }
function reason(t, c, r, m) {
  if (!((t, c, r) in RM)) RO[t, ++NRS[t]] = c SUBSEP r
  RM[t, c, r] = RM[t, c, r] (RM[t, c, r] == "" ? "" : ", ") label(m); RN[t, c, r]++
}
# one cell: the best ok variant's number (its id when the rung has several variants), else what
# became of the rows: FAIL, skipped (too slow) or refused, the reason kept for the line under the
# table (a failed variant is named there even where another variant of the rung ran)
function cell(t, m, c,   i, id, best, bid, st, fail, skip, ref) {
  best = fail = skip = ref = ""
  for (i = 1; i <= NI[t, m, c]; i++) {
    id = CID[t, m, c, i]; st = CS[t, m, c, id]
    if (CV[t, m, c, id] != "") { if (best == "" || CV[t, m, c, id] + 0 > best + 0) { best = CV[t, m, c, id]; bid = id } }
    else if (st ~ /^FAIL/) fail = fail (fail == "" ? "" : "; ") id " " st
    else if (st ~ /^skipped/) skip = why(st)
    else if (st ~ /^unsupported/ && ref == "") ref = why(st)
  }
  if (fail != "") note(t, c " on " label(m) ": " fail)            # said even where another variant ran
  if (best != "") { OKCOL[t, c] = 1; return sig(best, 3) (NV[substr(c, 1, 2)] > 1 ? " (" bid ")" : "") }
  if (fail != "") return "FAIL"
  if (skip != "") { reason(t, c, "skipped: " skip, m); return "skipped" }
  if (ref != "") { reason(t, c, ref, m); return "refused" }
  return "–"
}
function title(t,   a) {
  split(t, a, " ")
  if (a[1] == "p") return sprintf("**Prefill**, %s, B = %s, N = %s, M = %s (B·N = %d tokens), TFLOP/s:", \
    a[5] ? "causal" : "not causal", a[2], a[3], a[4], a[2] * a[3])
  split(a[2], a, "x"); return sprintf("**Decode**, one query token, B = %s, M = %s, GB/s:", a[1], a[2])
}
function table(t,   i, j, n, c, line, r, p, k, cm, g, G, GK, GQ, QO, NQ, q, cs, ng, nmt) {
  n = NC[t]                                   # the columns in lesson order, then the peers
  for (i = 1; i <= n; i++) O[i] = COL[t, i]
  for (i = 2; i <= n; i++) { c = O[i]; for (j = i - 1; j >= 1 && CK[O[j]] > CK[c]; j--) O[j + 1] = O[j]; O[j + 1] = c }
  nmt = 0
  for (j = 1; j <= nm; j++) { HAS[j] = 0; for (i = 1; i <= n; i++) { CELL[j, i] = cell(t, MODEL[j], O[i]); if (NI[t, MODEL[j], O[i]]) HAS[j] = 1 } nmt += HAS[j] }
  print title(t); print ""
  line = "| model | Hq / Hkv / d |"; for (i = 1; i <= n; i++) if ((t, O[i]) in OKCOL) line = line " " O[i] " |"; print line
  line = "|---|---|"; for (i = 1; i <= n; i++) if ((t, O[i]) in OKCOL) line = line "---|"; print line
  for (j = 1; j <= nm; j++) if (HAS[j]) {
    line = "| " label(MODEL[j]) " | " SHAPE[MODEL[j]] " |"
    for (i = 1; i <= n; i++) if ((t, O[i]) in OKCOL) line = line " " CELL[j, i] " |"
    print line
  }
  # why a cell or a column is empty: columns with the same reason for the same models together,
  # "00, 04 (paged, float16)"
  ng = 0
  for (r = 1; r <= NRS[t]; r++) {
    split(RO[t, r], p, SUBSEP); c = p[1]; k = p[2]
    cm = RN[t, c, k] == nmt ? "every model" : RM[t, c, k]
    g = k SUBSEP cm; q = index(c, " (") ? substr(c, index(c, " (")) : ""
    if (!(g in G)) { G[g] = ++ng; GK[ng] = g; NQ[ng] = 0 }
    if (!((G[g], q) in GQ)) { GQ[G[g], q] = ""; QO[G[g], ++NQ[G[g]]] = q }
    GQ[G[g], q] = GQ[G[g], q] (GQ[G[g], q] == "" ? "" : ", ") substr(c, 1, length(c) - length(q))
  }
  line = ""
  for (r = 1; r <= ng; r++) {
    split(GK[r], p, SUBSEP); k = p[1]; sub(/\.$/, "", k); cs = ""
    for (i = 1; i <= NQ[r]; i++) cs = cs (i > 1 ? " and " : "") GQ[r, QO[r, i]] QO[r, i]
    line = line (line == "" ? "" : "; ") cs ", " p[2] ": " k
  }
  if (NOTES[t] != "") line = line (line == "" ? "" : "; ") "failed: " NOTES[t]
  if (line != "") { print ""; print "Not run: " line "." }
}
END {
  if (ncm == 0) { print "no rows with model= in " CSV; exit 1 }
  # the CSV's models in the order of the sweep file; those it does not name follow, in the CSV's order
  for (i = 1; i <= nsw; i++) if ((SW[i] in MI) && !(SW[i] in PLACED)) { PLACED[SW[i]] = 1; MODEL[++nm] = SW[i] }
  for (i = 1; i <= ncm; i++) if (!(CM[i] in PLACED)) { PLACED[CM[i]] = 1; MODEL[++nm] = CM[i] }
  ntab = 0; for (i = 1; i <= ntp; i++) TAB[++ntab] = TP[i]
  for (i = 1; i <= nd; i++) TAB[++ntab] = "d " D[i]
  printf "%s: every rung variant and the peers over sweeps/models.txt (%s%s). Per model, the best variant of each rung (its id in brackets where the rung has several); bfloat16 unless a column says otherwise; a column only for a rung that ran a row of the table, and the line under each table says why the others did not.\n", \
    CSV, COMMITS == "" ? "no ok row" : index(COMMITS, ",") ? "commits " COMMITS ": rows of more than one run, the CSV's # rerun: lines say which" : "one run, commit " COMMITS, \
    DEV != "" ? "; " DEV : ""
  for (i = 1; i <= ntab; i++) {
    t = TAB[i]; print ""
    if (NC[t] == 0) { split(t, a, " "); split(a[2], a, "x"); printf "**Decode**, B = %s, M = %s: no rows in %s.\n", a[1], a[2], CSV; continue }
    table(t)
  }
}
EOF
)" "$csv"
}

generate() {  # generate SPEC > text: SPEC is "NAME key=value ..."
  local spec=$1 name=${1%% *} gpu
  gpu=$(arg "$spec" gpu "${RESULTS_GPU:-h100}")
  case $name in
    ladder)     gen_ladder "$gpu" "$(arg "$spec" from "")" ;;
    profile)    gen_profile "$gpu" "$(arg "$spec" rungs "")" "$(arg "$spec" prefix "")" ;;
    ceilings)   gen_ceilings "$gpu" "$(arg "$spec" sweeps prefill,decode)" ;;
    gpu-tests)  gen_gpu_tests "$gpu" "$(arg "$spec" rungs "")" "$(arg "$spec" prefix "")" ;;
    report-row) gen_report_row "$gpu" "$(arg "$spec" rung 05c)" ;;
    ab06)       gen_ab06 "$gpu" ;;
    table)      gen_table "$(arg "$spec" csv "")" "$(arg "$spec" ids "")" "$(arg "$spec" col tflops)" "$(arg "$spec" shape "")" ;;
    fa3-first)  gen_table "$RES/lab/$gpu-fa3-first.csv" 05c,07a,07b,07c,torch-flash,torch-cudnn tflops ;;
    best)       gen_best "$(arg "$spec" csv "")" "$(arg "$spec" ids "")" "$(arg "$spec" ref torch-cudnn)" ;;
    decode)     gen_decode "$gpu" "$(arg "$spec" rungs 06a,06b,06c)" ;;
    models)     gen_models "$gpu" "$(arg "$spec" decode 16x4096,1x32768)" ;;
    *)          why="unknown block name '$name'"; return 1 ;;
  esac
}

# ---- --print SPEC: one block's text on stdout (make's tour prints its table so) ----------------
if [ "${1:-}" = --print ]; then
  why=""
  generate "${2:-}" && exit 0
  echo "readme_results: no ${2%% *} block: ${why:-see above}" >&2; exit 1
fi

# ---- splice the blocks into each README -------------------------------------------------------
status=0
mapfile -t readmes < <(find . -name '*.md' -not -path './.git/*' -not -path './build/*' \
                         -not -path './results/*' -print | sed 's|^\./||' | sort)
for md in ${readmes[@]+"${readmes[@]}"}; do
  grep -q '^<!-- results:' "$md" || continue
  rm -f "$TMP"/block.* "$TMP"/spec.* "$TMP"/err.*
  # the markers, numbered in file order; an unclosed or nested block leaves the file alone
  if ! awk -v T="$TMP" '
      /^<!-- results:.*-->[[:space:]]*$/ {
        if (open) { print FILENAME ":" NR ": a block opens inside another" > "/dev/stderr"; bad = 1 }
        s = $0; sub(/^<!-- results:/, "", s); sub(/[[:space:]]*-->[[:space:]]*$/, "", s)
        n++; print s > (T "/spec." n); close(T "/spec." n); open = NR; next }
      /^<!-- \/results -->[[:space:]]*$/ {
        if (!open) { print FILENAME ":" NR ": a closing marker without an opening one" > "/dev/stderr"; bad = 1 }
        open = 0 }
      END { if (open) { print FILENAME ":" open ": a block that never closes" > "/dev/stderr"; bad = 1 } exit bad }' "$md"; then
    echo "readme_results: $md left unchanged (markers out of order)"; status=1; continue
  fi
  done_=() kept=()
  for sf in "$TMP"/spec.*; do
    [ -f "$sf" ] || continue
    i=${sf##*.} spec=$(cat "$sf")
    why=""
    if generate "$spec" > "$TMP/block.$i" 2> "$TMP/err.$i" && ! grep -q '^<!-- /results -->' "$TMP/block.$i"; then
      done_+=("${spec%% *}")
    else
      [ -z "$why" ] && why=$(head -n 1 "$TMP/block.$i" "$TMP/err.$i" 2>/dev/null | grep -v '^==>' | grep . | head -n 1)
      kept+=("${spec%% *} (${why:-no text})")
      rm -f "$TMP/block.$i"
    fi
  done
  rm -f "$TMP/changed"
  awk -v T="$TMP" '
    /^<!-- results:.*-->[[:space:]]*$/ {
      n++; print; inb = 1; old = ""; new = ""; f = T "/block." n
      has = 0; while ((getline x < f) > 0) { has = 1; new = new x "\n" } close(f)
      next }
    /^<!-- \/results -->[[:space:]]*$/ && inb {
      if (has) { printf "%s", new; if (new != old) print n > (T "/changed") } else printf "%s", old
      inb = 0; print; next }
    inb { old = old $0 "\n"; next }
    { print }' "$md" > "$TMP/new.md"
  changed=()
  if [ -f "$TMP/changed" ]; then
    while read -r i; do s=$(cat "$TMP/spec.$i"); changed+=("${s%% *}"); done < "$TMP/changed"
  fi
  if cmp -s "$md" "$TMP/new.md"; then
    msg="unchanged"
  elif [ $CHECK = 1 ]; then
    msg="OUT OF DATE: ${changed[*]}"; status=1
  else
    cat "$TMP/new.md" > "$md"; msg="updated ${changed[*]}"
  fi
  line="$md: $msg"
  [ ${#done_[@]} -gt 0 ] && line="$line (blocks from the results: ${done_[*]})"
  [ ${#kept[@]} -gt 0 ] && line="$line; kept as they were: ${kept[*]}"
  echo "$line"
done
exit $status
