#!/usr/bin/env bash
# make plots: results/<gpu>-<sweep>.csv -> plots/<gpu>-*.png; results/splits-sim.csv -> plots/splits-sim.png.
# awk filters and joins the CSVs into small .dat files (and the per-panel settings, as gnuplot
# lines) under build/plots/<gpu>/; the plots/*.gp scripts draw them. No Python anywhere.
#
#   <gpu>-progression.png     speedup over rung 00, one bar per rung: prefill and decode
#   <gpu>-prefill-tflops.png  TFLOP/s against N, per head dim, causal and not
#   <gpu>-workspace.png       device memory beyond inputs and outputs, against N
#   <gpu>-decode-bandwidth.png  decode GB/s as a share of the copy ceiling, against M
#   <gpu>-article.png         ms per rung on the seed article's four shapes (if that CSV exists)
#   <gpu>-varlen.png          rung 06 per split planner on the varlen batches: time and the cost
#                             model's makespan over balanced's, and GB/s (if that CSV exists)
#   splits-sim.png            the split planners on the cost model alone, from splits-sim.csv
#                             (make splits; no GPU): makespan over balanced's against B
#
#   RESULTS_DIR=results   where the CSVs are          PLOTS_OUT=plots   where the PNGs go
#   ATTN_NO_INSTALL=1     never try to apt-get install a missing gnuplot (else, as root with
#                         apt-get, a missing gnuplot-nox is installed)
#   PLOTS_TERMINAL=png    force a gnuplot terminal (default pngcairo, else png)
set -u
caller=$PWD
cd "$(dirname "$0")/.." || exit 1
here() { case $1 in /*) printf '%s' "$1" ;; *) printf '%s/%s' "$caller" "$1" ;; esac; }
RES=results;  [ -n "${RESULTS_DIR:-}" ] && RES=$(here "$RESULTS_DIR")
OUT=plots;    [ -n "${PLOTS_OUT:-}" ] && OUT=$(here "$PLOTS_OUT")
RES=${RES%/} OUT=${OUT%/}
WORK=build/plots

# ---- what is there to plot ------------------------------------------------------------------
shopt -s nullglob
all=("$RES"/*.csv)
if [ ${#all[@]} -eq 0 ]; then
  echo "no $RES/*.csv yet: nothing to plot"
  exit 0
fi
gpus=()
for f in "$RES"/*-prefill.csv "$RES"/*-decode.csv "$RES"/*-article.csv "$RES"/*-varlen.csv; do
  g=$(basename "$f"); g=${g%-*}
  case " ${gpus[*]-} " in *" $g "*) ;; *) gpus+=("$g") ;; esac
done
sim=$RES/splits-sim.csv; [ -f "$sim" ] || sim=""
if [ ${#gpus[@]} -eq 0 ] && [ -z "$sim" ]; then
  echo "no $RES/<gpu>-{prefill,decode,article,varlen}.csv or $RES/splits-sim.csv yet: nothing to plot"
  exit 0
fi

# ---- gnuplot --------------------------------------------------------------------------------
if ! command -v gnuplot >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && [ -z "${ATTN_NO_INSTALL:-}" ]; then
    echo "gnuplot not found: installing gnuplot-nox with apt-get"
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gnuplot-nox; } >/dev/null 2>&1
  fi
  if ! command -v gnuplot >/dev/null 2>&1; then
    echo "gnuplot not found: install it (e.g. apt-get install gnuplot-nox) to draw plots/*.png"
    exit 1
  fi
fi
terms=$(gnuplot -e "set terminal" 2>&1)
if [ -n "${PLOTS_TERMINAL:-}" ]; then term=$PLOTS_TERMINAL
elif printf "%s\n" "$terms" | grep -qw pngcairo; then term=pngcairo
elif printf "%s\n" "$terms" | grep -qw png; then term=png
else
  echo "this gnuplot has no png terminal: install gnuplot-nox (or gnuplot-qt) to draw plots/*.png"
  exit 1
fi
# the libgd png terminal finds TrueType fonts through GDFONTPATH
[ "$term" = png ] && export GDFONTPATH=${GDFONTPATH:-/usr/share/fonts/truetype/dejavu}
mkdir -p "$OUT" "$WORK" || exit 1

# ---- the awk shared by every table below ----------------------------------------------------
# Columns are found by name from the header line; '#' lines are metadata; a row is one shape of
# one rung, peer or ceiling. Only status "ok" rows have numbers.
read -r -d '' AWK_LIB <<'EOF'
BEGIN {
  FS = ","
  n = split("rung B Hq Hkv N M d causal dtype status ms_median ms_min ms_max tflops gbps rel_err max_abs_err lse_err workspace_bytes device commit extra", h, " ")
  for (i = 1; i <= n; i++) C[h[i]] = i
  if (NAMES != "") while ((getline line < NAMES) > 0) { k = line; sub(/ .*/, "", k); RNAME[k] = line }
}
{ sub(/\r$/, "") }
/^#/ { next }
$1 == "rung" { for (i = 1; i <= NF; i++) C[$i] = i; next }
NF < 10 || $1 == "" { next }
function f(k) { return (k in C) ? $(C[k]) : "" }
function ok() { return f("status") == "ok" }
function kind(id) { return id ~ /^ceiling-/ ? "ceiling" : (id ~ /^[0-9][0-9][a-z]*$/ ? "rung" : "peer") }
function short(st) { if (st == "") return "no row"; sub(/:.*/, "", st); return st }
# rung ids in ladder order (05a 05b 05c before 05), then the peers by name
function key(id) { return kind(id) == "rung" ? substr(id, 1, 2) "." (length(id) > 2 ? substr(id, 3) : "~") : "~" id }
function sortids(s,   a, n, i, j, t, out) {
  n = split(s, a, " ")
  for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && key(a[j]) > key(t); j--) a[j + 1] = a[j]; a[j + 1] = t }
  out = ""; for (i = 1; i <= n; i++) out = out (i > 1 ? " " : "") a[i]; return out
}
function sortnum(s,   a, n, i, j, t, out) {
  n = split(s, a, " ")
  for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] + 0 > t + 0; j--) a[j + 1] = a[j]; a[j + 1] = t }
  out = ""; for (i = 1; i <= n; i++) out = out (i > 1 ? " " : "") a[i]; return out
}
function add(list, w) { return index(" " list " ", " " w " ") ? list : (list == "" ? w : list " " w) }
function fmt(v) { return v >= 100 ? sprintf("%.0f", v) : v >= 10 ? sprintf("%.1f", v) : v >= 1 ? sprintf("%.2f", v) : sprintf("%.2g", v) }
function fmtx(v) { return fmt(v) "x" }
function floor_(x) { return x == int(x) ? x : (x < 0 ? int(x) - 1 : int(x)) }
function log10(v) { return log(v) / log(10) }
function dec_lo(v) { return 10 ^ floor_(log10(v) + 1e-9) }
function dec_hi(v) { return 10 ^ -floor_(-log10(v) + 1e-9) }
# "d=128 N=4096 causal=0": every named column equals its value
function want(flt,   a, n, i, kv) { n = split(flt, a, " "); for (i = 1; i <= n; i++) { split(a[i], kv, "="); if (f(kv[1]) != kv[2]) return 0 } return 1 }
function shape(   s) {
  s = "B=" f("B") " " (f("Hq") == f("Hkv") ? "H=" f("Hq") : "Hq=" f("Hq") " Hkv=" f("Hkv"))
  s = s " " (f("N") == f("M") ? "N=M=" f("N") : "N=" f("N") " M=" f("M")) " d=" f("d")
  return s (f("N") == 1 ? "" : f("causal") == 1 ? ", causal" : ", non-causal")
}
# a gnuplot string: no quotes inside; a "\\n" the caller adds becomes a line break
function q(s) { gsub(/["`]/, "", s); return "\"" s "\"" }
function sq(s) { gsub(/['`]/, "", s); return "'" s "'" }
# words into lines of at most w characters, joined by a gnuplot "\n"
function wrap(s, w, sep,   a, n, i, out, line) {
  if (sep == "") sep = "\\n"
  n = split(s, a, " "); out = ""; line = ""
  for (i = 1; i <= n; i++) {
    if (line != "" && length(line) + 1 + length(a[i]) > w) { out = out (out == "" ? "" : sep) line; line = a[i] }
    else line = line (line == "" ? "" : " ") a[i]
  }
  return out (out == "" || line == "" ? "" : sep) line
}
# 1024-based sizes for the tics of a log axis: "64 KiB", "1 GiB"
function bytes(v,   u, i) {
  split("B KiB MiB GiB TiB PiB", u, " "); i = 1
  while (v >= 1024 && i < 6) { v /= 1024; i++ }
  return sprintf("%g %s", v, u[i])
}
function labels(ids,   a, n, i, id, v) {
  n = split(ids, a, " ")
  for (i = 1; i <= n; i++) {
    id = a[i]; v = (id in RNAME) ? RNAME[id] : id
    if (id !~ /^[A-Za-z0-9_-]+$/) continue                 # not a gnuplot name: the legend shows the id
    gsub(/-/, "_", id); print "lab_" id " = " q(v) > SET
  }
}
EOF

# ---- 1. one panel of the progression: a bar per rung, speedup over rung 00 on one shape -----
read -r -d '' AWK_PROGRESSION <<'EOF'
{
  id = $1; k = kind(id)
  if (k == "ceiling") { if (id == CEIL && ok() && f(METRIC) + 0 > 0) CEILV = f(METRIC) + 0; next }
  if (k == "rung") RUNGS = add(RUNGS, id); else PEERS = add(PEERS, id)
  if (!want(FLT)) next
  ST[id] = f("status")                                  # a later row (a rerun) wins
  if (ok() && f(METRIC) + 0 > 0) V[id] = f(METRIC) + 0; else delete V[id]
  if (SHAPE == "" || id == "00") SHAPE = shape()
}
function track(y) { if (y < lo) lo = y; if (y > hi) hi = y }
END {
  print "set title " q(PANEL ": " (SHAPE != "" ? SHAPE : FLT)) > SET
  n = split(sortids(RUNGS), R, " ")
  if (n == 0) {
    print "HAVE = 0; set xrange [0:1]; set yrange [0:1]; unset xtics; unset ytics" > SET
    print "eval emptynote(" sq("no rung rows in " SRC) ")" > SET
    exit
  }
  base = ("00" in V) ? V["00"] : 0
  lo = 1e300; hi = 0
  for (i = 1; i <= n; i++) if (R[i] in V) track(base ? V[R[i]] / base : V[R[i]])
  np = split(sortids(PEERS), P, " ")
  nr = 0
  for (i = 1; i <= np; i++) if (P[i] in V) {
    nr++; RID[nr] = P[i]; RY[nr] = base ? V[P[i]] / base : V[P[i]]
    RT[nr] = P[i] " " (base ? fmtx(RY[nr]) " · " : "") fmt(V[P[i]]) " " UNIT
  }
  if (CEILV > 0) { nr++; RID[nr] = "ceiling"; RY[nr] = base ? CEILV / base : CEILV; RT[nr] = CEILNAME " " fmt(CEILV) " " UNIT }
  for (i = 1; i <= nr; i++) track(RY[i])
  if (hi == 0) { lo = 1; hi = 10 }
  ylo = dec_lo(lo / 3)
  yhi = 10 ^ (log10(hi) + 0.3 * (log10(hi) - log10(ylo)) + 0.15)
  printf "set xrange [0.4:%d.6]; set yrange [%.10g:%.10g]\n", n, ylo, yhi > SET
  printf "YLO = %.10g\n", ylo > SET
  if (base) {
    print "set ylabel " q("speedup over rung 00 (log scale)") "; set format y '%gx'" > SET
  } else {
    print "set ylabel " q(UNIT " (log; no ok row 00: no speedups)") "; set format y '%g'" > SET
  }
  tics = ""
  for (i = 1; i <= n; i++) {
    t = R[i]; if (R[i] in RNAME) { t = RNAME[R[i]]; sub(/^[^ ]* /, "", t); t = R[i] "\\n" wrap(t, 11) }
    tics = tics (i > 1 ? ", " : "") q(t) " " i
  }
  print "set xtics (" tics ")" > SET
  nb = 0
  for (i = 1; i <= n; i++) {
    if (R[i] in V) {
      nb++
      printf "%d %.10g %s %s %s\n", i, base ? V[R[i]] / base : V[R[i]], q(R[i]), \
        q(base ? fmtx(V[R[i]] / base) : fmt(V[R[i]])), q(base ? fmt(V[R[i]]) " " UNIT : UNIT) > DAT
    } else {
      s = short(ST[R[i]]); if (s == "unsupported") s = "n/a\\nunsupported"
      print "eval slotnote(" i ", " sq(s) ")" > SET
    }
  }
  printf "HAVE = %d; BARS = %s\n", nb, q(DAT) > SET
  if (nb == 0) print "unset ytics; unset ylabel; eval emptynote(" sq("no rung has an ok row for this shape") ")" > SET
  # reference lines, labelled in the right margin; labels pushed apart where lines are close
  for (i = 1; i <= nr; i++) for (j = i + 1; j <= nr; j++) if (RY[j] < RY[i]) {
    t = RY[i]; RY[i] = RY[j]; RY[j] = t; t = RID[i]; RID[i] = RID[j]; RID[j] = t; t = RT[i]; RT[i] = RT[j]; RT[j] = t }
  gap = 0.07 * (log10(yhi) - log10(ylo)); prev = -1e300
  for (i = 1; i <= nr; i++) {
    ly = log10(RY[i]); if (ly < prev + gap) ly = prev + gap; prev = ly
    printf "eval refline(%.10g, %s, %s, %.10g)\n", RY[i], sq(RID[i]), sq(RT[i]), 10 ^ ly > SET
  }
  miss = ""
  for (i = 1; i <= np; i++) if (!(P[i] in V)) miss = miss (miss == "" ? "" : "\\n") P[i] ": " short(ST[P[i]])
  if (miss != "") print "set label " q(miss) " at graph 1.01, graph 0.04 left tc rgb MUTED font F9" > SET
}
EOF

# ---- 2-4. lines against N or M: one file per (panel, rung) -----------------------------------
# PANELS: "filter|mode|title;..."; mode: tflops, pctcopy (gbps as % of ceiling-copy), ws, wsseq.
read -r -d '' AWK_SERIES <<'EOF'
BEGIN { NP = split(PANELS, PS, ";"); for (p = 1; p <= NP; p++) { split(PS[p], a, "|"); PF[p] = a[1]; PM[p] = a[2]; PT[p] = a[3] } }
{
  id = $1; k = kind(id)
  if (k == "ceiling") {
    if (id == "ceiling-copy" && ok() && f("gbps") + 0 > 0) COPY = f("gbps") + 0
    if (id == "ceiling-gemm" && ok() && f("tflops") + 0 > 0) GEMM = f("tflops") + 0
    next
  }
  for (p = 1; p <= NP; p++) {
    if (!want(PF[p])) continue
    m = PM[p]; x = f(XF) + 0; kk = p SUBSEP id SUBSEP x
    if (m ~ /^ws/ && k == "peer") { PEERSKIP = add(PEERSKIP, id); continue }
    X[p] = add(X[p], x); IDS[p] = add(IDS[p], id)
    y = 0
    if (m == "tflops" && ok()) y = f("tflops") + 0
    if (m == "pctcopy" && ok()) y = f("gbps") + 0
    if (m ~ /^ws/) {
      y = f("workspace_bytes") + 0; if (m == "wsseq" && f("B") > 0) y = y / f("B")
      if (y == 0 && ok()) ZX[p, id] = add(ZX[p, id], x)
      if (y > 0 && f("status") ~ /^unsupported: workspace/) BIG[kk] = 1
      io = (2 * f("B") * f("Hq") * f("N") + 2 * f("B") * f("Hkv") * f("M")) * f("d") * 2 + 4 * f("B") * f("Hq") * f("N")
      IO[p, x] = (m == "wsseq" && f("B") > 0) ? io / f("B") : io
    }
    if (y > 0) { Y[kk] = y; delete BAD[kk] } else { delete Y[kk]; if (!(m ~ /^ws/ && ok())) BAD[kk] = short(f("status")) }
  }
}
function note(p, reason, id) { if (!((p, reason) in NOTE)) NR_[p] = NR_[p] (NR_[p] == "" ? "" : SUBSEP) reason; NOTE[p, reason] = add(NOTE[p, reason], id) }
END {
  scale = 1; unit = UNIT; ws = PM[1] ~ /^ws/
  if (PM[1] == "pctcopy") { if (COPY > 0) scale = 100 / COPY; else unit = "GB/s" }
  for (kk in Y) Y[kk] = Y[kk] * scale
  ref = 0
  if (PM[1] == "tflops" && GEMM > 0) { ref = GEMM; reftext = "cuBLAS GEMM ceiling " fmt(GEMM) " TFLOP/s" }
  if (PM[1] == "pctcopy" && COPY > 0) { ref = 100; reftext = "copy ceiling = 100% (" fmt(COPY) " GB/s)" }
  # one y range for all panels, so they compare at a glance; the workspace panels differ in scale
  for (p = 1; p <= NP; p++) { LO[p] = 1e300; HI[p] = 0; if (ref > 0) { LO[p] = HI[p] = ref } }
  for (kk in Y) { split(kk, a, SUBSEP); p = ws ? a[1] : 1; if (Y[kk] < LO[p]) LO[p] = Y[kk]; if (Y[kk] > HI[p]) HI[p] = Y[kk] }
  for (kk in IO) { split(kk, a, SUBSEP); p = a[1]; if (IO[kk] < LO[p]) LO[p] = IO[kk]; if (IO[kk] > HI[p]) HI[p] = IO[kk] }
  legend = ""
  for (p = 1; p <= NP; p++) {
    q_ = ws ? p : 1; lo = LO[q_]; hi = HI[q_]
    if (hi == 0) { lo = 1; hi = 10 }
    S = DIR "/p" p ".gp"
    print "set title " q(PT[p]) > S
    nx = split(sortnum(X[p]), XS, " ")
    if (nx == 0) {
      print "HAVE = 0; SERIES = \"\"; set xrange [1:2]; set yrange [1:2]; unset xtics; unset ytics" > S
      print "eval emptynote('no rows for this panel')" > S
      close(S); continue
    }
    tics = ""; for (i = 1; i <= nx; i++) tics = tics (i > 1 ? ", " : "") q(XS[i]) " " XS[i]
    print "set xtics (" tics ")" > S
    if (ws) {
      ylo = 4 ^ floor_(log(lo) / log(4) + 1e-9); yhi = 4 ^ -floor_(-log(hi * 2) / log(4) + 1e-9)
      tics = ""; for (v = ylo; v <= yhi * 1.001; v *= 4) tics = tics (tics == "" ? "" : ", ") q(bytes(v)) " " sprintf("%.0f", v)
      print "set ytics (" tics ")" > S
    } else { ylo = dec_lo(lo); yhi = hi * 2.5 }
    printf "set xrange [%.10g:%.10g]; set yrange [%.10g:%.10g]\n", XS[1] / 1.35, XS[nx] * 1.35, ylo, yhi > S
    if (ref > 0) printf "eval inlineref(%.10g, 'ceiling', %s)\n", ref, sq(reftext) > S
    n = split(sortids(IDS[p]), R, " "); ser = ""; delete ENDS
    for (i = 1; i <= n; i++) {
      id = R[i]; D = DIR "/p" p "-" id ".dat"; pts = 0; bad = ""; badst = ""
      for (j = 1; j <= nx; j++) {
        kk = p SUBSEP id SUBSEP XS[j]
        if (kk in Y) {
          printf "%s %.10g\n", XS[j], Y[kk] > D; pts++; lastx = XS[j]; lasty = Y[kk]
          if (kk in BIG) printf "eval pointnote(%s, %.10g, 'too big to run')\n", XS[j], Y[kk] > S
        } else if (kk in BAD) {
          print "" > D                                  # a gap in the line
          bad = bad (bad == "" ? "" : " ") XS[j]; badst = add(badst, BAD[kk])
        }
      }
      close(D)
      if (pts) {
        ser = ser (ser == "" ? "" : " ") id; legend = add(legend, id)
        ek = sprintf("%s %.10g", lastx, lasty); ENDS[ek] = add(ENDS[ek], id)
      }
      if (bad != "") { gsub(/ /, "/", badst); note(p, badst (pts ? " at " XF "=" bad : ""), id) }
      if ((p, id) in ZX) { note(p, "no workspace" (pts ? " at " XF "=" sortnum(ZX[p, id]) : ""), id); ZERONOTE = 1 }
    }
    if (ws) {
      # name the lines where they end: several rungs often need exactly the same bytes
      for (ek in ENDS) { split(ek, a, " "); printf "eval endlabel(%s, %s, %s)\n", a[1], a[2], sq(ENDS[ek]) > S }
      D = DIR "/p" p "-ref-io.dat"
      for (j = 1; j <= nx; j++) if ((p, XS[j]) in IO) printf "%s %.10g\n", XS[j], IO[p, XS[j]] > D
      close(D); ser = ser " ref-io"
    }
    printf "HAVE = %d; SERIES = %s; PREFIX = %s\n", ser != "", q(ser), q(DIR "/p" p "-") > S
    if (ser == "") print "eval emptynote('no ok rows for this panel')" > S
    close(S)
  }
  # what was left out: said once when every panel left it out alike, else under the panel's name
  common = ""
  if (NP > 1) {
    nr = split(NR_[1], RZ, SUBSEP)
    for (i = 1; i <= nr; i++) {
      all = 1; for (p = 2; p <= NP; p++) if (NOTE[p, RZ[i]] != NOTE[1, RZ[i]]) all = 0
      if (all) { COMMON[RZ[i]] = 1; common = common "\\n  " wrap(NOTE[1, RZ[i]] ": " RZ[i], 27, "\\n    ") }
    }
  }
  notes = common
  for (p = 1; p <= NP; p++) {
    nr = split(NR_[p], RZ, SUBSEP); pn = ""
    for (i = 1; i <= nr; i++) if (!(RZ[i] in COMMON)) pn = pn "\\n  " wrap(NOTE[p, RZ[i]] ": " RZ[i], 27, "\\n    ")
    if (pn != "") notes = notes "\\n" PT[p] ":" pn
  }
  if (ZERONOTE) notes = notes "\\n(0 bytes has no place on a\\nlog axis)"
  if (ws && PEERSKIP != "") notes = notes "\\npeers: not drawn (they do\\nnot report a workspace)"
  L = DIR "/p-legend.gp"
  SET = L; labels(sortids(legend))
  legend = sortids(legend)
  for (kk in IO) { legend = legend " ref-io"; break }
  print "LEGEND = " q(legend) > L
  sub(/^\\n/, "", notes)
  print "NOTES = " q(notes == "" ? "" : "not plotted:\\n" notes) > L
  print "YUNIT = " q(unit) > L
}
EOF

# ---- 5. the seed article's shapes: grouped bars of ms -----------------------------------------
read -r -d '' AWK_ARTICLE <<'EOF'
{
  id = $1; if (kind(id) == "ceiling") next
  g = f("B") "," f("Hq") "," f("Hkv") "," f("N") "," f("M") "," f("d") "," f("causal")
  if (!(g in GI)) { NG++; GI[g] = NG; GT[NG] = shape() }
  IDS = add(IDS, id)
  ST[GI[g], id] = f("status")
  if (ok() && f("ms_median") + 0 > 0) V[GI[g], id] = f("ms_median") + 0; else delete V[GI[g], id]
}
END {
  n = split(sortids(IDS), R, " ")
  lo = 1e300; hi = 0
  for (kk in V) { if (V[kk] < lo) lo = V[kk]; if (V[kk] > hi) hi = V[kk] }
  if (n == 0 || NG == 0) { print "HAVE = 0; LEGEND = \"\"; set xrange [0:1]; set yrange [0:1]; unset xtics; unset ytics" > SET
                           exit }
  if (hi == 0) { lo = 1; hi = 10 }
  ylo = dec_lo(lo / 3); yhi = 10 ^ (log10(hi) + 0.15 * (log10(hi) - log10(ylo)) + 0.1)
  w = 0.84 / n
  printf "set xrange [0.5:%d.5]; set yrange [%.10g:%.10g]; YLO = %.10g; BARW = %.10g\n", NG, ylo, yhi, ylo, w * 0.92 > SET
  tics = ""
  for (g = 1; g <= NG; g++) { t = GT[g]; sub(/ N/, "\\nN", t); tics = tics (g > 1 ? ", " : "") q(t) " " g }
  print "set xtics (" tics ")" > SET
  legend = ""
  for (i = 1; i <= n; i++) for (g = 1; g <= NG; g++) {
    x = g - 0.42 + (i - 0.5) * w
    if ((g, R[i]) in V) { printf "%.10g %.10g %d %s %s\n", x, V[g, R[i]], i, q(R[i]), q(fmt(V[g, R[i]])) > DAT; legend = add(legend, R[i]) }
    else { s = short(ST[g, R[i]]); printf "eval barnote(%.10g, %s)\n", x, sq(R[i] " " (s == "unsupported" ? "n/a" : s)) > SET }
  }
  print "ALLIDS = " q(sortids(IDS)) > SET
  print "LEGEND = " q(sortids(legend)) > SET
  printf "HAVE = %d; BARS = %s\n", legend != "", q(DAT) > SET
  labels(sortids(IDS))
}
EOF

# ---- 6. splits-sim.csv: rung 06's planners on the cost model ---------------------------------
# A panel per (SM count, distribution): fa's and greedy's makespan over balanced's (the lower
# bound) against B, the mean over the seeds, with the seeds' min..max as error bars.
read -r -d '' AWK_SPLITS <<'EOF'
BEGIN { NPL = split("fa greedy", PL, " "); HI = 0; LO = 1e300 }
$1 == "dist" { for (i = 1; i <= NF; i++) S[$i] = i; next }
function g(k) { return (k in S) ? $(S[k]) : "" }
function desc(d) {
  return d == "equal" ? "one length per batch" : d == "uniform" ? "uniform in 1..32k tokens" : \
         d == "longtail" ? "log-normal, median 2k" : d == "bimodal" ? "7 in 8 short, 1 in 8 ~32k" : \
         d == "article" ? "all 4096 tokens (176-token blocks)" : ""
}
function gpu(m) { return m == 132 ? " (H100 SXM, H200)" : m == 114 ? " (H100 PCIe)" : m == 78 ? " (H20)" : "" }
{
  if (!("balanced" in S) || !("dist" in S) || !("sms" in S) || !("B" in S)) next
  d = g("dist"); m = g("sms") + 0; b = g("B") + 0; bal = g("balanced") + 0
  if (d == "" || d !~ /^[A-Za-z0-9_.-]+$/ || m <= 0 || b <= 0 || bal <= 0) next
  DISTS = add(DISTS, d); SMS = add(SMS, m); BS = add(BS, b)
  for (k = 1; k <= NPL; k++) {
    v = g(PL[k]) + 0; if (v <= 0) continue
    r = v / bal; kk = d SUBSEP m SUBSEP b SUBSEP k
    if (!(kk in N)) { MIN[kk] = r; MAX[kk] = r }
    N[kk]++; SUM[kk] += r
    if (r < MIN[kk]) MIN[kk] = r
    if (r > MAX[kk]) MAX[kk] = r
    if (N[kk] > NSEED) NSEED = N[kk]
    if (r > HI) HI = r
    if (r < LO) LO = r
  }
  if (d == "article" && m == 78 && b == 32 && !EXN && g("fa") + 0 > 0 && g("greedy") + 0 > 0) {
    EXN = 1; EXFA = g("fa") + 0; EXGR = g("greedy") + 0; EXBAL = bal; EXTOT = g("total_blocks")
  }
}
function val(kk, what) { return (kk in N) ? sprintf("%.6g", what == "mean" ? SUM[kk] / N[kk] : what == "min" ? MIN[kk] : MAX[kk]) : "NaN" }
END {
  G = DIR "/grid.gp"
  sel = ""
  if (index(" " SMS " ", " 132 ")) sel = add(sel, 132)
  if (index(" " SMS " ", " 78 ")) sel = add(sel, 78)
  if (sel == "") { n = split(sortnum(SMS), a, " "); for (i = n; i >= 1 && i > n - 2; i--) sel = add(sel, a[i]) }
  nr = split(sel, ROWS, " "); nc = split(DISTS, COLS, " "); if (nc > 6) nc = 6
  if (nr == 0 || nc == 0 || HI == 0) {
    print "NR = 1; NC = 1; NP = 1; YLO = 0.9; YHI = 2; XLO = 0.7; XHI = 181; XTICS = 'set xtics (1, 128)'; NSEED = 0; EXANY = 0" > G
    print "set label 1 'no usable rows (dist, B, sms, fa, greedy, balanced) in " SRC "' at screen 0.45, screen 0.5 center font F12 tc rgb MUTED" > G
    print "HAVE = 0; set title ''; YLAB = ''" > DIR "/p1.gp"
    exit
  }
  ylo = LO >= 1 ? 0.95 : int((LO - 0.05) * 20) / 20
  yhi = int(HI * 1.08 * 10 + 0.999) / 10; if (yhi < 1.3) yhi = 1.3
  nb = split(sortnum(BS), BB, " ")
  # labels at the powers of two, a minor tic at the other sizes
  tics = ""
  for (i = 1; i <= nb; i++) {
    v = BB[i]; while (v > 1 && v % 2 == 0) v /= 2
    tics = tics (i > 1 ? ", " : "") (v == 1 ? q(BB[i]) " " BB[i] : q("") " " BB[i] " 1")
  }
  printf "NR = %d; NC = %d; NP = %d; YLO = %.4g; YHI = %.4g; XLO = %.6g; XHI = %.6g\n", nr, nc, nr * nc, ylo, yhi, BB[1] / 1.5, BB[nb] * 1.5 > G
  print "XTICS = " sq("set xtics (" tics ")") > G
  print "NSEED = " NSEED + 0 "; EXANY = " (EXN ? 1 : 0) > G
  p = 0
  for (r = 1; r <= nr; r++) for (c = 1; c <= nc; c++) {
    p++; d = COLS[c]; m = ROWS[r]; P = DIR "/p" p ".gp"; D = DIR "/p" p ".dat"
    print "set title " q(d ", " m " SMs" (r == 1 && desc(d) != "" ? "\\n" desc(d) : "")) > P
    print "YLAB = " q(m " SMs" gpu(m) "\\nmakespan over balanced's") > P
    pts = 0
    for (i = 1; i <= nb; i++) {
      k1 = d SUBSEP m SUBSEP BB[i] SUBSEP 1; k2 = d SUBSEP m SUBSEP BB[i] SUBSEP 2
      if (!(k1 in N) && !(k2 in N)) continue
      pts++
      print BB[i], val(k1, "mean"), val(k1, "min"), val(k1, "max"), val(k2, "mean"), val(k2, "min"), val(k2, "max") > D
    }
    close(D)
    printf "HAVE = %d; DAT = %s; EX = 0\n", (pts > 0), q(D) > P
    if (!pts) print "eval emptynote('no rows')" > P
    if (d == "article" && m == 78 && EXN) {
      E = DIR "/example.dat"
      printf "%.6g %.6g %s\n%.6g %.6g %s\n", 32 / 1.07, EXFA / EXBAL, q("fa " EXFA), 32 * 1.07, EXGR / EXBAL, q("greedy " EXGR) > E
      close(E)
      printf "EX = 1; EXDAT = %s\n", q(E) > P
      print "set label 20 " q("the article's worked example:\\nB = 32, " (EXTOT != "" ? EXTOT " blocks, " : "") "78 SMs;\\nmakespans fa " EXFA ", greedy " EXGR ",\\nbalanced " EXBAL " blocks") \
            " at graph 0.04, graph 0.96 left front font F9 tc rgb INK" > P
    }
    close(P)
  }
}
EOF

# ---- 7. <gpu>-varlen.csv: rung 06 once per planner over the same batches -------------------------
# A batch is one line of sweeps/varlen.txt. Rows come one planner's run after another, each in the
# sweep's order; a row that failed before planning (unsupported, a launch error) carries no extra
# fields. So: when the rows split evenly into one run per planner, with the same B and M at the same
# place in every run, a row's place in its run names its batch (and its run's planner names the
# planner); otherwise the batches are told apart by (B, M, seqlens_sum) and untagged rows are left
# out. The distribution's name is taken from the sweep file when its lines match the batches.
# p1: ms and the simulated makespan over the reference planner's (balanced); p2: GB/s.
read -r -d '' AWK_VARLEN <<'EOF'
function kv(s, name,   a, n, i) { n = split(s, a, ";"); for (i = 1; i <= n; i++) if (index(a[i], name "=") == 1) return substr(a[i], length(name) + 2); return "" }
{
  id = $1
  if (kind(id) == "ceiling") { if (id == "ceiling-copy" && ok() && f("gbps") + 0 > 0) COPY = f("gbps") + 0; next }
  NRW++; RB[NRW] = f("B") + 0; RM[NRW] = f("M") + 0; RST[NRW] = f("status"); x = f("extra")
  RPL[NRW] = kv(x, "planner"); RSUM[NRW] = kv(x, "seqlens_sum"); RMAX[NRW] = kv(x, "seqlens_max")
  RMK[NRW] = kv(x, "makespan") + 0; RMS[NRW] = f("ms_median") + 0; RGB[NRW] = f("gbps") + 0
  ROK[NRW] = ok() && RMS[NRW] > 0
  if (RPL[NRW] != "") { PLS = add(PLS, RPL[NRW]); if (SLOTS == "") SLOTS = kv(x, "slots") }
  if (RPL[NRW] !~ /^[A-Za-z0-9_-]*$/) RPL[NRW] = ""
}
function kfmt(v) { v += 0; return v >= 1e6 ? sprintf("%.3gM", v / 1e6) : v >= 1e3 ? sprintf("%.3gk", v / 1e3) : v "" }
function mfmt(v) { v += 0; return v >= 1024 && v % 1024 == 0 ? (v / 1024) "k" : v "" }
function usfmt(ms) { return ms >= 1 ? fmt(ms) " ms" : fmt(ms * 1000) " µs" }
function lo_hi(v) { if (v < LO) LO = v; if (v > HI) HI = v }
END {
  # the planners: fa, greedy, balanced first, then any other in order of appearance
  order = ""
  split("fa greedy balanced", K3, " ")
  for (i = 1; i <= 3; i++) if (index(" " PLS " ", " " K3[i] " ")) order = add(order, K3[i])
  np = split(PLS, T, " "); for (i = 1; i <= np; i++) order = add(order, T[i])
  np = split(order, PL, " ")
  REF = index(" " order " ", " balanced ") ? "balanced" : PL[np]
  # which batch and which planner each row is
  pos = np > 0 && NRW > 0 && NRW % np == 0
  if (pos) {
    L = NRW / np
    for (r = 0; r < np && pos; r++) {
      pl = ""
      for (j = 1; j <= L; j++) { i = r * L + j; if (RPL[i] != "") { if (pl == "") pl = RPL[i]; else if (RPL[i] != pl) pos = 0 } }
      if (pl == "" || (pl in RUNOF)) pos = 0
      RUNOF[pl] = r; RUNPL[r] = pl
    }
    for (j = 1; j <= L && pos; j++) {
      s = ""
      for (r = 0; r < np; r++) {
        i = r * L + j
        if (RB[i] != RB[j] || RM[i] != RM[j]) pos = 0
        if (RSUM[i] != "") { if (s == "") s = RSUM[i]; else if (RSUM[i] != s) pos = 0 }
      }
    }
  }
  NG = 0; dropped = 0
  for (i = 1; i <= NRW; i++) {
    if (pos) { g = (i - 1) % L + 1; p = RUNPL[int((i - 1) / L)]; if (g > NG) NG = g }
    else {
      if (RPL[i] == "") { dropped++; continue }
      k = RB[i] SUBSEP RM[i] SUBSEP RSUM[i]
      if (!(k in GI)) { NG++; GI[k] = NG }
      g = GI[k]; p = RPL[i]
    }
    if (!(g in GB)) { GB[g] = RB[i]; GM[g] = RM[i] }
    if (RSUM[i] != "" && GSUM[g] == "") { GSUM[g] = RSUM[i]; GMAX[g] = RMAX[i] }
    HASROW[g, p] = 1; ST[g, p] = RST[i]                  # a later row (a rerun) wins
    if (ROK[i]) { MS[g, p] = RMS[i]; GBS[g, p] = RGB[i]; MK[g, p] = RMK[i] }
    else { delete MS[g, p]; delete GBS[g, p]; delete MK[g, p] }
  }
  # the distributions' names, from the sweep file when it matches the batches
  ns = 0
  if (SWEEP != "") while ((getline line < SWEEP) > 0) {
    sub(/\r$/, "", line); sub(/^[ \t]+/, "", line)
    if (line == "" || line ~ /^#/) continue
    m = split(line, a, /[ \t]+/); if (m < 7) continue
    ns++; SB[ns] = a[1] + 0; SM[ns] = a[5] + 0; SD[ns] = "M each"
    for (j = 8; j <= m; j++) if (a[j] ~ /^dist=/) SD[ns] = substr(a[j], 6)
  }
  named = NG > 0 && ns > 0
  for (g = 1; g <= NG && named; g++) {
    if (pos) { s = g; if (ns != NG || SB[s] != GB[g] || SM[s] != GM[g]) { named = 0; break } }
    else {
      o = ++OCC[GB[g], GM[g]]; s = 0
      for (j = 1; j <= ns; j++) if (SB[j] == GB[g] && SM[j] == GM[g] && ++c2[g] == o) { s = j; break }
      if (!s) { named = 0; break }
    }
    eq = GSUM[g] == "" ? -1 : GSUM[g] + 0 == GB[g] * GM[g]
    if ((SD[s] == "equal" || SD[s] == "M each") && eq == 0) named = 0
    if (SD[s] != "equal" && SD[s] != "M each" && eq == 1) named = 0
    GD[g] = SD[s]; SIDX[g] = s
  }
  if (!pos && named) { for (j = 1; j <= ns; j++) USED[SB[j], SM[j]]++; for (k in USED) if (USED[k] != OCC[k]) named = 0 }
  # each batch's place along x: the sweep's order where the batches are named, else first seen
  for (g = 1; g <= NG; g++) { XP[g] = 1; for (j = 1; j <= NG; j++) if (named ? SIDX[j] < SIDX[g] : j < g) XP[g]++ }
  for (g = 1; g <= NG; g++) {
    if (!named) GD[g] = GSUM[g] == "" ? "" : (GSUM[g] + 0 == GB[g] * GMAX[g] ? "equal" : "mixed")
    GT[g] = "B=" GB[g] (GD[g] != "" ? " " GD[g] : "") "\\nM=" mfmt(GM[g]) (GSUM[g] != "" ? "\\nsum=" kfmt(GSUM[g]) : "")
  }
  V = DIR "/vl.gp"
  print "PLANNERS = " q(order) "; REF = " q(REF) > V
  other = ""; for (ai = 1; ai <= np; ai++) if (PL[ai] != REF) other = add(other, PL[ai])
  print "OTHERS = " q(other) > V
  notes = NG == 0 || np == 0 ? "" : "a batch: B requests with KV\\nlengths up to M; sum: the\\nKV tokens of all requests\\n(in brackets: " REF "'s\\nmedian time per call)"
  if (notes != "") notes = notes "\\n\\n" (named ? "names: the dist= of each\\nbatch's line in\\n" SWEEPNAME : "equal or mixed lengths, from\\nseqlens_sum and _max (the\\nbatches do not match\\n" SWEEPNAME ")")
  if (dropped) notes = notes "\\n\\n" dropped " row(s) without a planner\\n(failed before planning):\\nnot placed"
  print "NOTES = " q(notes) > V
  printf "COPY = %.10g\n", COPY + 0 > V
  if (NG == 0 || np == 0) {
    for (pp = 1; pp <= 2; pp++) {
      P = DIR "/p" pp ".gp"
      print "HAVE = 0; set xrange [0:1]; set yrange [0:1]; unset xtics; unset ytics; set title ''" > P
      print "eval emptynote('no rung rows in " SRC "')" > P
    }
    exit
  }
  # --- p1: time and simulated makespan over the reference planner's ---
  P = DIR "/p1.gp"; D = DIR "/p1.dat"
  no = split(other, OP, " ")
  print "set title " q("time (solid) and cost-model makespan (hatched) over " REF "'s, per batch" \
        (SLOTS != "" ? " (planned for " SLOTS " CTA slots)" : "")) > P
  tics = ""
  for (g = 1; g <= NG; g++) {
    t = GT[g] ((g, REF) in MS ? "\\n(" usfmt(MS[g, REF]) ")" : "")
    tics = tics (g > 1 ? ", " : "") q(t) " " XP[g]
  }
  print "set xtics (" tics ")" > P
  LO = 1; HI = 1; nb = 0
  w = no ? 0.84 / (2 * no) : 0.84
  for (g = 1; g <= NG; g++) {
    if (!((g, REF) in MS)) {
      s = HASROW[g, REF] ? short(ST[g, REF]) : "no row"
      printf "set label %s at first %d, graph 0.5 center front font F8 tc rgb MUTED\n", q(REF "\\n" s ":\\nno ratios"), XP[g] > P
      continue
    }
    for (ai = 1; ai <= no; ai++) for (t = 0; t <= 1; t++) {
      p = OP[ai]; x = XP[g] - 0.42 + ((ai - 1) * 2 + t + 0.5) * w
      if ((g, p) in MS) {
        v = t == 0 ? MS[g, p] / MS[g, REF] : (MK[g, p] > 0 && MK[g, REF] > 0 ? MK[g, p] / MK[g, REF] : "")
        if (v == "") { if (t == 1) printf "eval barnote(%.6g, 'no makespan')\n", x > P; continue }
        printf "%.6g %.6g %.6g %.6g %s %s %s\n", x, v, (v < 1 ? v : 1), (v < 1 ? 1 : v), p, (t ? "sim" : "meas"), q(sprintf("%.2f", v)) > D
        lo_hi(v); nb++
      } else if (t == 0) {
        s = HASROW[g, p] ? short(ST[g, p]) : "no row"; if (s == "unsupported") s = "n/a"
        printf "eval barnote(%.6g, %s)\n", x + w / 2, sq(p " " s) > P
      }
    }
  }
  close(D)
  span = HI - LO; if (span < 0.1) span = 0.1
  printf "set yrange [%.6g:%.6g]; BARW = %.6g; HAVE = %d; BARS = %s\n", LO - (LO < 1 ? 0.25 : 0.12) * span, HI + 0.28 * span, w * 0.9, (nb > 0), q(D) > P
  printf "set xrange [0.5:%d.5]\n", NG > P
  if (!no) print "unset ytics; eval emptynote('one planner only: nothing to compare')" > P
  else if (!nb) print "unset ytics; eval emptynote('no batch has ok rows for " REF " and another planner')" > P
  close(P)
  # --- p2: achieved bandwidth ---
  P = DIR "/p2.gp"; D = DIR "/p2.dat"
  print "set title " q("achieved bandwidth: Q, K, V (the valid KV rows), O and LSE moved once, over the median time") > P
  tics = ""; for (g = 1; g <= NG; g++) tics = tics (g > 1 ? ", " : "") q(GT[g]) " " XP[g]
  print "set xtics (" tics ")" > P
  w = 0.84 / np; HI = COPY + 0; nb = 0
  for (g = 1; g <= NG; g++) for (ai = 1; ai <= np; ai++) {
    p = PL[ai]; x = XP[g] - 0.42 + (ai - 0.5) * w
    if ((g, p) in GBS && GBS[g, p] > 0) {
      printf "%.6g %.6g %s %s\n", x, GBS[g, p], p, q(fmt(GBS[g, p])) > D; nb++
      if (GBS[g, p] > HI) HI = GBS[g, p]
    } else {
      s = HASROW[g, p] ? short(ST[g, p]) : "no row"; if (s == "unsupported") s = "n/a"; if (s == "ok") s = "no GB/s"
      printf "eval barnote(%.6g, %s)\n", x, sq(p " " s) > P
    }
  }
  close(D)
  if (HI <= 0) HI = 1
  printf "set xrange [0.5:%d.5]; set yrange [0:%.6g]; BARW = %.6g; HAVE = %d; BARS = %s\n", NG, HI * 1.18, w * 0.9, (nb > 0), q(D) > P
  if (COPY > 0) {
    printf "set y2range [0:%.6g]\n", HI * 1.18 / COPY * 100 > P
    printf "eval inlineref(%.6g, 'ceiling', %s)\n", COPY, sq("copy ceiling " fmt(COPY) " GB/s") > P
  }
  if (!nb) print "eval emptynote('no ok rows')" > P
  close(P)
}
EOF

# ---- helpers ----------------------------------------------------------------------------------
meta() {  # meta FILE KEY: the first "# KEY: value" line's value
  sed -n "s/^#[[:space:]]*$2:[[:space:]]*//p" "$1" | head -n 1 | tr -d '"\\\r`'
}
device_of() {  # the device name: "# device:", else the first row's device column, else the gpu id
  local f d
  for f in "$@"; do [ -f "$f" ] || continue
    d=$(meta "$f" device); [ -n "$d" ] && { printf '%s' "$d"; return; }
  done
  for f in "$@"; do [ -f "$f" ] || continue
    d=$(awk -F, '/^#/ || $1 == "rung" { next } NF >= 20 && $20 != "" { print $20; exit }' "$f" | tr -d '"\\\r')
    [ -n "$d" ] && { printf '%s' "$d"; return; }
  done
  printf '%s' "$gpu"
}
provenance() {  # "measured at commit C on D[; rerun: ...]" from a CSV's metadata lines
  local f=$1 c d r
  c=$(meta "$f" commit); d=$(meta "$f" date); d=${d%%T*}
  r=$(grep -c '^#[[:space:]]*rerun:' "$f")
  printf 'measured at commit %s%s' "${c:-unknown}" "${d:+ on $d}"
  if [ "$r" -gt 0 ]; then
    printf '; rerun: %s' "$(sed -n 's/^#[[:space:]]*rerun:[[:space:]]*//p' "$f" | tail -n 1 |
      tr -d '"\\\r' | sed 's/ on [0-9][0-9T:.-]*Z*$//')"
    [ "$r" -gt 1 ] && printf ' (and %d earlier)' "$((r - 1))"
  fi
}
setmeta() {  # setmeta DIR TITLE CSV...: the title, and a subtitle naming the CSVs and their commits
  local dir=$1 title=$2 sub="" f same=1 first="" p
  shift 2
  for f in "$@"; do p=$(provenance "$f"); [ -z "$first" ] && first=$p; [ "$p" != "$first" ] && same=0; done
  for f in "$@"; do
    if [ $same = 1 ] && [ -n "$sub" ] && [ "$(dirname "$f")" = "$(dirname "$1")" ]; then sub="$sub and $(basename "$f")"
    elif [ $same = 1 ]; then sub="$sub${sub:+ and }${f#"$PWD"/}"
    else sub="$sub${sub:+\\nand }${f#"$PWD"/} ($(provenance "$f"))"; fi
  done
  if [ $same = 1 ]; then sub="numbers from the committed $sub, $first"; else sub="numbers from the committed $sub"; fi
  # shellcheck disable=SC1003  # (tr deletes quotes and backslashes)
  { printf 'TITLE = "%s"\n' "$(printf '%s' "$title" | tr -d '"\\`')"
    printf 'SUBTITLE = "%s"\n' "$(printf '%s' "$sub" | tr -d '"`')"
  } > "$dir/meta.gp"
}
tokens() {  # B·N of a sweep when every rung row has the same, else 0
  awk -F, '!/^#/ && $1 ~ /^[0-9]/ && $2 != "" { t[$2 * $5] = 1 }
             END { n = 0; for (k in t) { n++; v = k } print (n == 1 ? v : 0) }' "$1"
}
decode_shape() {  # " (Hq = 8, Hkv = 1, d = 128, one query token)" from the first rung row
  awk -F, '!/^#/ && $1 ~ /^[0-9]/ && $3 != "" {
    printf " (Hq = %s, Hkv = %s, d = %s, %s)", $3, $4, $7, $5 == 1 ? "one query token" : "N = " $5; exit }' "$1"
}
status=0
draw() {  # draw SCRIPT PNG DIR
  local err
  err=$(gnuplot -e "TERMINAL='$term'; OUTFILE='$2'; DIR='$3'" "plots/$1" 2>&1 >/dev/null)
  local rc=$?
  if [ $rc -ne 0 ] || [ ! -s "$2" ]; then
    echo "plots: gnuplot plots/$1 failed for ${2#"$PWD"/}:"; printf '%s\n' "$err" | sed 's/^/  /' | head -n 20
    status=1
  else
    [ -n "$err" ] && printf '%s\n' "$err" | sed "s|^|  (gnuplot plots/$1) |" | head -n 10
    echo "wrote ${2#"$PWD"/}"
  fi
}

# rung names for the legends and tics, from the folders: "05 fa2 outer q" -> "05 FA2 outer Q"
names=$WORK/names.txt
for d in [0-9][0-9]_*/; do
  d=${d%/}; printf '%s %s\n' "${d%%_*}" "$(printf ' %s ' "${d#*_}" | tr '_' ' ' |
    sed 's/ fa\([0-9]\) / FA\1 /; s/ wmma / WMMA /; s/ kv / KV /; s/ br / Br /; s/ q $/ Q /; s/^ //; s/ $//')"
done > "$names"
gp() { awk -v NAMES="$names" "$@"; }   # awk with the rung names at hand

for gpu in ${gpus[@]+"${gpus[@]}"}; do
  pre=$RES/$gpu-prefill.csv dec=$RES/$gpu-decode.csv art=$RES/$gpu-article.csv var=$RES/$gpu-varlen.csv
  W=$WORK/$gpu
  rm -rf "$W"; mkdir -p "$W"
  dev=$(device_of "$pre" "$dec" "$art" "$var")

  # 1. progression: prefill d=128 N=4096 non-causal; decode B=8 M=16384
  if [ -f "$pre" ] || [ -f "$dec" ]; then
    D=$W/progression; mkdir -p "$D"
    srcs=(); for f in "$pre" "$dec"; do [ -f "$f" ] && srcs+=("$f"); done
    setmeta "$D" "$dev: each rung's speedup over rung 00 (the cuBLAS baseline)" "${srcs[@]}"
    p=0
    for spec in "prefill|$pre|d=128 N=4096 causal=0|tflops|TFLOP/s|ceiling-gemm|cuBLAS GEMM ceiling" \
                "decode|$dec|B=8 M=16384|gbps|GB/s|ceiling-copy|copy ceiling"; do
      p=$((p + 1))
      IFS='|' read -r panel csv flt metric unit ceil ceilname <<< "$spec"
      if [ -f "$csv" ]; then
        gp -v FLT="$flt" -v METRIC="$metric" -v UNIT="$unit" -v CEIL="$ceil" -v CEILNAME="$ceilname" \
           -v PANEL="$panel" -v SRC="${csv#"$PWD"/}" -v SET="$D/p$p.gp" -v DAT="$D/p$p.dat" \
           "$AWK_LIB"$'\n'"$AWK_PROGRESSION" "$csv"
      else
        { echo "set title '$panel: no ${csv#"$PWD"/} yet'"
          echo "HAVE = 0; set xrange [0:1]; set yrange [0:1]; unset xtics; unset ytics"
          echo "eval emptynote('no ${csv#"$PWD"/}: run make ladder on a GPU')"; } > "$D/p$p.gp"
      fi
    done
    draw progression.gp "$OUT/$gpu-progression.png" "$D"
  fi

  if [ -f "$pre" ]; then
    # 2. TFLOP/s against N: a row of panels per head dim (64 and 128 when present), causal or not
    ds=$(awk -F, '!/^#/ && $1 != "rung" && $1 !~ /^ceiling-/ && $7 != "" { print $7 }' "$pre" | sort -nu | tr '\n' ' ')
    sel=""; for d in 64 128; do case " $ds " in *" $d "*) sel="$sel $d" ;; esac; done
    # shellcheck disable=SC2086  # (a list of numbers, split on purpose)
    [ -z "$sel" ] && sel=$(printf '%s\n' $ds | head -n 2 | tr '\n' ' ')
    [ -z "${sel// /}" ] && sel=128
    panels=""; nr=0
    for d in $sel; do
      nr=$((nr + 1))
      panels="$panels${panels:+;}d=$d causal=0|tflops|d = $d, non-causal;d=$d causal=1|tflops|d = $d, causal"
    done
    D=$W/tflops; mkdir -p "$D"
    setmeta "$D" "$dev: prefill throughput against sequence length" "$pre"
    printf 'NP = %d; NR = %d; NC = 2; TOKENS = %d\n' $((nr * 2)) "$nr" "$(tokens "$pre")" >> "$D/meta.gp"
    gp -v PANELS="$panels" -v XF=N -v UNIT="TFLOP/s" -v DIR="$D" -v SET="$D/p-legend.gp" \
       "$AWK_LIB"$'\n'"$AWK_SERIES" "$pre"
    draw tflops.gp "$OUT/$gpu-prefill-tflops.png" "$D"

    # 3. workspace against N, d=128 non-causal: the whole batch, and per sequence
    D=$W/workspace; mkdir -p "$D"
    setmeta "$D" "$dev: workspace (device memory beyond inputs and outputs), prefill d = 128, non-causal" \
      "$pre"
    printf 'NP = 2; NR = 1; NC = 2\n' >> "$D/meta.gp"
    tok=$(tokens "$pre"); [ "$tok" -gt 0 ] && tok=" (B·N = $tok tokens)" || tok=""
    gp -v PANELS="d=128 causal=0|ws|the whole batch$tok;d=128 causal=0|wsseq|per sequence (÷ B): S, P ∝ N², l, m ∝ N" \
       -v XF=N -v UNIT=bytes -v DIR="$D" -v SET="$D/p-legend.gp" "$AWK_LIB"$'\n'"$AWK_SERIES" "$pre"
    draw workspace.gp "$OUT/$gpu-workspace.png" "$D"
  fi

  if [ -f "$dec" ]; then
    # 4. decode bandwidth against M, one panel per selected batch size
    bs=$(awk -F, '!/^#/ && $1 != "rung" && $1 !~ /^ceiling-/ && $2 != "" { print $2 }' "$dec" | sort -nu | tr '\n' ' ')
    sel=""; for b in 1 8 32 128; do case " $bs " in *" $b "*) sel="$sel $b" ;; esac; done
    # shellcheck disable=SC2086
    [ -z "$sel" ] && sel=$(printf '%s\n' $bs | head -n 4 | tr '\n' ' ')
    [ -z "${sel// /}" ] && sel=8
    panels=""; np=0
    for b in $sel; do np=$((np + 1)); panels="$panels${panels:+;}B=$b|pctcopy|B = $b"; done
    D=$W/decode; mkdir -p "$D"
    setmeta "$D" "$dev: decode bandwidth against KV length$(decode_shape "$dec")" "$dec"
    if [ $np -le 2 ]; then printf 'NP = %d; NR = 1; NC = %d\n' $np $np; else printf 'NP = %d; NR = 2; NC = 2\n' $np; fi >> "$D/meta.gp"
    gp -v PANELS="$panels" -v XF=M -v UNIT="% of copy ceiling" -v DIR="$D" -v SET="$D/p-legend.gp" \
       "$AWK_LIB"$'\n'"$AWK_SERIES" "$dec"
    draw decode.gp "$OUT/$gpu-decode-bandwidth.png" "$D"
  fi

  if [ -f "$art" ]; then
    # 5. the seed article's shapes
    D=$W/article; mkdir -p "$D"
    setmeta "$D" "$dev: the seed article's shapes, time per rung (lower is better)" \
      "$art"
    gp -v SET="$D/bars.gp" -v DAT="$D/bars.dat" "$AWK_LIB"$'\n'"$AWK_ARTICLE" "$art"
    draw article.gp "$OUT/$gpu-article.png" "$D"
  fi

  if [ -f "$var" ]; then
    # 6. rung 06 once per split planner over the varlen batches: time against the cost model
    D=$W/varlen; mkdir -p "$D"
    setmeta "$D" "$dev: rung 06's split planners on varlen decode batches$(decode_shape "$var")" "$var"
    gp -v DIR="$D" -v SRC="${var#"$PWD"/}" -v SWEEP=sweeps/varlen.txt -v SWEEPNAME=sweeps/varlen.txt \
       "$AWK_LIB"$'\n'"$AWK_VARLEN" "$var"
    draw varlen.gp "$OUT/$gpu-varlen.png" "$D"
  fi
done

# 6. rung 06's split planners on the cost model alone (tools/splits_sim.c: no GPU, no timing)
if [ -n "$sim" ]; then
  D=$WORK/splits-sim
  rm -rf "$D"; mkdir -p "$D"
  { echo 'TITLE = "rung 06'"'"'s split planners on the cost model (simulated, not measured): makespan over balanced'"'"'s"'
    printf 'SUBTITLE = "from %s: tools/splits_sim.c plans random batches with 06_split_kv/planner.c; no GPU ran"\n' \
      "$(printf '%s' "${sim#"$PWD"/}" | tr -d '"\\`')"
  } > "$D/meta.gp"
  gp -v DIR="$D" -v SRC="${sim#"$PWD"/}" "$AWK_LIB"$'\n'"$AWK_SPLITS" "$sim"
  draw splits.gp "$OUT/splits-sim.png" "$D"
fi
exit $status
