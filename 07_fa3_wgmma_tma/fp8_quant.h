/* What rung 07's FP8 step (07g, fp8.cuh) and its quantize kernels agree on, written for C and CUDA
 * alike, as common/fp8.cuh is: the CPU tests (tests/test_fp8_step.c) run this very code.
 *
 *   - the tiles of quantization: one scale per F8_QROWS query rows (a consumer warpgroup's rows)
 *     and per K/V tile of keys of K and of V (the kernel's, f8_bc: 128 or 192), per batch and head;
 *   - DK, the row length of the quantized Q and K (d zero-padded to 64, 128 or 256), over which
 *     the random Hadamard map of common/hadamard.cuh runs (any d: the zeros are rotated too, and
 *     (H D q) . (H D k) over DK columns is still q . k);
 *   - the order of V's keys in the transposed V that O += P V reads (f8_v_key), and the bytes of P
 *     in the A registers of that product (f8_pack_k32): the two halves of one permutation, which
 *     the CPU tests check against the fragment layouts of wgmma;
 *   - where everything lies in the step's workspace (f8_ws_layout).
 *
 * The layouts behind f8_v_key and f8_pack_k32 (PTX ISA, "Register Fragments and Shared Memory
 * Matrix Layouts" for wgmma; CUTLASS's CLayout_64xN and ALayout_64x32 say the same). Thread t of a
 * warpgroup, warp w = t / 32, g = (t % 32) / 4, c = t % 4:
 *   accumulator of m64nN (float32): register 4j + 2h + e holds D[16w + g + 8h][8j + 2c + e];
 *   A from registers of m64nNk32, 8-bit: register r, byte b holds A[16w + g + 8(r % 2)][4c + b + 16(r / 2)].
 * For 16-bit P the two agree (register-A k16 is the accumulator's layout: fa3.cu packs pairs); for
 * 8-bit they do not: of a k32 step's 32 columns a thread holds, per row, the columns 2c, 2c + 1,
 * 2c + 8, 2c + 9, 2c + 16, 2c + 17, 2c + 24, 2c + 25 of S, but register A wants 4c .. 4c + 3 and
 * 16 + 4c .. 16 + 4c + 3. Since O = sum over keys of P[., key] V[key, .], any order of the keys
 * gives the same O, as long as P's columns and V's rows are put in the same one. So each thread
 * puts its own eight values into its eight byte slots, in order (no data moves between threads),
 * and V is written with its keys in the matching order: slot p of a 32-key step holds key
 * f8_v_key(p). (FlashAttention-3 does the same, with byte permutes; it reorders V in shared memory,
 * this step in the quantize kernel that writes V transposed anyway.) */
#ifndef FP8_QUANT_H
#define FP8_QUANT_H

#include <stddef.h>
#include <stdint.h>
#include "../common/fp8.cuh"
#include "../common/hadamard.cuh"

#ifdef __CUDACC__
#define F8_FN __host__ __device__ static inline
#else
#define F8_FN static inline
#endif

enum {
    F8_QROWS = 64,      /* query rows per scale of Q: one consumer warpgroup's m64 rows */
    F8_BC = 128,        /* keys per K/V tile of the kernel, and per scale of K and of V ... */
    F8_BC_WIDE = 192,   /* ... but at DK = 128 where a row sees 16 tiles or more (f8_bc) */
    F8_SEED = 0x07f8    /* the sign pattern D of the Hadamard map (Q and K must share it) */
};

/* The row length of quantized Q and K: d rounded up to the kernel's tile, 64, 128 or 256. */
F8_FN int f8_dk(int d) { return d <= 64 ? 64 : d <= 128 ? 128 : 256; }

/* The kernel's K/V tile for head dim d and M keys, which is also the block of keys that K and V
 * each take one scale for (so a tile's S descale and P's factor r_j stay one number a tile): 192
 * keys at DK = 128 where M >= 16 tiles of 192 (FlashAttention-3's FP8 tile there is wider still,
 * 224), else 128. Below 16 tiles the last, partial tile would cost more than the wider tile saves
 * (the 16-bit wide tile's rule, fa3.cu's f3_pick). fp8.cuh picks the kernel by it, the workspace
 * layout and the quantize kernels follow it, so they agree by construction. */
F8_FN int f8_bc(int d, int M) { return f8_dk(d) == 128 && M >= 16 * F8_BC_WIDE ? F8_BC_WIDE : F8_BC; }

