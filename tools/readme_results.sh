#!/usr/bin/env bash
# The figures in the READMEs, from the committed results: every test count, ceiling and headline
# number that a README shows is written here, between marker lines, and nowhere by hand.
#
#   tools/readme_results.sh             rewrite every marked block of every *.md (the READMEs, each
#                                       <rung>/NOTES.md, any other; not under results/ or build/); make plots runs it
#   tools/readme_results.sh --check     change nothing; exit 1 if a block is not what the results give
#   tools/readme_results.sh --print "NAME key=value ..."    print one block's text (no README changes)
#   tools/readme_results.sh --help      this text
#
# A block: the line <!-- results:NAME [key=value ...] -->, its text (replaced on every run), the line
# <!-- /results -->. <gpu>: gpu=..., else $RESULTS_GPU, else h100. NAME:
#   table     any CSV (csv=PATH): a line per shape (and model=, page=), a column per id of ids=a,b,...
#             (default: all; NN* is rung NN's best variant, named), its col= (tflops; us_median: in
#             µs) to digits= (3). A later row replaces an earlier one; with a rep column (lab/ab.sh,
#             ids its runs) a cell is the reps' mean. where=d=128,N>1 (a column or extra= key) or
#             shape=prefill|decode (the ladder's) picks rows; float8 e4m3 rows (rung 07's FP8 step) only
#             where=dtype=e4m3 picks them. Above: what every row shares; below: why
#             a cell has no number. vs=REF: per shape the fastest of ids, REF, the ratio, and how
#             often it is >= 1.00 and >= 0.95. best: vs=ref (torch-cudnn)
#   models    results/<gpu>-models.csv as tables: prefill (TFLOP/s), decode=16x4096,1x32768 (B x M, GB/s)
#   ladder    per rung id, then the peers, prefill TFLOP/s and decode GB/s on sweeps/tour.txt's shapes
#             and × rung 00, from results/<gpu>-{prefill,decode}.csv (from=tour: <gpu>-tour.csv), and
#             where results/<gpu>-backward.csv is (not from=tour) the backward TFLOP/s on the prefill shape; each
#             rung's label and idea from its descriptor in its sources. ids=04,05a,05c,torch-flash (rung
#             variants or peers): those rows alone, in that order, each × against the first id (its
#             column "× 04"), and no commit named (a rung README's block: the CSV carries it). A link
#             to a rung's folder is relative to the file the block is in
#   ceilings  the ceiling rows of results/<gpu>-<sweep>.csv, sweeps=prefill,decode
#   decode    results/<gpu>-decode.csv per B x M (the first line's heads, d, type, no pages) in µs: the floor, rungs=06a,06b,06c, the peers; the last
#             rung's share of the copy ceiling, cuDNN's time over its, its merge=
#   gpu-tests results/<gpu>-gpu-tests.log: the total and the GPU matrix; rungs=01,02 or prefix=06: lines
#   report-row rung=05c's row on the ladder's prefill shape, as common/report.c prints it
#   train     results/<gpu>-train.csv (make train): the two runs' held-out losses, and their tokens/s
#   profile   results/<gpu>-profile.csv (sweep=backward: <gpu>-profile-backward.csv), rungs= or prefix=: per variant and shape, kernels, time, DRAM
#             bytes, FLOP/byte, TFLOP/s, share of the roof (tools/roofline.awk), tensor pipe, occupancy,
#             registers, shared memory, top stalls
# Only the text between the two marker lines changes; a block whose source file is missing is left
# as it is; running it twice changes nothing. Needs bash and awk only: no build, no GPU, no Python.
set -u
allowed='--check, --print "NAME key=value ...", --help'
refuse() { echo "readme_results.sh: unknown argument '$(printf '%s' "${1:0:200}" | tr '\000-\037\177' '?')' ($allowed)" >&2; exit 2; }
case ${1:-} in
  -h|--help) [ $# -eq 1 ] || refuse "$2"
             sed -n '2,/^set -u$/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
  ''|--check) [ $# -le 1 ] || refuse "$2" ;;
  --print)   [ $# -eq 2 ] && [ -n "$2" ] || { echo "readme_results.sh: --print takes one block, e.g. --print \"ladder gpu=h100\"" >&2; exit 2; } ;;
  *) refuse "$1" ;; esac
cd "$(dirname "$0")/.." || exit 1
RES=${RESULTS_DIR:-results} CHECK=0 TMP=$(mktemp -d) || exit 1
[ "${1:-}" = --check ] && CHECK=1; trap 'rm -rf "$TMP"' EXIT
# The ladder's shapes: sweeps/tour.txt's (prefill, then decode), Hkv left out where it equals Hq; float16.
tour_shape() { awk -v K="$1" '!/^[[:space:]]*(#|$)/ && ++n == K { printf "B=%s Hq=%s%s N=%s M=%s d=%s causal=%s dtype=f16", $1, $2, ($3 == $2 ? "" : " Hkv=" $3), $4, $5, $6, $7 }' sweeps/tour.txt; }
PREFILL_SHAPE=$(tour_shape 1) DECODE_SHAPE=$(tour_shape 2) IDEAS=$TMP/ideas.txt
# The ladder's words, id|label|idea|folder: a rung's from its descriptor, `static const rung x = {"id", "name", "idea"
# (literals, maybe over several lines), ...}`, read from its sources (no build); the last of its rung_variants[] is its own.
awk 'FNR == 1 { dir = FILENAME; sub(/\/.*/, "", dir) }
  /const rung [A-Za-z0-9_]+ *= *\{/ { v = $0; sub(/.*const rung */, "", v); sub(/[^A-Za-z0-9_].*/, "", v); DIR[v] = dir; ND[dir]++; S[v] = ""; cur = v; next }
  cur != "" { if (/^\};/) cur = ""; else S[cur] = S[cur] $0; next }
  /rung_variants\[\] *= *\{/ { inv = 1; L = "" }
  inv { L = L $0; if (/\}/) { inv = 0; n = split(L, a, "&"); sub(/[^A-Za-z0-9_].*/, "", a[n]); OWN[dir] = a[n] } }
  END { for (v in S) { s = S[v]; n = 0; t = ""
      while (n < 3 && match(s, /"([^"\\]|\\.)*"|,/)) { x = substr(s, RSTART, RLENGTH); s = substr(s, RSTART + RLENGTH)
        if (x != ",") t = t substr(x, 2, length(x) - 2); else if (t != "") { F[++n] = t; t = "" } }
      print F[1] "|" (ND[DIR[v]] == 1 ? F[1] " " F[2] : OWN[DIR[v]] == v ? F[1] " = rung " substr(F[1], 1, 2) : F[1]) "|" F[3] "|" DIR[v] } }' \
  [0-9][0-9]_*/*.cu* > "$IDEAS" 2>/dev/null
