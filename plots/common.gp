# Shared by every plot script: terminal, fonts, colours, and the helpers that tools/plots.sh's
# per-panel settings call (as "eval helper(...)"). tools/plots.sh runs gnuplot from the repository
# root with these variables set:
#   TERMINAL  pngcairo, or png (libgd) where cairo is missing      OUTFILE  the .png to write
#   DIR       this plot's folder under build/plots/<gpu>/: the .dat files and the settings (.gp)
#             that awk wrote from the CSV; meta.gp there sets TITLE and SUBTITLE
set encoding utf8
load "plots/palette.gp"

FONT = (TERMINAL eq "pngcairo") ? "Sans" : "DejaVuSans"
fnt(size) = sprintf("%s,%d", FONT, size)
F8 = fnt(8); F9 = fnt(9); F10 = fnt(10); F11 = fnt(11); F12 = fnt(12); F13 = fnt(13)
# noenhanced: device names, ids and statuses are printed as they are (no ^ or _ markup)
start(w, h) = sprintf('set terminal %s size %d,%d font "%s" noenhanced; set output "%s"', \
                      TERMINAL, w, h, fnt(11), OUTFILE)

INK = "#333333"
MUTED = "#777777"
GRIDC = "#dddddd"
set border lw 1 lc rgb INK
set grid back lc rgb GRIDC lw 1
set tics textcolor rgb INK
# opaque fills only: the png (libgd) terminal draws no transparency
set style fill solid 1.0 border lc rgb INK

# the title and, under it and smaller, the subtitle (which CSV, which commit); each script sets
# HEIGHT (pixels) first. top(y): where the panels start, a line lower when the subtitle has two.
TITLE_CMD = 'set label 998 TITLE at screen 0.5, screen 1 - 16.0 / HEIGHT center font F13 tc rgb "black"'
SUBTITLE_CMD = 'set label 999 SUBTITLE at screen 0.5, screen 1 - 38.0 / HEIGHT center font F10 tc rgb INK'
top(y) = y - (strstrt(SUBTITLE, "\n") > 0 ? 16.0 / HEIGHT : 0)

# legend text per id; tools/plots.sh sets lab_<id> from the rung folders ("05 FA2 outer Q")
legend_label(id) = exists("lab_" . _us(id)) ? value("lab_" . _us(id)) : id

# --- helpers: each returns gnuplot commands for "eval" ----------------------------------------
# a reference line across a bar panel (a peer, a ceiling), labelled in the right margin
refline(y, id, text, labely) = sprintf( \
  'set arrow from graph 0, first %.6g to graph 1, first %.6g nohead dt %d lw 2 lc rgb "%s" back; ' . \
  'set label "%s" at graph 1.01, first %.6g left tc rgb "%s" font "%s"', \
  y, y, dtype(id), hex(id), text, labely, hex(id), fnt(10))
# a dashed reference line across a line panel, labelled just above it at the left
inlineref(y, id, text) = sprintf( \
  'set arrow from graph 0, first %.6g to graph 1, first %.6g nohead dt 2 lw 1.5 lc rgb "%s" back; ' . \
  'set label "%s" at graph 0.02, first %.6g left offset 0,0.6 tc rgb "%s" font "%s" front', \
  y, y, hex(id), text, y, hex(id), fnt(9))
# why a bar is missing, at the bottom of its slot ("n/a\nunsupported", "FAIL", "skipped", "no row")
slotnote(x, text) = sprintf('set label "%s" at first %.6g, graph 0.09 center tc rgb "%s" font "%s" front', \
  text, x, MUTED, fnt(9))
# the same in a grouped bar chart, upright
barnote(x, text) = sprintf('set label "%s" at first %.6g, graph 0.015 left rotate by 90 tc rgb "%s" font "%s" front', \
  text, x, MUTED, fnt(8))
# a small note under one point
pointnote(x, y, text) = sprintf('set label "%s" at first %.6g, first %.6g center offset 0,-1.3 tc rgb "%s" font "%s" front', \
  text, x, y, MUTED, fnt(9))
# the ids of the line(s) ending at a point, just above it
endlabel(x, y, text) = sprintf('set label "%s" at first %.6g, first %.6g right offset 0,0.9 tc rgb "%s" font "%s" front', \
  text, x, y, INK, fnt(9))
# the middle of a panel with nothing to draw
emptynote(text) = sprintf('set label "%s" at graph 0.5, graph 0.5 center tc rgb "%s" font "%s" front', \
  text, MUTED, fnt(12))
