# One colour, point type and dash per rung id, the same in every plot (loaded by common.gp).
#
# The ladder climbs from grey (the cuBLAS baseline) through warm colours (the CUDA-core rungs) to
# green (tensor cores), blue (FA2; its variants 05a..05c are lighter blues leading up to 05) and
# purple (split-KV). The PyTorch peers are dark and dashed; the ceilings grey and dashed; sizes drawn
# for scale grey and dotted. An id not listed here (a new variant, a new peer) gets a colour from a
# spare list, chosen by a hash of its name, so it too keeps its colour from plot to plot.

pal_00  = 0x7f7f7f    # baseline: cuBLAS QK^T, softmax, cuBLAS PV
pal_01  = 0xd62728    # minimal
pal_02  = 0xff7f0e    # one row per block
pal_03  = 0xc7a500    # Br rows per block, a row per warp
pal_04  = 0x2ca02c    # tensor cores through WMMA
pal_05a = 0x9ecae1    # FA2 variants, light to dark
pal_05b = 0x6baed6
pal_05c = 0x3182bd
pal_05d = 0x5b7fa8
pal_05  = 0x08306b    # FA2
pal_06a = 0xd4b9e6    # split-KV variants, light to dark
pal_06b = 0xbc93d6
pal_06c = 0xa56cc6
pal_06  = 0x8e44ad    # split-KV (Flash-Decoding)
pal_06s = 0xbc93d6    # split-KV with the separate combine kernel
pal_07  = 0x17becf    # room to grow
pal_08  = 0xe377c2
pal_torch_flash = 0x111111    # PyTorch SDPA, flash backend
pal_torch_cudnn = 0x8c564b    # PyTorch SDPA, cuDNN backend
pal_ceiling = 0x555555
pal_ref_io  = 0x999999
pal_floor_read = 0xaaaaaa   # one kernel that only reads K and V (decode sweep)
# rung 06's split planners (splits-sim.png, <gpu>-varlen.png); balanced, the reference there, in 06's purple
pal_fa       = 0xd95f02    # FA3's heuristic
pal_greedy   = 0x1b9e77    # the article's re-split
pal_balanced = 0x8e44ad    # shares across requests

pt_00 = 4;   pt_01 = 6;   pt_02 = 8;   pt_03 = 10;  pt_04 = 12
pt_05a = 14; pt_05b = 14; pt_05c = 14; pt_05d = 14; pt_05 = 5
pt_06a = 15; pt_06b = 15; pt_06c = 15; pt_06 = 7;   pt_07 = 9;  pt_08 = 11
pt_torch_flash = 1; pt_torch_cudnn = 2; pt_06s = 15; pt_floor_read = 3

SPARE_COLOURS = "0x7b4173 0xbd9e39 0x637939 0xad494a 0x843c39 0x6b6ecf 0x8ca252 0xd6616b 0x393b79 0xe7969c"
SPARE_POINTS = "3 9 11 13 15"

# gnuplot names cannot hold '-': "torch-flash" is looked up as pal_torch_flash
_us(s) = strstrt(s, "-") ? s[1:strstrt(s, "-") - 1] . "_" . _us(s[strstrt(s, "-") + 1:]) : s
_ALPHA = "0123456789abcdefghijklmnopqrstuvwxyz-_."
_hash(s) = strlen(s) == 0 ? 0 : (strstrt(_ALPHA, s[1:1]) + 31 * _hash(s[2:])) % 1000003
_spare(list, id) = word(list, 1 + _hash(id) % words(list))

# rungs are "00".."99" with optional letters; anything else in the rung column is a peer
is_peer(id) = id[1:1] ne "" && strstrt("0123456789", id[1:1]) == 0
is_ref(id) = id eq "ceiling" || id[1:4] eq "ref-"

colour(id) = exists("pal_" . _us(id)) ? value("pal_" . _us(id)) : int(_spare(SPARE_COLOURS, id))
hex(id) = sprintf("#%06x", colour(id))
ptype(id) = exists("pt_" . _us(id)) ? value("pt_" . _us(id)) : int(_spare(SPARE_POINTS, id))
dtype(id) = id[1:4] eq "ref-" ? 3 : is_peer(id) ? 2 : 1
lwidth(id) = is_ref(id) ? 1.5 : is_peer(id) ? 2 : 2.5
psize(id) = is_ref(id) ? 0.01 : 1.1