cat >> "$IDEAS" <<'EOF'
torch-flash|torch-flash|PyTorch SDPA, FlashAttention-2 backend|
torch-cudnn|torch-cudnn|PyTorch SDPA, cuDNN backend|
fa4|fa4|FlashAttention-4 (flash-attn-4, CuTe DSL), its Hopper forward|
EOF
read -r -d '' AWK_CSV <<'EOF'    # the awk of the CSV blocks: columns by name, # lines are metadata
BEGIN { FS = ","; ND = split("rung B Hq Hkv N M d causal dtype status ms_median ms_min ms_max tflops gbps rel_err max_abs_err lse_err workspace_bytes device commit extra", DN, " ")
  for (i = 1; i <= ND; i++) { D[DN[i]] = i; C[DN[i]] = i } }
{ sub(/\r$/, "") } /^# *[a-z_]+(,[a-z_]+)*,rung,/ { header(substr($0, index($0, "#") + 2)) }      # lab/ab.sh: "# run,rep,rung,...,ms_median,..."
/^#/ { if (match($0, /^# *commit: */)) META_COMMIT[FILENAME] = substr($0, RLENGTH + 1); next }
$1 == "rung" { header($0); next }
NF < 10 || $1 == "" { next }
function header(s,   a, n, i, j) { split("", C); n = split(s, a, ",")          # "...": the usual columns that follow
  for (i = 1; i <= n; i++) if (a[i] != "...") C[a[i]] = i; else for (j = D[a[i - 1]] + 1; j <= ND; j++) C[DN[j]] = i + j - D[a[i - 1]] - 1 }
function f(k) { return (k in C) ? $(C[k]) : "" }; function ok() { return f("status") == "ok" }
function kind(id) { return id ~ /^ceiling-/ ? "ceiling" : id ~ /^floor-/ ? "floor" : (id ~ /^[0-9][0-9][a-z]*$/ ? "rung" : "peer") }
function get(k, x) { if (k in C) return f(k); x = ";" f("extra"); return match(x, ";" k "=[^;]*") ? substr(x, RSTART + length(k) + 2, RLENGTH - length(k) - 2) : "" }
# "d=128 N>1": every named column (or key of the extra field) equals its value (is above it); no dtype: float16
function want(flt,   a, n, i, kv, v, gt) { n = split(flt, a, /[ ,]/); for (i = 1; i <= n; i++) { gt = index(a[i], ">") > 0; split(a[i], kv, gt ? ">" : "=")
  v = get(kv[1]); if (kv[1] == "dtype" && v == "") v = "f16"; if (gt ? v + 0 <= kv[2] + 0 : v != kv[2]) return 0 } return 1 }
function add(list, w, s) { if (s == "") s = " "; return (w == "" || index(s list s, s w s)) ? list : list (list == "" ? "" : s) w }
function isort(A, n,   i, j, t) { for (i = 2; i <= n; i++) { t = A[i]; for (j = i - 1; j >= 1 && A[j] > t; j--) A[j + 1] = A[j]; A[j + 1] = t } }
# n significant digits, whole numbers from 10^n up (0.196, 21.4, 359, 2077); never more decimals than the CSV's text has
function sig(v, n,   e, p, d) { if (v + 0 <= 0) return v
  e = log(v + 0) / log(10) + 1e-9; e = (e == int(e) || e > 0) ? int(e) : int(e) - 1; p = n - 1 - e; if (p < 0) p = 0
  if (v "" ~ /^[0-9]*\.[0-9]+$/) { d = length(v) - index(v, "."); if (p > d) p = d } else if (v "" ~ /^[0-9]+$/) p = 0
  return sprintf("%." p "f", v + 0) }
function shape_text(flt,   a, n, i, kv, s) { n = split(flt, a, " ")
  for (i = 1; i <= n; i++) { split(a[i], kv, "="); if (kv[1] == "dtype" && kv[2] == "f16") continue
    s = s (s == "" ? "" : ", ") (kv[1] == "causal" ? (kv[2] == 1 ? "causal" : "not causal") : kv[1] == "dtype" ? kv[2] : kv[1] " = " kv[2]) } return s }