/* The transposed V tile in shared memory: K-major rows of keys, in chunks of f8_v_rowb(bc) keys
 * (bytes), the swizzle's span: 128 (one chunk, 128B swizzle) where bc is a multiple of 128, else 64
 * (bc / 64 chunks, 64B swizzle, as Q and K at DK = 64). Chunk ch holds keys [ch rowb, ch rowb + rowb)
 * of the tile for all DV rows, DV rowb bytes; the k32 step kb of O += P V reads keys [32 kb, 32 kb +
 * 32): chunk 32 kb / rowb, 32 kb % rowb bytes into its rows. f8_v_step_at is that step's start in the
 * stage, in bytes (before the swizzle, which the descriptor's mode undoes). */
F8_FN int f8_v_rowb(int bc) { return bc % 128 == 0 ? 128 : 64; }
F8_FN int f8_v_step_at(int kb, int bc, int dv)
{
    const int rowb = f8_v_rowb(bc);
    return (32 * kb / rowb) * dv * rowb + (32 * kb) % rowb;
}

/* The key in slot p (0..31) of a 32-key step of the transposed V: slot 4c + b (b = 0..3) holds the
 * b-th of thread c's columns 2c, 2c + 1, 2c + 8, 2c + 9; slot 16 + 4c + b the b-th of 16 + the same.
 * As bits: p = (h, c1, c0, b1, b0) -> key = (h, b1, c1, c0, b0). */
F8_FN int f8_v_key(int p)
{
    return (p & 16) | ((p >> 1) & 1) << 3 | ((p >> 2) & 3) << 1 | (p & 1);
}

/* The key (0 .. bc - 1) in byte p of a tile's row of the transposed V: f8_v_key within its 32. */
F8_FN int f8_vt_key(int p) { return (p & ~31) | f8_v_key(p & 31); }

/* The first key of the 4-byte word q (0 .. bc / 4 - 1) of a row of a transposed V tile: its slots
 * 4q .. 4q + 3 hold keys kb, kb + 1, kb + 8, kb + 9 (f8_vt_key: kb = 32 (q / 8) + 16 (q / 4 % 2) +
 * 2 (q % 4)). The quantize kernel writes a row a word per lane, from these four keys. */
F8_FN int f8_vt_word_key(int q) { return 32 * (q / 8) + 16 * (q / 4 % 2) + 2 * (q % 4); }

/* The quantize kernel's H D of a row, split over DK / 8 threads of 8 neighbouring columns each:
 * hadamard_transform's passes in its order and with its operations, so the bits are the same.
 * f8_had8: the signs, then the passes of pairs 1, 2 and 4 apart, inside the thread's 8 values.
 * f8_had_cross: the pass of pairs 8 m apart, between this thread and the one m threads away (o:
 * its values), the lower of the two taking a + b, the upper (upper != 0) a - b. Then the kernel
 * multiplies by 1 / sqrt(DK). */
F8_FN void f8_had8(float *e, const float *sg)
{
    for (int i = 0; i < 8; i++) e[i] *= sg[i];
    for (int h = 1; h < 8; h *= 2)
        for (int i = 0; i < 8; i++)
            if (!(i & h)) {
                const float a = e[i], b = e[i + h];
                e[i] = a + b;
                e[i + h] = a - b;
            }
}
F8_FN void f8_had_cross(float *e, const float *o, int upper)
{
    for (int i = 0; i < 8; i++) e[i] = upper ? o[i] - e[i] : e[i] + o[i];
}

/* One k32 step of P for the A registers, from the 16 accumulators of four n8 blocks of S (s[4j + 2h
 * + e]: block j, row g + 8h, column 2c + e): register r holds row g + 8 (r % 2), blocks 2 (r / 2)
 * and 2 (r / 2) + 1, in the order of f8_v_key. Each value becomes e4m3 by the paired conversion of
 * common/fp8.cuh (round to nearest even, saturating); P needs no scale first: the softmax keeps it
 * at most 2^8 = 256 (07f's lazy rescale), which e4m3 holds (up to 448). */
F8_FN void f8_pack_k32(const float *s, uint32_t *a)
{
    for (int r = 0; r < 4; r++) {
        const int i = 8 * (r / 2) + 2 * (r % 2);   /* block 2 (r / 2), row half r % 2 */
        a[r] = (uint32_t)fp8_e4m3x2_encode(s[i], s[i + 1]) | (uint32_t)fp8_e4m3x2_encode(s[i + 4], s[i + 5]) << 16;
    }
}

/* A row of Q or K before quantization: x holds its d values; the columns d .. dk - 1 become 0, and
 * with `hadamard` the whole row of dk goes through H D (common/hadamard.cuh, seed F8_SEED). */
