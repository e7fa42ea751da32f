# Loaded by every plot script. tools/plots.sh runs gnuplot from the repository root with TERMINAL,
# OUTFILE, DEVICE, SUBTITLE (the CSVs and commits), IDS (rung ids in ladder order, 05a 05b 05c 06,
# then peers), name_NN ("split KV") and each CSV its "# csv:" line names: its path, "" if missing.
set encoding utf8
set datafile separator ","
set datafile missing NaN           # rows a filter turns into NaN are skipped, lines drawn across
FONT = TERMINAL eq "pngcairo" ? "Sans" : "DejaVuSans"
F8 = FONT . ",8"; F9 = FONT . ",9"; F10 = FONT . ",10"; F11 = FONT . ",11"; F12 = FONT . ",12"; F13 = FONT . ",13"
INK = "#333333"; MUTED = "#777777"; GRIDC = "#dddddd"
set border lw 1 lc rgb INK; set grid back lc rgb GRIDC lw 1; set tics textcolor rgb INK
set style fill solid 1.0 border lc rgb INK       # opaque: the png terminal has no transparency
set style textbox opaque noborder margins 1, 1
# the page (noenhanced: names and statuses print as they are), TITLE, and under it SUBTITLE;
# top(y): where the panels start, lower when the subtitle has two lines
start(w, h) = sprintf('set terminal %s size %d,%d font "%s" noenhanced; set output "%s"; HEIGHT = %d; ' . \
  'set multiplot title TITLE font F13; set label 999 SUBTITLE at screen 0.5, screen %g center font F10 tc rgb INK', \
  TERMINAL, w, h, F11, OUTFILE, h, 1 - 38.0 / h)
top(y) = y - (strstrt(SUBTITLE, "\n") > 0 ? 16.0 / HEIGHT : 0)
# --- numbers, lists of words, the current row ----------------------------------------------------
min(a, b) = a < b ? a : b; max(a, b) = a > b ? a : b
fmt(v) = v >= 100 ? sprintf("%.0f", v) : v >= 10 ? sprintf("%.1f", v) : v >= 1 ? sprintf("%.2f", v) : sprintf("%.2g", v)
declo(v) = 10 ** floor(log10(v) + 1e-9)                   # the decade at or below v
has(L, w) = w ne "" && strstrt(" " . L . " ", " " . w . " ") > 0      # w is a word of the list L
add(L, w) = has(L, w) ? L : L . " " . w
pos(L, w) = has(L, w) ? words((" " . L . " ")[1:strstrt(" " . L . " ", " " . w . " ")]) + 1 : NaN
# "a=1;b=2;" -> kv(s, "b") = "2"; and in a map " k=v k=v", get(M, k) = v
kv(s, k) = strstrt(";" . s, ";" . k . "=") ? (_t = (";" . s)[strstrt(";" . s, ";" . k . "=") + strlen(k) + 2:], \
           _t[1:strstrt(_t . ";", ";") - 1]) : ""
get(M, k) = strstrt(M, " " . k . "=") ? word(M[strstrt(M, " " . k . "=") + strlen(k) + 2:], 1) : ""
# words into lines of at most w characters, joined by sep
wrap(s, w, sep) = _wr("", s, w, sep)
_wr(l, r, w, sep) = words(r) == 0 ? l : l eq "" ? _wr(word(r, 1), _tl(r), w, sep) : \
  strlen(l) + 1 + strlen(word(r, 1)) > w ? l . sep . _wr("", r, w, sep) : _wr(l . " " . word(r, 1), _tl(r), w, sep)
_tl(r) = r[strstrt(r, word(r, 1)) + strlen(word(r, 1)):]
ok(_) = strcol("status") eq "ok"                         # (_: a gnuplot function takes an argument)
status(_) = strstrt(strcol("status"), ":") ? strcol("status")[1:strstrt(strcol("status"), ":") - 1] : strcol("status")
shape(_) = sprintf("B=%d %s %s d=%d%s", column("B"), (column("Hq") == column("Hkv") ? sprintf("H=%d", column("Hq")) : \
  sprintf("Hq=%d Hkv=%d", column("Hq"), column("Hkv"))), (column("N") == column("M") ? sprintf("N=M=%d", column("N")) : \
  sprintf("N=%d M=%d", column("N"), column("M"))), column("d"), (column("N") == 1 ? "" : column("causal") != 0 ? ", causal" : ", non-causal"))
