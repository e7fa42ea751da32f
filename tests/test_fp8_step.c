/* Rung 07's FP8 step (07g) on the CPU: what can be proven without a GPU.
 *
 * 1. The layout problem. FP8 wgmma takes P (register A) in another layout than the accumulators of
 *    S hold it; 07g packs each thread's own values (f8_pack_k32) and writes V transposed with its
 *    keys in the matching order (f8_vt_key), both in 07_fa3_wgmma_tma/fp8_quant.h. Here a warpgroup
 *    is modelled thread by thread from the PTX ISA's fragment layouts (the accumulator of m64nN and
 *    register A of m64nNk32 for 8-bit types, as CUTLASS's CLayout_64xN and ALayout_64x32 state
 *    them): S goes into 128 threads' accumulators, through the real packing code into A registers,
 *    and the product wgmma would compute from those registers and the transposed V tile is formed
 *    element by element. With small integers (exact in e4m3) it must equal P V exactly; with V in
 *    plain key order it must not (the test can fail).
 * 2. The quantization, as the quantize kernels do it (the same fp8_quant.h and common/ functions,
 *    in the kernels' order: rows padded to DK, Hadamard, block amax, scale, codes; V transposed),
 *    against a float64 model written from the definitions (the Hadamard map as a dense Sylvester
 *    matrix times the signs): every dequantized value within half an e4m3 step of the model's,
 *    scales equal, padding zero, per-tensor mode one scale.
 * 3. The error model behind the check's FP8 tolerance: 07g's arithmetic on the host (e4m3 Q, K, V
 *    with their scales, S descaled per tile, 07f's lazy rescale, P times r_j cast to e4m3, O in
 *    units of vmax) against the float64 reference of common/ref.c on the same float16 inputs, on
 *    shapes of the GPU matrix: its rel-L2 error of O and LSE error must sit well inside
 *    CHECK_E4M3_TOLERANCE, CHECK_E4M3_LSE_MAX and _RMS (common/harness.h), and three planted
 *    mistakes (V's descale left out, V in plain key order, S without K's scale) must fail them.
 *    FP8_MODEL_VERBOSE=1 build/bin/cpu_tests prints each shape's numbers. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "test.h"
#include "../07_fa3_wgmma_tma/fp8_quant.h"
#include "../common/half.h"
#include "../common/harness.h"

/* ---- 1. the P fragment and V's key order ---------------------------------------------------- */

/* Thread t (0..127) of a warpgroup, accumulator i of m64nN: its row and column (PTX ISA / CUTLASS
 * CLayout_64xN: register 4j + 2h + e is D[16 w + g + 8 h][8 j + 2 c + e]). */
static void acc_rc(int t, int i, int *row, int *col)
{
    const int w = t / 32, g = (t % 32) / 4, c = t % 4;
    *row = 16 * w + g + 8 * ((i / 2) % 2);
    *col = 8 * (i / 4) + 2 * c + i % 2;
}

/* Thread t, register r (0..3), byte b of register A of m64nNk32 with 8-bit A: its row and k (PTX ISA /
 * CUTLASS ALayout_64x32: A[16 w + g + 8 (r % 2)][4 c + b + 16 (r / 2)]). */
static void areg_rk(int t, int r, int b, int *row, int *k)
{
    const int w = t / 32, g = (t % 32) / 4, c = t % 4;
    *row = 16 * w + g + 8 * (r % 2);
    *k = 4 * c + b + 16 * (r / 2);
}

enum { TP = 128, TN = 64 };   /* the tile of keys (F8_BC) and a few of V's columns */

/* O = P V for one warpgroup's 64 rows and one tile of TP keys, the way the hardware would compute it
 * from the registers 07g fills and the transposed V tile: vt[n][p], p the byte along the row. `keyed`
 * chooses V's key order: f8_vt_key (07g's), or the plain order (a planted mistake). Returns the
 * number of entries that differ from sum_key P[m][key] V[key][n]. */
static int fragment_product_mismatches(const float *P, const float *V, int keyed, int *uncovered)
{
    static float acc[TP][TP / 2];               /* [thread][accumulator] */
    static uint32_t areg[TP][TP / 32][4];       /* [thread][k32 step][register] */
    static uint8_t vt[TN][TP];
    static float A[64][TP];
    static int seen[64][TP];
    memset(seen, 0, sizeof seen);
    for (int t = 0; t < 128; t++)
        for (int i = 0; i < TP / 2; i++) {
            int row, col;
            acc_rc(t, i, &row, &col);
            acc[t][i] = P[row * TP + col];
        }
    for (int t = 0; t < 128; t++)
        for (int kb = 0; kb < TP / 32; kb++) f8_pack_k32(&acc[t][16 * kb], areg[t][kb]);
    for (int n = 0; n < TN; n++)
        for (int p = 0; p < TP; p++) vt[n][p] = fp8_e4m3_encode(V[(keyed ? f8_vt_key(p) : p) * TN + n]);
    /* A as the hardware reads it from the registers */
    for (int t = 0; t < 128; t++)
        for (int kb = 0; kb < TP / 32; kb++)
            for (int r = 0; r < 4; r++)
                for (int b = 0; b < 4; b++) {
                    int row, k;
                    areg_rk(t, r, b, &row, &k);
                    A[row][32 * kb + k] = fp8_e4m3_decode((uint8_t)(areg[t][kb][r] >> (8 * b)));
                    seen[row][32 * kb + k]++;
                }
    *uncovered = 0;
    for (int m = 0; m < 64; m++)
        for (int k = 0; k < TP; k++) *uncovered += seen[m][k] != 1;
    int bad = 0;
    for (int m = 0; m < 64; m++)
        for (int n = 0; n < TN; n++) {
            double hw = 0, want = 0;
            for (int k = 0; k < TP; k++) hw += (double)A[m][k] * fp8_e4m3_decode(vt[n][k]);   /* B[k][n] = vt[n][k] */
            for (int key = 0; key < TP; key++) want += (double)P[m * TP + key] * V[key * TN + n];
            bad += hw != want;
        }
    return bad;
}