F8_FN void f8_row_transform(float *x, int d, int dk, int hadamard)
{
    for (int c = d; c < dk; c++) x[c] = 0.0f;
    if (hadamard) incoherent_forward(x, dk, F8_SEED);
}

F8_FN float f8_amax(const float *x, int n)
{
    float m = 0.0f;
    for (int i = 0; i < n; i++) m = fmaxf(m, fabsf(x[i]));
    return m;
}

/* x as stored: e4m3 of x / scale (common/fp8.cuh: round to nearest even, saturating). */
F8_FN uint8_t f8_code(float x, float scale) { return fp8_e4m3_encode(x / scale); }

/* The factor P of K/V tile j is multiplied by before its cast, so that the product with V's e4m3
 * codes comes out in the units of the head's largest V scale (vmax): r = scale_v(j) / vmax, at most
 * 1, so P r <= 256 still fits. An all-zero V tile (scale 1 by common/fp8.cuh, left out of vmax) and
 * an all-zero V (vmax 0) take r = 1: their codes are 0, and so is what they add. */
F8_FN float f8_v_ratio(float scale_v, float vmax)
{
    return vmax > 0.0f && scale_v < vmax ? scale_v / vmax : 1.0f;
}

/* ---- the workspace --------------------------------------------------------------------------
 * Byte offsets into the step's workspace, every piece 256-byte aligned (TMA wants 16):
 *   sched   2 ints: 07e's schedule counters (persistent.cuh), first, as in 07e and 07f
 *   amax    3 uints: per-tensor mode, the largest |x| of Q, K, V (float bits; atomicMax)
 *   vmax    [B Hkv] uints: per K/V head, the largest scale of its V tiles (float bits; atomicMax)
 *   qs      [B Hq][nq] floats: the scale of each block of F8_QROWS query rows
 *   ks, vs  [B Hkv][nk] floats: the scale of each tile of bc = f8_bc(d, M) keys of K, of V
 *   q8      [B Hq][N][DK] e4m3: Q (after H D), rows zero-padded from d to DK
 *   k8      [B Hkv][M][DK] e4m3: K, the same
 *   vt8     [B Hkv][DK][nk bc] e4m3: V transposed, keys along the row, each 32 in f8_v_key's
 *           order; keys from M up and columns from d up are 0
 * The first five are zeroed before each launch where they accumulate (amax, vmax). */
typedef struct f8_ws_layout {
    size_t sched, amax, vmax, qs, ks, vs, q8, k8, vt8, total;
    int dk, bc, nq, nk;       /* DK; the K/V tile (f8_bc); query-row blocks and key tiles per head */
} f8_ws_layout;

F8_FN size_t f8_align(size_t x) { return (x + 255) & ~(size_t)255; }

F8_FN f8_ws_layout f8_ws_of(int B, int Hq, int Hkv, int N, int M, int d)
{
    f8_ws_layout w;
    const size_t bh = (size_t)B * Hq, bkv = (size_t)B * Hkv;
    w.dk = f8_dk(d);
    w.bc = f8_bc(d, M);
    w.nq = (N + F8_QROWS - 1) / F8_QROWS;
    w.nk = (M + w.bc - 1) / w.bc;
    w.sched = 0;
    w.amax = 256;
    w.vmax = w.amax + 256;
    w.qs = w.vmax + f8_align(bkv * 4);
    w.ks = w.qs + f8_align(bh * w.nq * 4);
    w.vs = w.ks + f8_align(bkv * w.nk * 4);
    w.q8 = w.vs + f8_align(bkv * w.nk * 4);
    w.k8 = w.q8 + f8_align(bh * N * w.dk);
    w.vt8 = w.k8 + f8_align(bkv * M * w.dk);
    w.total = w.vt8 + f8_align(bkv * w.dk * (size_t)w.nk * w.bc);
    return w;
}

/* Byte offsets of an element inside q8 / k8 (row `row` of plane `plane`, rows per plane `rows`,
 * column c) and inside vt8 (row n of plane `plane`, byte `slot` = tile j bc + p along it). */
F8_FN size_t f8_row_at(f8_ws_layout w, int plane, int rows, int row, int c)
{
    return ((size_t)plane * rows + row) * w.dk + c;
}
F8_FN size_t f8_vt_at(f8_ws_layout w, int plane, int n, int slot)
{
    return ((size_t)plane * w.dk + n) * w.nk * w.bc + slot;
}

#endif