# one pass over a CSV: its ceilings (COPY GB/s, GEMM TFLOP/s), DSHAPE and TOKENS of its first rung row
meta(f) = sprintf('COPY = 0; GEMM = 0; TOKENS = 0; DSHAPE = ""; stats "%s" using (strcol(1) eq "ceiling-copy" ? COPY = column("gbps") : ' . \
  'strcol(1) eq "ceiling-gemm" ? GEMM = column("tflops") : !is_peer(strcol(1)) && DSHAPE eq "" ? (TOKENS = column("B") * ' . \
  'column("N"), DSHAPE = sprintf("Hq = %%d, Hkv = %%d, d = %%d, %%s", column("Hq"), column("Hkv"), column("d"), ' . \
  'column("N") == 1 ? "one query token" : "N = " . strcol("N"))) : 0, 0) nooutput', f)
# --- ids: a rung is two digits and its variant's letters (05a..05c), anything else a peer ---------
is_peer(id) = strstrt("0123456789", id[1:1]) == 0
later(id) = sum [i = pos(IDS, id) + 1:words(IDS)] (word(IDS, i)[1:2] eq id[1:2] ? 1 : 0)   # variants after id
nvar(id) = sum [i = 1:words(IDS)] (word(IDS, i)[1:2] eq id[1:2] ? 1 : 0)
rungname(id) = !is_peer(id) && later(id) == 0 && exists("name_" . id[1:2]) ? value("name_" . id[1:2]) : ""
label(id) = rungname(id) eq "" ? id : id . " " . rungname(id)        # a rung's last variant is the rung
# --- colours: one per rung, its earlier variants lighter; peers, ceilings, planners by name -------
PAL = " 00=0x7f7f7f 01=0xd62728 02=0xff7f0e 03=0xc7a500 04=0x2ca02c 05=0x2171b5 06=0x8e44ad 07=0x17becf 08=0xe377c2" . \
  " torch-flash=0x111111 torch-cudnn=0x8c564b floor-read=0xaaaaaa ceiling=0x555555 ref-io=0x999999" . \
  " fa=0xd95f02 greedy=0x1b9e77 balanced=0x8e44ad auto=0xd6616b"                  # rung 06's split planners
PT = " 00=4 01=6 02=8 03=10 04=12 05=5 06=7 07=9 08=11 torch-flash=1 torch-cudnn=2 floor-read=3"
SPARE = "0x7b4173 0xbd9e39 0x637939 0xad494a 0x6b6ecf 0x8ca252 0x393b79"     # for ids not named above
_hash(s) = strlen(s) == 0 ? 0 : (strstrt("0123456789abcdefghijklmnopqrstuvwxyz-_", s[1:1]) + 31 * _hash(s[2:])) % 1000003
_key(id) = is_peer(id) ? id : id[1:2]
_mix(c, f) = int(c + (255 - c) * f)
_base(id) = get(PAL, _key(id)) ne "" ? int(get(PAL, _key(id))) : int(word(SPARE, 1 + _hash(id) % words(SPARE)))
colour(id) = is_peer(id) || !has(IDS, id) ? _base(id) : (_c = _base(id), _f = 0.8 * later(id) / nvar(id), \
  (_mix((_c >> 16) & 255, _f) << 16) | (_mix((_c >> 8) & 255, _f) << 8) | _mix(_c & 255, _f))
hex(id) = sprintf("#%06x", colour(id))
ptype(id) = !is_peer(id) && has(IDS, id) && later(id) ? 14 : get(PT, _key(id)) ne "" ? int(get(PT, _key(id))) : 13
dtype(id) = is_peer(id) ? 2 : 1
lwidth(id) = is_peer(id) ? 2 : 2.5
# commands for eval: a dashed line across a panel, labelled at its left; a note in a panel's middle
inlineref(y, text) = sprintf('set arrow from graph 0, first %.6g to graph 1, first %.6g nohead dt 2 lw 1.5 ' . \
  'lc rgb "%s" back; set label "%s" at graph 0.02, first %.6g left offset 0,0.6 tc rgb "%s" font "%s" front', \
  y, y, hex("ceiling"), text, y, hex("ceiling"), F9)
emptynote(text) = sprintf('set label "%s" at graph 0.5, graph 0.5 center tc rgb "%s" font "%s" front', text, MUTED, F12)