static void p_fragment_and_v_order(void)
{
    static float P[64 * TP], V[TP * TN];
    rng_stream r = {24, 70, 0};
    for (int i = 0; i < 64 * TP; i++) P[i] = (float)((int)(rng_next(&r) % 15) - 7);   /* exact in e4m3 */
    for (int i = 0; i < TP * TN; i++) V[i] = (float)((int)(rng_next(&r) % 15) - 7);
    int uncovered, bad = fragment_product_mismatches(P, V, 1, &uncovered);
    EXPECT_MSG(uncovered == 0, "the register-A model covers %d (row, k) of 64 x %d other than once", uncovered, TP);
    EXPECT_MSG(bad == 0, "%d of %d entries of O = P V differ with 07g's packing and V's key order", bad, 64 * TN);
    bad = fragment_product_mismatches(P, V, 0, &uncovered);
    EXPECT_MSG(bad > 64 * TN / 2, "V in plain key order: only %d of %d entries differ (the test cannot fail?)", bad,
               64 * TN);
    /* f8_v_key is a permutation of 0..31 */
    int hit[32] = {0}, perm = 1;
    for (int p = 0; p < 32; p++) hit[f8_v_key(p)]++;
    for (int k = 0; k < 32; k++) perm &= hit[k] == 1;
    EXPECT(perm);
    EXPECT(f8_v_key(0) == 0 && f8_v_key(1) == 1 && f8_v_key(2) == 8 && f8_v_key(3) == 9 && f8_v_key(4) == 2 &&
           f8_v_key(16) == 16 && f8_v_key(31) == 31 && f8_vt_key(34) == 40);
}

/* ---- 2. the quantization: the kernels' host path against a float64 model ---------------------- */

enum { Q_BLOCK = 0, Q_AMAX, Q_TENSOR };   /* fp8.cuh's F8_BLOCK, F8_AMAX, F8_TENSOR */