EOF
arg() { local a w; read -ra w <<< "$1"; for a in ${w[@]+"${w[@]}"}; do case $a in "$2"=*) printf '%s' "${a#*=}"; return ;; esac; done; printf '%s' "$3"; }
need() { [ -f "$1" ] && return 0; why="no $1"; return 1; }
gen_ladder() {  # GPU FROM IDS (tour: both columns from results/<gpu>-tour.csv, and no backward column; IDS: a,b,c or all)
  local pre=$RES/$1-prefill.csv dec=$RES/$1-decode.csv bwd=$RES/$1-backward.csv files=()
  [ "$2" = tour ] && pre=$RES/$1-tour.csv dec=$RES/$1-tour.csv bwd=""
  [ -f "$pre" ] && files+=("$pre"); [ -f "$dec" ] && [ "$dec" != "$pre" ] && files+=("$dec")
  [ ${#files[@]} -gt 0 ] || { why="no $pre or $dec"; return 1; }
  if [ -n "$bwd" ] && [ -f "$bwd" ]; then files+=("$bwd"); else bwd=""; fi    # rung 08's backward pass, the prefill shape
  awk -v PRE="$pre" -v DEC="$dec" -v BWD="$bwd" -v FP="$PREFILL_SHAPE" -v FD="$DECODE_SHAPE" -v IDEAS="$IDEAS" -v IDS="$3" -v UP="${MD_UP:-}" "$AWK_CSV"$'\n''
BEGIN { while ((getline line < IDEAS) > 0) { split(line, a, "|"); LABEL[a[1]] = a[2]; IDEA[a[1]] = a[3]; DIRS[a[1]] = a[4] }
  col["p"] = "tflops"; col["d"] = "gbps"; SRC["p"] = PRE; SRC["d"] = DEC; SH["p"] = FP; SH["d"] = FD
  if (BWD != "") { col["b"] = "tflops"; SRC["b"] = BWD; SH["b"] = FP } }
{ id = $1; k = kind(id); HAVE[FILENAME] = 1; if (k == "ceiling" || k == "floor") next
  INCSV[id] = 1; if (k == "rung") RUNGS = add(RUNGS, id); else PEERS = add(PEERS, id)
  for (s in col) if (FILENAME == SRC[s] && want(SH[s])) { ST[s, id] = f("status")                       # a later row (a rerun) wins
    if (ok() && f(col[s]) + 0 > 0) { V[s, id] = f(col[s]); CM[s, id] = f("commit") } else delete V[s, id] } }
function cell(s, id,   st) { if ((s, id) in V) return sig(V[s, id], 3); if (!((s, id) in ST)) return "–"; st = ST[s, id]; sub(/:.*/, "", st); return st }
function x00(s, id,   v) { if (!((s, id) in V && (s, REF) in V)) return ""; v = V[s, id] / V[s, REF]; return v >= 10 ? sig(v, 3) : v >= 1 ? sprintf("%.2f", v) : sig(v, 2) }
function bold(t, s, id) { return (t != "" && id == BEST[s]) ? "**" t "**" : t }
function where(F, s,   i, c, p, L, O, nc) {        # the CSV, and which rows of the column came from which commit
  for (i = 1; i <= NALL; i++) if ((s, ALL[i]) in V) { c = CM[s, ALL[i]]; if (!(c in L)) O[++nc] = c; L[c] = add(L[c], ALL[i]) }
  for (i = 1; i <= nc; i++) p = p (i > 1 ? "; " : "") (nc > 1 ? L[O[i]] " at commit " : "at commit ") O[i]
  if (IDS != "") return HAVE[F] ? F (p != "" ? "" : ": no ok row on this shape") : "no " F " yet"     # ids=: a lesson block names no commit (its CSV does)
  return HAVE[F] ? F (p != "" ? ", rows " p : ": no ok row on this shape") : "no " F " yet" }
function isrung(id) { return IDS == "" ? kind(id) == "rung" : kind(id) == "rung" || DIRS[id] != "" }
END { if (IDS == "") { REF = "00"; XH = "rung 00"; n = split(RUNGS, R, " "); np = split(PEERS, P, " "); isort(R, n)      # lesson order, then the peers; those with a number
    for (i = 1; i <= n + np; i++) { id = i <= n ? R[i] : P[i - n]; if (("p", id) in V || ("d", id) in V || ("b", id) in V) ALL[++NALL] = id } }
  else { NALL = split(IDS, ALL, ","); REF = XH = ALL[1]                # ids=: these rows, in this order, each × against the first
    for (i = 1; i <= NALL; i++) if (!(ALL[i] in INCSV) && !(ALL[i] in LABEL)) { print "ids=: no id " ALL[i] " in " PRE (DEC != PRE ? " or " DEC : "") " nor among the rungs and peers"; exit 1 } }
  for (i = 1; i <= NALL; i++) { id = ALL[i]; if (isrung(id)) for (s in col) if ((s, id) in V && (BEST[s] == "" || V[s, id] + 0 > V[s, BEST[s]] + 0)) BEST[s] = id }
  printf "Prefill: %s; %s. Decode: %s; %s. ", shape_text(FP), where(PRE, "p"), shape_text(FD), where(DEC, "d")
  if (BWD != "") printf "Backward (dQ, dK and dV from dO; TFLOP/s count 2.5× the forward'"'"'s FLOPs): the prefill shape; %s. ", where(BWD, "b")
  print "Each × is against " (IDS == "" ? XH : REF ", the first row,") " in the same CSV; bold: the fastest rung in the column.\n"
  print "| rung | idea | prefill TFLOP/s | × " XH " | decode GB/s | × " XH " |" (BWD != "" ? " backward TFLOP/s |" : "") "\n|---|---|---|---|---|---|" (BWD != "" ? "---|" : "")
  for (i = 1; i <= NALL; i++) { id = ALL[i]; lab = (id in LABEL) ? LABEL[id] : id
    printf "| %s | %s | %s | %s | %s | %s |%s\n", DIRS[id] == "" ? lab : "[" lab "](" UP DIRS[id] "/)", IDEA[id], \
      bold(cell("p", id), "p", id), bold(x00("p", id), "p", id), bold(cell("d", id), "d", id), bold(x00("d", id), "d", id), \
      BWD != "" ? " " bold(cell("b", id), "b", id) " |" : "" } }' "${files[@]}"
}
gen_ceilings() {  # GPU SWEEPS
  local files=() sw; for sw in ${2//,/ }; do [ -f "$RES/$1-$sw.csv" ] && files+=("$RES/$1-$sw.csv"); done; [ ${#files[@]} -gt 0 ] || { why="no $RES/$1-{$2}.csv"; return 1; }
  awk -v LIST="${files[*]}" "$AWK_CSV"$'\n''
$1 == "ceiling-copy" && ok() { COPY[FILENAME] = f("gbps"); CC[FILENAME] = f("commit") }
$1 == "ceiling-gemm" && ok() { GEMM[FILENAME] = f("tflops"); GC[FILENAME] = f("commit"); GX[FILENAME] = f("extra") }
END { nf = split(LIST, FL, " "); for (i = 1; i <= nf; i++) { F = FL[i]; t = ""; if (F in COPY) t = "device-to-device copy " sig(COPY[F], 3) " GB/s"
    if (F in GEMM) { x = GX[F]; gsub(/=/, " = ", x); t = t (t == "" ? "" : ", ") "cuBLAS float16 GEMM " sig(GEMM[F], 3) " TFLOP/s" (x != "" ? " (" x ")" : "") }
    out = out (out == "" ? "" : "; ") F " at commit " ((F in CC) ? CC[F] : (F in GC) ? GC[F] : META_COMMIT[F]) ": " (t == "" ? "no ceiling rows" : t) }
  print "Ceilings, each measured in the same run as the rows of its CSV (rows `ceiling-copy`, counting bytes read and written, and `ceiling-gemm`): " out "." }' "${files[@]}"
}
gen_gpu_tests() {  # GPU RUNGS PREFIX
  local log=$RES/$1-gpu-tests.log; need "$log" || return 1
  awk -v LOG="$log" -v RUNGS="$2" -v PREFIX="$3" '{ sub(/\r$/, "") }
NR == 1 && match($0, /at commit [^ ]+/) { COMMIT = substr($0, RSTART + 10, RLENGTH - 10) }
/^== / { SEC = substr($0, 4); next } /^   device: / { DEV = $0; sub(/^   device: [^ ]+ [0-9]+ /, "", DEV); next }
/^ +[^ ]+ +[0-9]+ passed, [0-9]+ failed, [0-9]+ refused$/ { cur = $1; L[++nl] = cur; P[cur] = $2; F[cur] = $4; S[cur] = $6; TP += $2; TF += $4; TS += $6; next }
/^      refused / && cur != "" { r = $0; sub(/^      refused /, "", r); c = r; sub(/: unsupported: .*/, "", c); sub(/.*: unsupported: /, "", r)
  NR_[cur]++; RC[cur, NR_[cur]] = c; RR[cur, NR_[cur]] = r; next }
/^ +[0-9]+ passed, [0-9]+ failed/ && SEC != "" { SL[SEC] = $0; sub(/^ +/, "", SL[SEC]); SO[++ns] = SEC; next } /^   skipped: / && SEC != "" { SL[SEC] = substr($0, 4); SO[++ns] = SEC; next }
/^[0-9]+ passed, [0-9]+ failed/ { TOTAL = $0 }
function line(lab,   t, i) { t = P[lab] " passed, " F[lab] " failed, " S[lab] " refused"
  if (NR_[lab] > 0 && NR_[lab] <= 2) { for (i = 1; i <= NR_[lab]; i++) t = t (i > 1 ? "; " : " (") RC[lab, i] ": " RR[lab, i]; t = t ")" } return t }
END { src = "`make test` at commit " COMMIT (DEV != "" ? " on the " DEV : " on the GPU") " (" LOG ")"
  if (RUNGS PREFIX == "") { if (TOTAL == "") { print "no total line in " LOG; exit 1 }
    printf "%s: **%s**. The GPU matrix (tests/gpu_cases.txt): %d runs of %d cases, one per rung variant and some again under other settings; %d passed, %d failed, %d refused with a reason", \
      src, TOTAL, nl, nl ? P[L[1]] + F[L[1]] + S[L[1]] : 0, TP, TF, TS
    for (i = 1; i <= ns; i++) if (SO[i] !~ /^GPU matrix/) t = t (t == "" ? "" : "; ") SO[i] ": " SL[SO[i]]
    print (t != "" ? ". The rest: " t : "") "."; exit 0 }
  for (i = 1; i <= nl; i++) if ((RUNGS != "" && index("," RUNGS ",", "," L[i] ",")) || (PREFIX != "" && index(L[i], PREFIX) == 1)) W[++m] = L[i]
  if (m == 0) { print "none of " RUNGS PREFIX " in " LOG; exit 1 }; if (m == 1) { printf "The GPU matrix in %s, variant %s: %s.\n", src, W[1], line(W[1]); exit 0 }
  print "The GPU matrix in " src ":\n\n| run | passed | failed | refused |\n|---|---|---|---|"
  for (i = 1; i <= m; i++) printf "| %s | %d | %d | %d |\n", W[i], P[W[i]], F[W[i]], S[W[i]] }' "$log" || { why="the block's lines are not in $log"; return 1; }
}
gen_decode() {  # GPU RUNGS
  local dec=$RES/$1-decode.csv; need "$dec" || return 1
  awk -v RUNGS="$2" -v DEC="$dec" "$AWK_CSV"$'\n''
$1 == "ceiling-copy" && ok() { COPY = f("gbps"); next }
ok() && $1 !~ /^ceiling-/ { g = f("Hq") " " f("Hkv") " " f("N") " " f("d") " " f("dtype") " " get("page")
  if (G0 == "") G0 = g; if (g != G0) { OTHER = 1; next }    # the first line'"'"'s family (B x M) alone
  k = f("B") " x " f("M")
  if (!(k in KV)) { ORD[++ns] = k; KV[k] = 4.0 * f("B") * f("Hkv") * f("M") * f("d") / 1e6; SH = f("Hq") " " f("Hkv") " " f("N") " " f("d") }
  T[k, $1] = f("ms_median") * 1000; G[k, $1] = f("gbps"); CM[$1] = f("commit"); if (match(f("extra"), /merge=[a-z]+/)) MG[k, $1] = substr(f("extra"), RSTART + 6, RLENGTH - 6) }
function us(k, id) { return ((k, id) in T) ? sprintf("%.1f", T[k, id]) : "–" }
END { nr = split(RUNGS, R, ","); last = R[nr]; split(SH, sh, " "); if (ns == 0) { print "no decode rows in " DEC; exit 1 }
  printf "Decode sweep (Hq = %s, Hkv = %s, N = %s query token, d = %s), µs, the median of each row; %s at commit %s, with the peers and the read floor in the same run (%s; copy ceiling %s GB/s):\n\n", \
    sh[1], sh[2], sh[3], sh[4], RUNGS, CM[last], DEC, sig(COPY, 3)
  if (OTHER) print "The sweep'"'"'s lines of other shapes (other heads, head dims, types or pages) are not in this table.\n"
  printf "| B x M | KV | floor |"; for (i = 1; i <= nr; i++) printf " %s |", R[i]
  printf " torch-flash | torch-cudnn | %s, %% of copy | cuDNN / %s | %s merges |\n|---|---|---|", last, last, last; for (i = 1; i <= nr + 5; i++) printf "---|"; print ""
  for (j = 1; j <= ns; j++) { k = ORD[j]; printf "| %s | %.0f MB | %s |", k, KV[k], us(k, "floor-read"); for (i = 1; i <= nr; i++) printf " %s |", us(k, R[i])
    printf " %s | %s | %s | %s | %s |\n", us(k, "torch-flash"), us(k, "torch-cudnn"), ((k, last) in G && COPY > 0) ? sprintf("%.0f%%", 100 * G[k, last] / COPY) : "–", \
      ((k, last) in T && (k, "torch-cudnn") in T) ? sprintf("%.2f", T[k, "torch-cudnn"] / T[k, last]) : "–", ((k, last) in MG) ? MG[k, last] : "–" } }' "$dec"
}
gen_table() {  # CSV IDS COL FILTER VS DIGITS
  need "$1" || return 1; awk -v CSV="$1" -v IDS="$2" -v COL="$3" -v FLT="$4" -v VS="$5" -v DIG="${6:-3}" "$AWK_CSV"$'\n''
$1 !~ /^(ceiling|floor)-/ { id = ("run" in C) ? f("run") : $1; if (!(id in NI)) { NI[id] = 1; IDL[++ni] = id } }    # every id, for NN*
$1 ~ /^(ceiling|floor)-/ || !want(FLT) || (FLT !~ /(^|[ ,])dtype=/ && f("dtype") == "e4m3") { next }    # FP8: only where=dtype=e4m3
{ m = get("model"); gsub(/\+/, ", ", m); k = m "|" f("B") "|" f("Hq") "|" f("Hkv") "|" f("N") "|" f("M") "|" f("d") "|" f("causal") "|" (f("dtype") == "" ? "f16" : f("dtype")) "|" get("page")
  if (!(k in SEEN)) { SEEN[k] = 1; ORD[++ns] = k }
  v = COL ~ /^us_/ ? sprintf("%.9f", f("ms_" substr(COL, 4)) * 1000) : f(COL); ST[k, id] = f("status")
  if (ok() && v + 0 > 0) { if ("rep" in C) { S[k, id] += v; V[k, id] = sprintf("%.9f", S[k, id] / ++NR_[k, id]); if (NR_[k, id] > 1) MEAN = 1 } else V[k, id] = v; CMK[k, id] = f("commit") }
  else if (!("rep" in C)) delete V[k, id] }
function match_id(c, id) { return c ~ /\*$/ ? index(id, substr(c, 1, length(c) - 1)) == 1 : id == c }; function name(c) { sub(/\*$/, "", c); return c }
function better(a, b) { return COL ~ /^(ms|us)_/ ? a + 0 < b + 0 : a + 0 > b + 0 }
function num(k, c,   i, id) { BID = ""; NM = 0             # column c of row k: its best number (of BID); NM: the ids c stands for
  for (i = 1; i <= ni; i++) if (match_id(c, id = IDL[i])) { NM++; if ((k, id) in V && (BID == "" || better(V[k, id], V[k, BID]))) BID = id }
  if (BID != "") COMMITS = add(COMMITS, CMK[k, BID], ", "); return BID == "" ? "" : V[k, BID] }
function note(who, r) { sub(/\.$/, "", r); if (!(r in WHO)) WO[++nw] = r; WHO[r] = add(WHO[r], who, ", ") }
function cell(k, c,   i, id, st, t, w, np, P) {          # the number, else FAIL, skipped or refused, and why (a FAIL always)
  for (i = 1; i <= ni; i++) if (match_id(c, id = IDL[i]) && (k, id) in ST && !((k, id) in V) && (st = ST[k, id]) != "ok") {
    if (st ~ /^FAIL/) { note(id " on " rowtext(k, 1), st); t = "FAIL"; continue }
    w = st ~ /^skipped/ ? "skipped" : "refused"; sub(/^unsupported: */, "", st); P[++np] = st; if (t == "" || t w == "refusedskipped") t = w }
  if (num(k, c) != "") return sig(V[k, BID], DIG) (NM > 1 ? " (" BID ")" : "")
  for (i = 1; i <= np; i++) note(name(c), P[i]); return t == "" ? "–" : t }
function rowtext(k, mode,   a, j, t) { split(k, a, "|"); if (mode == 1 && a[1] != "") return a[1]     # 0: what differs, 1: all, 2: what is shared
  for (j = 1; j <= 10; j++) if (a[j] != "" && (mode == 1 || (mode == 0) == (VARY[j] + 0)))
    t = t (t == "" ? "" : ", ") (LN[j] == "causal" ? (a[j] == 1 ? "causal" : "not causal") : mode == 0 && LN[j] ~ /^(model|dtype)$/ ? a[j] : LN[j] " = " a[j]); return t }
function labels(k,   a, j, t) { split(k, a, "|"); t = "|"; for (j = 1; j <= 10; j++) if (VARY[j]) t = t " " (a[j] == "" ? "–" : a[j]) " |"; return t }
END { if (ns == 0) { print "no rows" (FLT == "" ? "" : " with " FLT) " in " CSV; exit 1 }
  split("model B Hq Hkv N M d causal dtype page", LN, " "); hd = sep = "|"
  for (i = 2; i <= ns; i++) { split(ORD[1], a, "|"); split(ORD[i], b, "|"); for (j = 1; j <= 10; j++) if (a[j] != b[j]) VARY[j] = 1 }
  for (j = 1; j <= 10; j++) if (VARY[j]) { hd = hd " " LN[j] " |"; sep = sep "---|" }
  if (IDS != "") nc = split(IDS, CO, ",")                 # else every id: the rungs, variants together, in lesson order; the peers
  else { for (i = 1; i <= ni; i++) if (kind(IDL[i]) == "rung") G = add(G, substr(IDL[i], 1, 2) "*"); nc = split(G, CO, " "); isort(CO, nc)
    for (i = 1; i <= ni; i++) if (kind(IDL[i]) == "peer") CO[++nc] = IDL[i] }
  if (VS == "") { for (j = 1; j <= ns; j++) for (i = 1; i <= nc; i++) if ((CELL[j, i] = cell(ORD[j], CO[i])) ~ /^[0-9]/) HAS[i] = 1
    for (i = 1; i <= nc; i++) if (HAS[i]) { hd = hd " " name(CO[i]) " |"; sep = sep "---|" }
    for (j = 1; j <= ns; j++) { t = labels(ORD[j]); for (i = 1; i <= nc; i++) if (HAS[i]) t = t " " CELL[j, i] " |"; BODY[++nb] = t }
    what = MEAN ? "each cell the mean of its rows\047 " COL ", a row per rep" : COL " of each row" }
  else { u = COL == "tflops" ? "TFLOP/s" : COL; hd = hd " fastest | " u " | " VS " | ratio |"; sep = sep "---|---|---|---|"; what = "per shape the fastest of " IDS " against " VS " (" u ")"
    for (j = 1; j <= ns; j++) { k = ORD[j]; bb = ""
      for (i = 1; i <= nc; i++) if ((x = num(k, CO[i])) != "" && (bb == "" || better(x, bt))) { bt = x; bb = BID }
      if (bb == "" || (rf = num(k, VS)) == "") continue
      r = bt / rf; n++; n1 += (r >= 1); n95 += (r >= 0.95); if (n == 1 || r < lo) { lo = r; lk = k }
      BODY[++nb] = labels(k) sprintf(" %s | %s | %s | %.3f |", bb, sig(bt, DIG), sig(rf, DIG), r) } }
  con = rowtext(ORD[1], 2); printf "%s, %s %s; %s%s:\n\n%s\n%s\n", CSV, index(COMMITS, ",") ? "rows from the runs at commits" : "one run, commit", COMMITS, what, \
    con == "" ? "" : "; in every row " con, hd, sep
  for (j = 1; j <= nb; j++) print BODY[j]; if (VS != "") printf "\nAt least 1.00x on %d of %d shapes, at least 0.95x on %d; the lowest %.3f (%s).\n", n1, n, n95, lo, rowtext(lk, 0)
  for (i = 1; i <= nw; i++) t2 = t2 (i > 1 ? "; " : "") WHO[WO[i]] ": " WO[i]; if (nw) print "\nWhy a cell has no number: " t2 "." }' "$1"
}
gen_models() {  # GPU DECODE: results/<gpu>-models.csv, its prefill rows, then each decode shape (B x M) of DECODE
  local csv=$RES/$1-models.csv s rc=1; need "$csv" || return 1
  echo "$csv ($(sed -n "s/^# device: //p" "$csv" | head -n 1)): every rung variant and the peers over sweeps/models.txt; per rung its best variant, named where it has several."
  for s in prefill ${2//,/ }; do
    if [ "$s" = prefill ]; then printf '\n**Prefill**, TFLOP/s:\n\n'; gen_table "$csv" "" tflops "N>1" "" && rc=0
    else printf '\n**Decode**, B = %s, M = %s, GB/s:\n\n' "${s%x*}" "${s#*x}"; gen_table "$csv" "" gbps "N=1,B=${s%x*},M=${s#*x}" "" && rc=0; fi
  done; [ $rc = 0 ] || why="no rows of these shapes in $csv"; return $rc
}
gen_report_row() {  # GPU RUNG
  local pre=$RES/$1-prefill.csv; need "$pre" || return 1
  awk -v RUNG="$2" -v FP="$PREFILL_SHAPE" -v PRE="$pre" "$AWK_CSV"$'\n''
$1 == RUNG && want(FP) { ROW = $0; for (k in C) X[k] = f(k) }
END { if (ROW == "") { print "no " RUNG " row on the prefill shape in " PRE; exit 1 }      # the layout of common/report.c
  st = X["status"]; if (match(X["extra"], /checked=sample:[0-9]+\/[0-9]+/)) { split(substr(X["extra"], RSTART + 15, RLENGTH - 15), cc, "/"); st = st " (checked " cc[1] " of " cc[2] " rows)" }
  printf "```\n%-5s %4s %4s %4s %6s %6s %5s %1s %9s %9s %9s %8s %7s %9s %9s  %s\n", "rung", "B", "Hq", "Hkv", "N", "M", "d", "c", "ms_med", "ms_min", "ms_max", "TFLOP/s", "GB/s", "rel_err", "lse_err", "status"
  printf "%-5s %4d %4d %4d %6d %6d %5d %1d %9.4f %9.4f %9.4f %8.2f %7.0f %9.2e %9.2e  %s\n```\n", X["rung"], X["B"], X["Hq"], X["Hkv"], X["N"], X["M"], X["d"], X["causal"], \
    X["ms_median"], X["ms_min"], X["ms_max"], X["tflops"], X["gbps"], X["rel_err"], X["lse_err"], st }' "$pre"
}
gen_profile() {  # GPU RUNGS PREFIX [SWEEP]
  local csv=$RES/$1-profile${4:+-$4}.csv files=() sw; need "$csv" || return 1
  for sw in tour prefill decode; do [ -f "$RES/$1-$sw.csv" ] && files+=("$RES/$1-$sw.csv"); done
  awk -v CSV="$csv" -v RUNGS="$2" -v PREFIX="$3" -v FP="$PREFILL_SHAPE" -v FD="$DECODE_SHAPE" "$AWK_CSV"$'\n'"$(cat tools/roofline.awk)"$'\n''
FILENAME != CSV { if ($1 == "ceiling-copy" && ok() && !COPY) { COPY = f("gbps") + 0; CF = FILENAME }      # the ceilings: the first CSV that has them
  if ($1 == "ceiling-gemm" && ok() && !GEMM) { GEMM = f("tflops") + 0; GF = FILENAME }; next }
(RUNGS != "" && !index("," RUNGS ",", "," $1 ",")) || (PREFIX != "" && index($1, PREFIX) != 1) { next }
{ sh = want(FP) ? "prefill" : want(FD) ? "decode" : shape_text("B=" f("B") " N=" f("N") " M=" f("M") " d=" f("d")); k = $1 SUBSEP sh
  if (f("kernel") != "total") { if (!(k in KN)) LT[k] = -1                  # the kernels: names, and the resources of the longest
    KN[k] = KN[k] (KN[k] == "" ? "" : ", ") short(f("kernel")) (f("launches") > 1 ? " ×" f("launches") : "")
    if (f("time_ns") + 0 > LT[k]) { LT[k] = f("time_ns") + 0; REG[k] = f("registers"); SM[k] = f("smem_static_bytes") + f("smem_dynamic_bytes") }; next }
  if (!(k in ROW)) ORD[++nr] = k; ROW[k] = 1; for (c in C) X[k, c] = f(c); CM = add(CM, f("commit")) }
function short(s) { return length(s) > 28 ? substr(s, 1, 27) "…" : s }; function pct(v) { return v == "" ? "–" : sprintf("%.0f%%", v) }
function tensor(k,   h, g) { h = X[k, "tensor_hmma_pct"]; g = X[k, "tensor_gmma_pct"]; if (h == "" && g == "") return "–"; return (g != "" && g + 0 > h + 0) ? sprintf("%.0f%% (wgmma)", g) : sprintf("%.0f%%", h) }
function stalls(s,   a, n, i, t) { n = split(s, a, ";"); for (i = 1; i <= n; i++) { sub(/=/, " ", a[i]); t = t (i > 1 ? ", " : "") a[i] } return t == "" ? "–" : t }
END { if (nr == 0) { print "no profile rows" (RUNGS PREFIX != "" ? " of " RUNGS PREFIX : "") " in " CSV; exit 1 }
  roof = COPY > 0 ? sprintf("min(GEMM ceiling, FLOP/byte × copy ceiling), with the ceilings of %s: %s TFLOP/s, %s GB/s", CF (GF != CF ? " and " GF : ""), sig(GEMM, 3), sig(COPY, 3)) : "no ceiling rows found: no roof"
  printf "Nsight Compute (%s; commit %s), one profiled launch per variant and shape, its kernels summed: time, DRAM bytes read + written, the course\047s FLOP count over them (FLOP/byte, TFLOP/s) and its share of the roof, %s. Tensor pipe: busy cycles of ncu\047s hmma tensor pipe over its peak (the H100\047s ncu has no separate gmma counter; rung 07\047s kernels, which issue wgmma and no mma.sync, keep it busy, so wgmma counts there too). Tensor pipe and occupancy: means over the launch weighted by kernel time; registers and shared memory: the longest kernel\047s; stalls: warps stalled per issued instruction, the three largest reasons.\n\n", CSV, CM, roof
  print "| variant | shape | kernels | µs | DRAM MB read + written | FLOP/byte | TFLOP/s | of the roof | tensor pipe | occupancy | registers | shared memory | top stalls |"
  print "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
  for (i = 1; i <= nr; i++) { k = ORD[i]; split(k, p, SUBSEP); ai = X[k, "flop_per_byte"] + 0
    printf "| %s | %s | %s | %s | %s + %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", p[1], p[2], KN[k], sig(X[k, "time_ns"] / 1000, 3), sig(X[k, "dram_read_bytes"] / 1e6, 3), \
      sig(X[k, "dram_write_bytes"] / 1e6, 3), sig(X[k, "flop_per_byte"], 3), sig(X[k, "tflops"], 3), (COPY > 0 ? pct(100 * X[k, "tflops"] / attainable(ai, GEMM, COPY)) : "–"), tensor(k), \
      pct(X[k, "occupancy_pct"]), (REG[k] == "" ? "–" : REG[k]), (SM[k] == "" ? "–" : SM[k] < 1024 ? SM[k] " B" : sprintf("%.0f KiB", SM[k] / 1024)), stalls(X[k, "stalls"]) } }' "$csv" ${files[@]+"${files[@]}"}
}
gen_train() {  # GPU: make train's two runs (results/<gpu>-train.csv): the held-out losses, and the mean
  # tokens per second of each run's logged intervals after the first (the first holds the warm-up)
  local csv=$RES/$1-train.csv; need "$csv" || return 1
  awk -F, -v CSV="${csv#"$PWD"/}" '/^# commit:/ { c = $0; sub(/^# commit: */, "", c) } /^# model:/ { m = $0; sub(/^# model: */, "", m) }
    /^#/ || $1 == "attention" { next }
    $3 == "eval" { ev[$1] = $4 + 0; next }
    $3 == "train" { if (!($1 in first)) first[$1] = $2; else { t[$1] += $5; n[$1]++ } }
    END { if (!("ladder" in ev) || !("sdpa" in ev) || !n["ladder"] || !n["sdpa"]) { print "no two finished runs in " CSV; exit 1 }
      gap = ev["ladder"] - ev["sdpa"]; if (gap < 0) gap = -gap
      printf "%s, one run, commit %s (%s): held-out loss after the last step %.4f with ladder.attention, %.4f with SDPA (%.2f%% apart); tokens per second after the first logged interval %.0f k and %.0f k (ladder %.3f× SDPA).\n", \
        CSV, c, m, ev["ladder"], ev["sdpa"], 100 * gap / ev["sdpa"], t["ladder"] / n["ladder"] / 1e3, t["sdpa"] / n["sdpa"] / 1e3, (t["ladder"] / n["ladder"]) / (t["sdpa"] / n["sdpa"]) }' "$csv"
}
generate() {  # SPEC ("NAME key=value ...") -> the block's text on stdout, or 1 with $why
  local spec=$1 name=${1%% *} gpu w v; gpu=$(arg "$spec" gpu "${RESULTS_GPU:-h100}")
  case $name in
    ladder)     gen_ladder "$gpu" "$(arg "$spec" from "")" "$(arg "$spec" ids "")" ;;
    ceilings)   gen_ceilings "$gpu" "$(arg "$spec" sweeps prefill,decode)" ;;
    gpu-tests)  gen_gpu_tests "$gpu" "$(arg "$spec" rungs "")" "$(arg "$spec" prefix "")" ;;
    decode)     gen_decode "$gpu" "$(arg "$spec" rungs 06a,06b,06c)" ;;
    models)     gen_models "$gpu" "$(arg "$spec" decode 16x4096,1x32768)" ;;
    report-row) gen_report_row "$gpu" "$(arg "$spec" rung 05c)" ;;
    train)      gen_train "$gpu" ;;
    profile)    gen_profile "$gpu" "$(arg "$spec" rungs "")" "$(arg "$spec" prefix "")" "$(arg "$spec" sweep "")" ;;
    table|best) w=$(arg "$spec" where ""); case $(arg "$spec" shape "") in prefill) w=$PREFILL_SHAPE ;; decode) w=$DECODE_SHAPE ;; esac
                if [ "$name" = best ]; then v=$(arg "$spec" ref torch-cudnn); else v=$(arg "$spec" vs ""); fi
                gen_table "$(arg "$spec" csv "")" "$(arg "$spec" ids "")" "$(arg "$spec" col tflops)" "$w" "$v" "$(arg "$spec" digits 3)" ;;
    *)          why="unknown block name '$name'"; return 1 ;;
  esac
}
# ---- --print SPEC: one block's text on stdout (make's tour prints its table so) ----------------
[ "${1:-}" = --print ] && { why=""; generate "${2:-}" && exit 0; echo "readme_results: no ${2%% *} block: ${why:-see above}" >&2; exit 1; }
# A block in a README.md names no commit (the lesson format): its CSVs carry them, NOTES.md may name them.
nocommit() {
  sed -E -i 's/,? one run, commit [0-9a-f]{7,40}/, one run/g; s/rows from the runs at commits [0-9a-f]{7,40}(, [0-9a-f]{7,40})*/rows from several runs/g;
             s/rows (([0-9a-z-]+ )+at commit [0-9a-f]{7,40}(; )?){2,}/rows from several runs (the CSV names their commits)/g;
             s/ at commits? [0-9a-f]{7,40}(( and|,) [0-9a-f]{7,40})*//g; s/;? commit [0-9a-f]{7,40}//g' "$1"
}
# ---- each README: its markers numbered in file order (an unclosed or nested block leaves it alone), each block made, spliced in
status=0; mapfile -t readmes < <(find . -name '*.md' -not -path './.git/*' -not -path './build/*' -not -path './results/*' -print | sed 's|^\./||' | sort)
for md in ${readmes[@]+"${readmes[@]}"}; do
  grep -q '^<!-- results:' "$md" || continue
  rm -f "$TMP"/block.* "$TMP"/spec.* "$TMP"/err.* "$TMP/changed"; done_=() kept=() changed=()
  MD_UP=""; case $md in */*) MD_UP=$(printf '%s' "${md%/*}/" | sed 's|[^/]*/|../|g') ;; esac     # a block's links, from the file's folder
  if ! awk -v T="$TMP" '/^<!-- results:.*-->[[:space:]]*$/ { if (open) bad = bad " " NR ": a block opens inside another;"; s = $0; sub(/^<!-- results:/, "", s)
        sub(/[[:space:]]*-->[[:space:]]*$/, "", s); n++; print s > (T "/spec." n); close(T "/spec." n); open = NR; next }
      /^<!-- \/results -->[[:space:]]*$/ { if (!open) bad = bad " " NR ": a closing marker without an opening one;"; open = 0 }
      END { if (open) bad = bad " " open ": a block that never closes"; if (bad != "") print FILENAME ":" bad > "/dev/stderr"; exit bad != "" }' "$md"; then
    echo "readme_results: $md left unchanged (markers out of order)"; status=1; continue
  fi
  for sf in "$TMP"/spec.*; do
    [ -f "$sf" ] || continue; i=${sf##*.} spec=$(cat "$sf") why=""
    if generate "$spec" > "$TMP/block.$i" 2> "$TMP/err.$i" && ! grep -q '^<!-- /results -->' "$TMP/block.$i"; then done_+=("${spec%% *}")
      case $md in README.md|*/README.md) nocommit "$TMP/block.$i" ;; esac   # a lesson names no commit: its CSV does
    else [ -z "$why" ] && why=$(cat "$TMP/block.$i" "$TMP/err.$i" | grep -m 1 .); kept+=("${spec%% *} (${why:-no text})"); rm -f "$TMP/block.$i"; fi
  done
  awk -v T="$TMP" '/^<!-- results:.*-->[[:space:]]*$/ { n++; print; inb = 1; old = new = ""; f = T "/block." n; has = 0
        while ((getline x < f) > 0) { has = 1; new = new x "\n" } close(f); next }
      /^<!-- \/results -->[[:space:]]*$/ && inb { printf "%s", has ? new : old; if (has && new != old) print n > (T "/changed"); inb = 0; print; next }
      inb { old = old $0 "\n"; next } { print }' "$md" > "$TMP/new.md"
  if [ -f "$TMP/changed" ]; then while read -r i; do s=$(cat "$TMP/spec.$i"); changed+=("${s%% *}"); done < "$TMP/changed"; fi
  if cmp -s "$md" "$TMP/new.md"; then msg="unchanged"
  elif [ $CHECK = 1 ]; then msg="OUT OF DATE: ${changed[*]}"; status=1
  else cat "$TMP/new.md" > "$md"; msg="updated ${changed[*]}"; fi
  echo "$md: $msg${done_[0]+ (blocks from the results: ${done_[*]})}${kept[0]+; kept as they were: ${kept[*]}}"
done
exit $status