static uint32_t f32u(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static float u32f(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

/* f8_quant_rows: rows of x [planes][rows][d] (float16) in blocks of `block` -> out [planes][rows][dk]. */
static void host_quant_rows(const uint16_t *x, int planes, int rows, int d, int dk, int block, int nblk, int had,
                            int mode, uint8_t *out, float *scales, uint32_t *slot, const f8_ws_layout *w)
{
    float *buf = malloc(sizeof(float) * (size_t)block * dk);
    for (int pl = 0; pl < planes; pl++)
        for (int blk = 0; blk < nblk; blk++) {
            const int r0 = blk * block, nr = rows - r0 < block ? rows - r0 : block;
            float amax = 0.0f;
            for (int r = 0; r < nr; r++) {
                float *row = buf + (size_t)r * dk;
                for (int c = 0; c < d; c++) row[c] = f16_to_f32(x[((size_t)pl * rows + r0 + r) * d + c]);
                f8_row_transform(row, d, dk, had);
                amax = fmaxf(amax, f8_amax(row, dk));
            }
            if (mode == Q_AMAX) {
                if (f32u(amax) > *slot) *slot = f32u(amax);
                continue;
            }
            const float s = fp8_e4m3_scale(mode == Q_TENSOR ? u32f(*slot) : amax);
            scales[(size_t)pl * nblk + blk] = s;
            for (int r = 0; r < nr; r++)
                for (int c = 0; c < dk; c++)
                    out[f8_row_at(*w, pl, rows, r0 + r, c)] = f8_code(buf[(size_t)r * dk + c], s);
        }
    free(buf);
}

/* f8_quant_vt: V [planes][M][d] -> transposed [planes][dk][nk bc], keys in f8_vt_key's order. */
static void host_quant_vt(const uint16_t *v, int planes, int M, int d, int dk, int nk, int mode, uint8_t *out,
                          float *scales, uint32_t *vmax, uint32_t *slot, const f8_ws_layout *w)
{
    for (int pl = 0; pl < planes; pl++)
        for (int j = 0; j < nk; j++) {
            const int bc = w->bc, k0 = j * bc, nr = M - k0 < bc ? M - k0 : bc;
            float amax = 0.0f;
            for (int r = 0; r < nr; r++)
                for (int c = 0; c < d; c++) amax = fmaxf(amax, fabsf(f16_to_f32(v[((size_t)pl * M + k0 + r) * d + c])));
            if (mode == Q_AMAX) {
                if (f32u(amax) > *slot) *slot = f32u(amax);
                continue;
            }
            const float s = fp8_e4m3_scale(mode == Q_TENSOR ? u32f(*slot) : amax);
            scales[(size_t)pl * nk + j] = s;
            if ((amax > 0.0f || mode == Q_TENSOR) && f32u(s) > vmax[pl]) vmax[pl] = f32u(s);
            for (int n = 0; n < dk; n++)
                for (int p = 0; p < bc; p++) {
                    const int key = f8_vt_key(p);
                    out[f8_vt_at(*w, pl, n, k0 + p)] =
                        key < nr && n < d ? f8_code(f16_to_f32(v[((size_t)pl * M + k0 + key) * d + n]), s) : 0;
                }
        }
}

/* What f8_run's quantize kernels leave in the workspace (zeroed first, as cudaMemsetAsync does). */
static unsigned char *host_quantize(const attn_shape *s, const uint16_t *q, const uint16_t *k, const uint16_t *v,
                                    int per_tensor, int had, f8_ws_layout *wo)
{
    const f8_ws_layout w = f8_ws_of(s->B, s->Hq, s->Hkv, s->N, s->M, s->d);
    unsigned char *ws = calloc(w.total, 1);
    uint32_t *amax = (uint32_t *)(ws + w.amax), *vmax = (uint32_t *)(ws + w.vmax);
    const int bh = s->B * s->Hq, bkv = s->B * s->Hkv;
    for (int pass = per_tensor ? 0 : 1; pass < 2; pass++) {
        const int mode = !per_tensor ? Q_BLOCK : pass == 0 ? Q_AMAX : Q_TENSOR;
        host_quant_rows(q, bh, s->N, s->d, w.dk, F8_QROWS, w.nq, had, mode, ws + w.q8, (float *)(ws + w.qs), amax, &w);
        host_quant_rows(k, bkv, s->M, s->d, w.dk, w.bc, w.nk, had, mode, ws + w.k8, (float *)(ws + w.ks), amax + 1,
                        &w);
        host_quant_vt(v, bkv, s->M, s->d, w.dk, w.nk, mode, ws + w.vt8, (float *)(ws + w.vs), vmax, amax + 2, &w);
    }
    *wo = w;
    return ws;
}

/* Half an e4m3 step at |y| (in units of the scale): 2^-10 below 2^-6, else 2^(floor(log2 |y|) - 4). */
static double half_step(double y)
{
    y = fabs(y);
    if (y < 0.015625) return ldexp(1.0, -10);
    int e;
    frexp(y, &e);                                  /* y = f 2^e, f in [0.5, 1) */
    return ldexp(1.0, e - 1 - 4);
}

static attn_shape shape_of(int B, int Hq, int Hkv, int N, int M, int d, int causal)
{
    attn_shape s;
    memset(&s, 0, sizeof s);
    s.B = B; s.Hq = Hq; s.Hkv = Hkv; s.N = N; s.M = M; s.d = d; s.causal = causal;
    s.scale = 1.0f / sqrtf((float)d);
    s.dtype = ATTN_E4M3;
    return s;
}

/* The float64 model of one block of Q or K rows, checked against the host path's codes and scale.
 * Returns the entries outside half an e4m3 step (with 1e-5 of slack for the float Hadamard). */
static long model_rows(const uint16_t *x, int rows, int d, int dk, int r0, int nr, int had, double amax_tensor,
                       const uint8_t *codes, float scale, double *scale_err)
{
    double *y = malloc(sizeof(double) * (size_t)nr * dk), amax = 0;
    for (int r = 0; r < nr; r++)
        for (int i = 0; i < dk; i++) {
            double acc = 0;
            for (int j = 0; j < d; j++) {
                const double xj = f16_to_f32(x[(size_t)(r0 + r) * d + j]);
                acc += had ? xj * hadamard_sign(F8_SEED, j) * ((__builtin_popcount((unsigned)(i & j)) & 1) ? -1 : 1)
                                 / sqrt((double)dk)
                           : (i == j ? xj : 0.0);
            }
            y[(size_t)r * dk + i] = acc;
            amax = fmax(amax, fabs(acc));
        }
    const double s = (amax_tensor >= 0 ? amax_tensor : amax) > 0 ? (amax_tensor >= 0 ? amax_tensor : amax) / 448.0 : 1.0;
    *scale_err = fmax(*scale_err, fabs(scale - s) / s);
    long bad = 0;
    for (int r = 0; r < nr; r++)
        for (int i = 0; i < dk; i++) {
            const double yi = y[(size_t)r * dk + i], deq = fp8_e4m3_decode(codes[(size_t)(r0 + r) * dk + i]) * (double)scale;
            bad += !(fabs(deq - yi) <= half_step(yi / s) * s * (1 + 1e-5) + 1e-5 * s);
        }
    (void)rows;
    free(y);
    return bad;
}

static void quantize_against_float64(void)
{
    static const int cases[][7] = {{1, 2, 1, 77, 131, 64, 0}, {1, 2, 2, 130, 300, 128, 0}, {1, 1, 1, 65, 200, 256, 0},
                                   {1, 2, 1, 100, 100, 96, 0}, {1, 1, 1, 65, 3100, 128, 0}};   /* the last: 192-key tiles */
    for (int ci = 0; ci < 5; ci++)
        for (int mode = 0; mode < 3; mode++) {           /* block + Hadamard, block, per tensor */
            const int *c = cases[ci], had = mode == 0, tensor = mode == 2;
            attn_shape s = shape_of(c[0], c[1], c[2], c[3], c[4], c[5], c[6]);
            uint16_t *q = malloc(2 * attn_q_elems(&s)), *k = malloc(2 * attn_kv_elems(&s)), *v = malloc(2 * attn_kv_elems(&s));
            make_inputs(&s, 5 + ci, INPUT_SPARSE_OUTLIER, q, k, v);
            f8_ws_layout w;
            unsigned char *ws = host_quantize(&s, q, k, v, tensor, had, &w);
            const int bc = w.bc;   /* the K/V tile and scale block: 192 for the last case, 128 before it */
            EXPECT_MSG(bc == (ci == 4 ? 192 : 128), "d = %d, M = %d: a K/V tile of %d keys", s.d, s.M, bc);
            const float *qs = (const float *)(ws + w.qs), *ks = (const float *)(ws + w.ks), *vs = (const float *)(ws + w.vs);
            const uint32_t *vmax = (const uint32_t *)(ws + w.vmax);
            /* per tensor: the float64 amax of the whole (transformed) tensor */
            double tq = -1, tk = -1, tv = -1, serr = 0;
            if (tensor) {
                tq = tk = tv = 0;
                for (size_t i = 0; i < attn_q_elems(&s); i++) tq = fmax(tq, fabs(f16_to_f32(q[i])));
                for (size_t i = 0; i < attn_kv_elems(&s); i++) tk = fmax(tk, fabs(f16_to_f32(k[i])));
                for (size_t i = 0; i < attn_kv_elems(&s); i++) tv = fmax(tv, fabs(f16_to_f32(v[i])));
            }
            long bad = 0;
            const int bh = s.B * s.Hq, bkv = s.B * s.Hkv;
            for (int pl = 0; pl < bh; pl++)
                for (int b = 0; b < w.nq; b++) {
                    const int nr = s.N - b * F8_QROWS < F8_QROWS ? s.N - b * F8_QROWS : F8_QROWS;
                    bad += model_rows(q + (size_t)pl * s.N * s.d, s.N, s.d, w.dk, b * F8_QROWS, nr, had, tq,
                                      ws + w.q8 + (size_t)pl * s.N * w.dk, qs[pl * w.nq + b], &serr);
                }
            for (int pl = 0; pl < bkv; pl++)
                for (int b = 0; b < w.nk; b++) {
                    const int nr = s.M - b * bc < bc ? s.M - b * bc : bc;
                    bad += model_rows(k + (size_t)pl * s.M * s.d, s.M, s.d, w.dk, b * bc, nr, had, tk,
                                      ws + w.k8 + (size_t)pl * s.M * w.dk, ks[pl * w.nk + b], &serr);
                }
            /* V: every byte of the transposed tile, from the key f8_vt_key names; zeros past M and d */
            long badv = 0, nonzero_pad = 0;
            for (int pl = 0; pl < bkv; pl++) {
                double vm = 0;
                for (int j = 0; j < w.nk; j++) {
                    double amax = 0;
                    const int nr = s.M - j * bc < bc ? s.M - j * bc : bc;
                    for (int r = 0; r < nr; r++)
                        for (int n = 0; n < s.d; n++) amax = fmax(amax, fabs(f16_to_f32(v[((size_t)pl * s.M + j * bc + r) * s.d + n])));
                    const double sc = tensor ? tv / 448.0 : amax > 0 ? amax / 448.0 : 1.0;
                    serr = fmax(serr, fabs(vs[pl * w.nk + j] - sc) / sc);
                    if (amax > 0 || tensor) vm = fmax(vm, sc);
                    for (int n = 0; n < w.dk; n++)
                        for (int p = 0; p < bc; p++) {
                            const int key = f8_vt_key(p);
                            const uint8_t code = ws[w.vt8 + ((size_t)pl * w.dk + n) * w.nk * bc + j * bc + p];
                            if (key >= nr || n >= s.d) { nonzero_pad += code != 0; continue; }
                            const double y = f16_to_f32(v[((size_t)pl * s.M + j * bc + key) * s.d + n]);
                            badv += !(fabs(fp8_e4m3_decode(code) * (double)vs[pl * w.nk + j] - y) <=
                                      half_step(y / sc) * sc * (1 + 1e-6));
                        }
                }
                serr = fmax(serr, fabs(u32f(vmax[pl]) - vm) / vm);
            }
            EXPECT_MSG(bad == 0 && badv == 0 && nonzero_pad == 0 && serr < 1e-6,
                       "d = %d, %s: %ld Q/K and %ld V values off by more than half an e4m3 step, %ld padding bytes "
                       "not 0, scales off by %.2g", s.d, mode == 0 ? "block + Hadamard" : mode == 1 ? "block" : "tensor",
                       bad, badv, nonzero_pad, serr);
            free(ws); free(q); free(k); free(v);
        }
}

/* ---- 3. the error model behind the FP8 tolerance --------------------------------------------- */

enum { PLANT_NONE = 0, PLANT_NO_VMAX, PLANT_V_ORDER, PLANT_NO_SK };

/* 07g's arithmetic for one shape, from the workspace host_quantize made: O [B Hq N d] and LSE. */
static void model_07g(const attn_shape *s, const unsigned char *ws, const f8_ws_layout *w, int plant, double *O, double *lse)
{
    const float *qs = (const float *)(ws + w->qs), *ks = (const float *)(ws + w->ks), *vs = (const float *)(ws + w->vs);
    const uint32_t *vmaxb = (const uint32_t *)(ws + w->vmax);
    const int dk = w->dk, group = s->Hq / s->Hkv;
    const int bc = w->bc;
    int slot_of[F8_BC_WIDE];
    for (int p = 0; p < bc; p++) slot_of[plant == PLANT_V_ORDER ? p : f8_vt_key(p)] = p;
    const double sl = (double)s->scale * 1.4426950408889634;
#pragma omp parallel for collapse(2)
    for (int bh = 0; bh < s->B * s->Hq; bh++)
        for (int i = 0; i < s->N; i++) {
            const int b = bh / s->Hq, h = bh % s->Hq, kvp = b * s->Hkv + h / group;
            const int end = attn_row_end(s, i, s->M);
            const float vmax = u32f(vmaxb[kvp]);
            const uint8_t *qr = ws + w->q8 + ((size_t)bh * s->N + i) * dk;
            double m = -INFINITY, l = 0, acc[256] = {0}, x[F8_BC_WIDE];
            for (int j = 0; j * bc < end; j++) {
                const double sl2 = sl * qs[bh * w->nq + i / F8_QROWS] * (plant == PLANT_NO_SK ? 1.0f : ks[kvp * w->nk + j]);
                const double rv = f8_v_ratio(vs[kvp * w->nk + j], vmax), lr = log2(rv);
                double mx = -INFINITY;
                for (int t = 0; t < bc; t++) {
                    const int key = j * bc + t;
                    x[t] = -INFINITY;
                    if (key >= end) continue;
                    const uint8_t *kr = ws + w->k8 + ((size_t)kvp * s->M + key) * dk;
                    double dot = 0;
                    for (int c = 0; c < dk; c++) dot += (double)fp8_e4m3_decode(qr[c]) * fp8_e4m3_decode(kr[c]);
                    x[t] = dot * sl2;
                    mx = fmax(mx, x[t]);
                }
                const double m_new = fmax(m, mx);
                if (!(m_new <= m + 8.0)) {                 /* 07f: rescale only past 2^8 (here per row) */
                    const double alpha = m == -INFINITY ? 0.0 : exp2(m - m_new);
                    for (int c = 0; c < s->d; c++) acc[c] *= alpha;
                    l *= alpha;
                    m = m_new;
                }
                const double m_use = (m == -INFINITY ? 0.0 : m) - lr;
                for (int t = 0; t < bc; t++) {
                    if (x[t] == -INFINITY) continue;
                    const double pp = exp2(x[t] - m_use);   /* P r_j, at most 256 */
                    const double pq = fp8_e4m3_decode(fp8_e4m3_encode((float)pp));
                    const int key = j * bc + t, p = slot_of[t];
                    l += pp / rv;
                    for (int c = 0; c < s->d; c++)
                        acc[c] += pq * fp8_e4m3_decode(ws[w->vt8 + ((size_t)kvp * dk + c) * w->nk * bc + j * bc + p]);
                    (void)key;
                }
            }
            double *o = O + ((size_t)bh * s->N + i) * s->d;
            const double descale = plant == PLANT_NO_VMAX ? 1.0 : (vmax > 0 ? vmax : 1.0);
            for (int c = 0; c < s->d; c++) o[c] = end > 0 ? acc[c] * descale / l : 0.0;
            lse[(size_t)bh * s->N + i] = end > 0 ? (m + log2(l)) * 0.6931471805599453 : -INFINITY;
        }
}

/* rel-L2 of O and max |LSE - ref| of the model against the float64 reference. */
static void model_errors_q(const attn_shape *s, int mode, int seed, int plant, int per_tensor, int had, double *rel,
                           double *lse_err, double *lse_rms, double *rmse)
{
    uint16_t *q = malloc(2 * attn_q_elems(s)), *k = malloc(2 * attn_kv_elems(s)), *v = malloc(2 * attn_kv_elems(s));
    make_inputs(s, (uint64_t)seed, mode, q, k, v);
    f8_ws_layout w;
    unsigned char *ws = host_quantize(s, q, k, v, per_tensor, had, &w);
    double *O = malloc(sizeof(double) * attn_q_elems(s)), *L = malloc(sizeof(double) * attn_lse_elems(s));
    model_07g(s, ws, &w, plant, O, L);
    ref_init();
    double e2 = 0, r2 = 0, le = 0, l2 = 0;
    long nl = 0;
#pragma omp parallel for collapse(2) reduction(+:e2, r2, l2, nl) reduction(max:le)
    for (int bh = 0; bh < s->B * s->Hq; bh++)
        for (int i = 0; i < s->N; i++) {
            double out[256], scratch[8192];
            const double lr = ref_row(s, q, k, v, bh / s->Hq, bh % s->Hq, i, out, scratch);
            const double *o = O + ((size_t)bh * s->N + i) * s->d;
            for (int c = 0; c < s->d; c++) { e2 += (o[c] - out[c]) * (o[c] - out[c]); r2 += out[c] * out[c]; }
            if (isfinite(lr)) {
                const double e = L[(size_t)bh * s->N + i] - lr;
                le = fmax(le, fabs(e));
                l2 += e * e;
                nl++;
            }
        }
    *rel = sqrt(e2 / r2);
    *lse_err = le;
    *lse_rms = sqrt(l2 / (nl ? nl : 1));
    *rmse = sqrt(e2 / (double)attn_q_elems(s));
    free(q); free(k); free(v); free(ws); free(O); free(L);
}

/* 07g's defaults: block scales and the Hadamard map. */
static void model_errors(const attn_shape *s, int mode, int seed, int plant, double *rel, double *lse_err,
                         double *lse_rms)
{
    double rmse;
    model_errors_q(s, mode, seed, plant, 0, 1, rel, lse_err, lse_rms, &rmse);
}

/* The e4m3 lines of tests/gpu_cases.txt that the CPU can afford (some with B = 1), normal and
 * sparse-outlier inputs. */
static const int model_cases[][8] = {
    {1, 4, 2, 77, 131, 64, 0, INPUT_NORMAL},    {1, 4, 4, 150, 203, 64, 1, INPUT_NORMAL},
    {1, 4, 2, 200, 333, 128, 1, INPUT_NORMAL},  {1, 4, 1, 131, 300, 128, 0, INPUT_NORMAL},
    {1, 2, 2, 200, 77, 256, 1, INPUT_NORMAL},   {1, 4, 4, 130, 300, 256, 0, INPUT_NORMAL},
    {1, 4, 2, 99, 170, 72, 1, INPUT_NORMAL},    {1, 4, 4, 100, 100, 96, 0, INPUT_NORMAL},
    {1, 3, 3, 190, 190, 192, 1, INPUT_NORMAL},  {1, 8, 1, 1, 4097, 128, 0, INPUT_NORMAL},
    {1, 4, 4, 512, 512, 128, 0, INPUT_SPARSE_OUTLIER}, {1, 4, 4, 512, 512, 64, 1, INPUT_SPARSE_OUTLIER},
    {1, 4, 2, 300, 257, 256, 1, INPUT_SPARSE_OUTLIER}, {1, 2, 1, 100, 3300, 128, 1, INPUT_NORMAL},
};
#define N_MODEL_CASES (int)(sizeof model_cases / sizeof model_cases[0])

static void tolerance_from_error_model(void)
{
    double worst_rel = 0, worst_lse = 0, worst_rms = 0;
    for (int ci = 0; ci < N_MODEL_CASES; ci++)
        for (int seed = 1; seed <= 2; seed++) {
            const int *c = model_cases[ci];
            attn_shape s = shape_of(c[0], c[1], c[2], c[3], c[4], c[5], c[6]);
            double rel, le, lr;
            model_errors(&s, c[7], seed, PLANT_NONE, &rel, &le, &lr);
            if (getenv("FP8_MODEL_VERBOSE"))
                printf("   model: %d %d %d %d %d %d %d inputs=%d seed %d: rel-L2 %.4f, LSE max %.4f rms %.4f\n",
                       c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], seed, rel, le, lr);
            worst_rel = fmax(worst_rel, rel);
            worst_lse = fmax(worst_lse, le);
            worst_rms = fmax(worst_rms, lr);
        }
    printf("   note: 07g's arithmetic on the host, %d e4m3 shapes of the GPU matrix x 2 seeds, worst: rel-L2 of O\n"
           "         %.3g, |LSE - ref| %.3g, its rms %.3g; the check allows %.3g, %.3g, %.3g\n", N_MODEL_CASES,
           worst_rel, worst_lse, worst_rms, CHECK_E4M3_TOLERANCE, CHECK_E4M3_LSE_MAX, CHECK_E4M3_LSE_RMS);
    /* the margins: the kernel adds float32 (and the FP8 tensor cores' shorter) accumulation, ex2.approx
     * and per-warp rescale decisions to this model; the tolerance is twice the model's worst */
    EXPECT_MSG(worst_rel <= 0.6 * CHECK_E4M3_TOLERANCE, "the model's rel-L2 %.3g is not within 0.6 of the tolerance "
               "%.3g", worst_rel, CHECK_E4M3_TOLERANCE);
    EXPECT_MSG(worst_lse <= 0.5 * CHECK_E4M3_LSE_MAX && worst_rms <= 0.5 * CHECK_E4M3_LSE_RMS,
               "the model's LSE errors (max %.3g, rms %.3g) are not within half the tolerances %.3g, %.3g",
               worst_lse, worst_rms, CHECK_E4M3_LSE_MAX, CHECK_E4M3_LSE_RMS);
    /* the check can fail: each planted mistake breaks the tolerance on a plain shape */
    static const char *const names[] = {"", "V's descale left out", "V in plain key order", "S without K's scale"};
    for (int plant = PLANT_NO_VMAX; plant <= PLANT_NO_SK; plant++) {
        attn_shape s = shape_of(1, 2, 2, 130, 300, 128, 0);
        double rel, le, lr;
        model_errors(&s, INPUT_NORMAL, 3, plant, &rel, &le, &lr);
        if (getenv("FP8_MODEL_VERBOSE"))
            printf("   planted %s: rel-L2 %.4f, LSE max %.4f rms %.4f\n", names[plant], rel, le, lr);
        EXPECT_MSG(rel > CHECK_E4M3_TOLERANCE || le > CHECK_E4M3_LSE_MAX || lr > CHECK_E4M3_LSE_RMS,
                   "%s: rel-L2 %.3g, LSE error %.3g (rms %.3g), all within the tolerance", names[plant], rel, le, lr);
    }
}

/* FlashAttention-3's accuracy experiment on the model (the GPU's is lab/fp8_run.sh's, into
 * results/<gpu>-fp8-accuracy.csv): sparse outliers, O's RMSE per tensor (no Hadamard), per block, per
 * block + Hadamard. What the paper found must hold for the whole pipeline, V and P in e4m3 too:
 * block + Hadamard below per tensor. */
static void accuracy_experiment_model(void)
{
    static const int dims[3] = {64, 128, 256};
    for (int di = 0; di < 3; di++) {
        attn_shape s = shape_of(1, 2, 2, 512, 512, dims[di], 0);
        double rmse[3], rel[3], le, lr;
        for (int m = 0; m < 3; m++)
            model_errors_q(&s, INPUT_SPARSE_OUTLIER, 11, PLANT_NONE, m == 0, m == 2, &rel[m], &le, &lr, &rmse[m]);
        printf("   note: model, sparse outliers, d = %d, N = M = 512: O's RMSE per tensor %.3e, block %.3e, "
               "block + Hadamard %.3e (rel-L2 %.3f, %.3f, %.3f)\n", dims[di], rmse[0], rmse[1], rmse[2], rel[0], rel[1],
               rel[2]);
        EXPECT_MSG(rmse[2] < rmse[0], "d = %d: block + Hadamard %.3e not below per tensor %.3e", dims[di], rmse[2],
                   rmse[0]);
    }
}

/* ---- 2b. the quantize kernels' split of the work -------------------------------------------- */

/* H D of a row as f8_quant_rows does it, DK / 8 threads of 8 columns (f8_had8, then f8_had_cross
 * with the values of the thread m away, as __shfl_xor_sync gives them, then 1 / sqrt(DK)), must
 * give hadamard_transform's bits (incoherent_forward of f8_row_transform), on rows with outliers,
 * zero padding from d to DK and signed zeros; and the word V's kernel writes from keys kb, kb + 1,
 * kb + 8, kb + 9 (f8_vt_word_key) must be slots 4q .. 4q + 3 of f8_vt_key. */
static void quantize_split_matches_host(void)
{
    int bad = 0, rows = 0;
    for (int dk = 64; dk <= 256; dk *= 2)
        for (int d = 8; d <= dk; d += 8)
            for (int t = 0; t < 4; t++) {
                float ref[256], e[32][8], snap[32][8], sg[32][8];
                const int L = dk / 8;
                for (int c = 0; c < dk; c++) {
                    double x = c < d ? rng_normal(808, (uint64_t)(dk * 1000 + d * 10 + t), (uint64_t)c) : 0.0;
                    if (c < d && c % 97 == t) x *= 10.0;                 /* an outlier */
                    ref[c] = (float)x;
                }
                for (int l = 0; l < L; l++)
                    for (int i = 0; i < 8; i++) {
                        e[l][i] = ref[8 * l + i];
                        sg[l][i] = hadamard_sign(F8_SEED, 8 * l + i);
                    }
                f8_row_transform(ref, d, dk, 1);
                for (int l = 0; l < L; l++) f8_had8(e[l], sg[l]);
                for (int m = 1; m < L; m *= 2) {
                    memcpy(snap, e, sizeof snap);
                    for (int l = 0; l < L; l++) f8_had_cross(e[l], snap[l ^ m], l & m);
                }
                const float rs = 1.0f / sqrtf((float)dk);
                for (int l = 0; l < L; l++)
                    for (int i = 0; i < 8; i++) bad += f32u(e[l][i] * rs) != f32u(ref[8 * l + i]);
                rows++;
            }
    EXPECT_MSG(bad == 0, "%d values of %d rows differ in their bits from the host's H D", bad, rows);
    for (int bc = F8_BC; bc <= F8_BC_WIDE; bc += F8_BC_WIDE - F8_BC) {   /* the tiles of 128 and 192 keys */
        int words = 0, hit[F8_BC_WIDE] = {0}, once = 0;
        for (int q = 0; q < bc / 4; q++) {
            const int kb = f8_vt_word_key(q);
            words += f8_vt_key(4 * q) == kb && f8_vt_key(4 * q + 1) == kb + 1 && f8_vt_key(4 * q + 2) == kb + 8 &&
                     f8_vt_key(4 * q + 3) == kb + 9;
            for (int b = 0; b < 4; b++) {
                const int key = kb + (b & 1) + 8 * (b >> 1);
                if (key >= 0 && key < bc) hit[key]++;
            }
        }
        for (int k = 0; k < bc; k++) once += hit[k] == 1;
        EXPECT_MSG(words == bc / 4 && once == bc, "tile of %d keys: %d of V's %d words per row hold the keys f8_vt_key "
                   "puts there, %d of its keys written once", bc, words, bc / 4, once);
    }
}

/* ---- 2c. the K/V tile per shape, and the transposed V tile in chunks ------------------------
 * f8_bc picks the tile (and so the scale block of K and V) that fp8.cuh's f8_pick runs; the
 * workspace follows it. The transposed V of a 192-key tile comes in three TMA boxes of 64 keys
 * (chunk ch at ch DV 64 bytes of the stage, row n of it at n 64); the k32 step kb of O += P V
 * starts at f8_v_step_at(kb) and reads, for row n, the 32 bytes from there plus n rowb (the
 * descriptor's rows: 8 rows a swizzle atom, SBO = 8 rowb). Modelled here before the swizzle (TMA
 * and wgmma apply the same one): every step must read keys 32 kb .. 32 kb + 31 of the tile, in
 * order, for every row, and never cross a chunk. */
static void k_v_tile_and_v_chunks(void)
{
    EXPECT(f8_bc(128, 3071) == 128 && f8_bc(128, 3072) == 192 && f8_bc(72, 100000) == 192 && f8_bc(96, 3000) == 128 &&
           f8_bc(64, 100000) == 128 && f8_bc(136, 100000) == 128 && f8_bc(256, 100000) == 128);
    const f8_ws_layout w = f8_ws_of(2, 4, 2, 100, 3300, 128);   /* 4 K/V planes, 3300 = 17 x 192 + 36 keys */
    EXPECT_MSG(w.bc == 192 && w.nk == 18 && w.total == w.vt8 + f8_align((size_t)4 * 128 * 18 * 192) &&
               f8_vt_at(w, 1, 2, 5) == ((size_t)128 + 2) * 18 * 192 + 5,
               "M = 3300, d = 128: tile %d keys, %d tiles, V transposed rows of nk bc bytes", w.bc, w.nk);
    EXPECT(f8_v_rowb(128) == 128 && f8_v_rowb(192) == 64);
    static int stage[256 * F8_BC_WIDE];
    for (int bc = F8_BC; bc <= F8_BC_WIDE; bc += F8_BC_WIDE - F8_BC)
        for (int dv = 64; dv <= 256; dv *= 2) {
            const int rowb = f8_v_rowb(bc);
            int bad = 0;
            for (int i = 0; i < dv * bc; i++) stage[i] = -1;
            for (int ch = 0; ch < bc / rowb; ch++)          /* f8_copy_kv: box ch, keys ch rowb .. of the tile */
                for (int n = 0; n < dv; n++)
                    for (int k = 0; k < rowb; k++) stage[ch * dv * rowb + n * rowb + k] = 1000 * n + ch * rowb + k;
            for (int kb = 0; kb < bc / 32; kb++) {
                const int a = f8_v_step_at(kb, bc, dv);
                bad += a % rowb + 32 > rowb;                 /* the step stays inside a row of its chunk */
                for (int n = 0; n < dv; n++)
                    for (int k = 0; k < 32; k++) bad += stage[a + n * rowb + k] != 1000 * n + 32 * kb + k;
            }
            EXPECT_MSG(bad == 0, "tile of %d keys, DV = %d: %d bytes of V's k32 steps not where their keys are", bc, dv, bad);
        }
}

const test_case TESTS_fp8_step[] = {
    {"fp8 step: P packed per thread and V's keys in f8_vt_key order give P V exactly (wgmma fragment model)",
     p_fragment_and_v_order},
    {"fp8 step: the quantize path (pad, Hadamard, block/tensor scales, V transposed) against float64",
     quantize_against_float64},
    {"fp8 step: the quantize kernels' split (H D over 8-column threads, V's words) gives the host's bits",
     quantize_split_matches_host},
    {"fp8 step: the K/V tile per shape (f8_bc) and V's k32 steps in chunks of the transposed tile",
     k_v_tile_and_v_chunks},
    {"fp8 step: 07g's arithmetic on the host within half the FP8 tolerance; planted mistakes fail it",
     tolerance_from_error_model},
    {"fp8 step: on sparse outliers, block scales + Hadamard give O a lower RMSE than per-tensor (model)",
     accuracy_experiment_model},
    {NULL, NULL},
};
