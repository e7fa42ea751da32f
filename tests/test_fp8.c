/* float8 e4m3 of common/fp8.cuh against CUDA's own host conversion (cuda_fp8.h, plain C on the
 * CPU): all 256 codes, every midpoint between neighbouring codes, subnormals, values past 448, a
 * sweep of random floats; the block scale; and a small simulation of the accuracy argument of issue
 * 24 (FP8 per tensor, per block, per block after the Hadamard map of common/hadamard.cuh). */
#include <cuda_fp8.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include "test.h"
#include "../common/fp8.cuh"
#include "../common/hadamard.cuh"
#include "../common/half.h"
#include "../common/harness.h"

/* CUDA's encoder and decoder: what the hardware's cvt.rn.satfinite computes, done on the host. */
static uint8_t cuda_encode(float x) { return (uint8_t)__nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3); }
static float cuda_decode(uint8_t c) { return f16_to_f32(__nv_cvt_fp8_to_halfraw(c, __NV_E4M3).x); }

#define EXPECT_CODE(x, want)                                                                \
    do {                                                                                    \
        float x_ = (x);                                                                     \
        unsigned g_ = fp8_e4m3_encode(x_), c_ = cuda_encode(x_), w_ = (want);               \
        EXPECT_MSG(g_ == w_ && c_ == w_, "encode(%.9g) = 0x%02x, CUDA 0x%02x, expected 0x%02x", \
                   (double)x_, g_, c_, w_);                                                 \
    } while (0)

/* Each code decodes to CUDA's value (NaN to NaN), and the values follow from the format alone. */
static void decode_all_codes(void)
{
    int bad = 0;
    for (int c = 0; c < 256; c++) {
        float f = fp8_e4m3_decode((uint8_t)c), g = cuda_decode((uint8_t)c);
        int nan_code = (c & 0x7f) == 0x7f;
        if (nan_code ? !(isnan(f) && isnan(g)) : f != g) {
            if (!bad) EXPECT_MSG(0, "decode(0x%02x) = %.9g, CUDA %.9g", c, f, g);
            bad++;
        }
    }
    EXPECT_MSG(bad == 0, "%d of 256 codes decode unlike CUDA", bad);
    EXPECT(fp8_e4m3_decode(0x7e) == FP8_E4M3_MAX && FP8_E4M3_MAX == 448.0f);
    EXPECT(fp8_e4m3_decode(0x38) == 1.0f);                  /* exponent 7 = bias, mantissa 0 */
    EXPECT(fp8_e4m3_decode(0x08) == ldexpf(1.0f, -6));     /* smallest normal */
    EXPECT(fp8_e4m3_decode(0x07) == ldexpf(7.0f, -9));     /* largest subnormal */
    EXPECT(fp8_e4m3_decode(0x01) == ldexpf(1.0f, -9));     /* smallest subnormal */
    EXPECT(fp8_e4m3_decode(0x78) == 256.0f && fp8_e4m3_decode(0xfe) == -448.0f);
    float nz = fp8_e4m3_decode(0x80);
    EXPECT(nz == 0.0f && signbit(nz));
}

/* encode(decode(c)) = c for every non-NaN code, and the positive codes are increasing. */
static void round_trip_and_monotone(void)
{
    int bad = 0;
    for (int c = 0; c < 256; c++) {
        if ((c & 0x7f) == 0x7f) continue;
        float f = fp8_e4m3_decode((uint8_t)c);
        if (fp8_e4m3_encode(f) != c || cuda_encode(f) != c) bad++;
        if ((c & 0x7f) > 0 && c < 0x80 && !(f > fp8_e4m3_decode((uint8_t)(c - 1)))) bad++;
    }
    EXPECT_MSG(bad == 0, "%d codes do not round-trip or are out of order", bad);
}

/* Between neighbouring codes a < b: the midpoint goes to the even code, just below it to a, just
 * above it to b, both signs -- subnormals and normals alike (the midpoints are exact floats). */
static void ties_to_even_everywhere(void)
{
    int bad = 0;
    for (int c = 0; c < 0x7e; c++) {
        float a = fp8_e4m3_decode((uint8_t)c), b = fp8_e4m3_decode((uint8_t)(c + 1));
        float mid = 0.5f * (a + b);
        int even = (c & 1) ? c + 1 : c;
        for (int s = 0; s < 2; s++) {
            float sg = s ? -1.0f : 1.0f;
            int sb = s ? 0x80 : 0;
            const float xs[3] = {sg * mid, sg * nextafterf(mid, 0.0f), sg * nextafterf(mid, INFINITY)};
            const int want[3] = {even | sb, c | sb, (c + 1) | sb};
            for (int t = 0; t < 3; t++)
                if (fp8_e4m3_encode(xs[t]) != want[t] || cuda_encode(xs[t]) != want[t]) {
                    if (!bad) EXPECT_MSG(0, "encode(%.9g) = 0x%02x, CUDA 0x%02x, expected 0x%02x",
                                         (double)xs[t], fp8_e4m3_encode(xs[t]), cuda_encode(xs[t]), want[t]);
                    bad++;
                }
        }
    }
    EXPECT_MSG(bad == 0, "%d roundings wrong", bad);
}

static void subnormals_and_zero(void)
{
    EXPECT_CODE(0.0f, 0x00);
    EXPECT_CODE(-0.0f, 0x80);
    EXPECT_CODE(ldexpf(1.0f, -9), 0x01);
    EXPECT_CODE(ldexpf(1.0f, -10), 0x00);                   /* tie between 0 and 2^-9: 0 is even */
    EXPECT_CODE(-ldexpf(1.0f, -10), 0x80);
    EXPECT_CODE(nextafterf(ldexpf(1.0f, -10), 1.0f), 0x01);
    EXPECT_CODE(ldexpf(3.0f, -10), 0x02);                   /* tie between 1 and 2 (x 2^-9): 2 */
    EXPECT_CODE(ldexpf(5.0f, -10), 0x02);                   /* tie between 2 and 3: 2 */
    EXPECT_CODE(ldexpf(15.0f, -10), 0x08);                  /* tie 7 / 8: up into the normals */
    EXPECT_CODE(ldexpf(1.0f, -20), 0x00);                   /* underflows */
    EXPECT_CODE(1e-40f, 0x00);                              /* a float subnormal */
    EXPECT_CODE(-1e-40f, 0x80);
}

static void saturation_and_nan(void)
{
    EXPECT_CODE(448.0f, 0x7e);
    EXPECT_CODE(447.0f, 0x7e);
    EXPECT_CODE(432.0f, 0x7e);                    /* tie between 416 (0x7d) and 448 (0x7e, even) */
    EXPECT_CODE(nextafterf(432.0f, 0.0f), 0x7d);
    EXPECT_CODE(464.0f, 0x7e);                    /* tie 448 / (480, which would be 0x7f): 448 */
    EXPECT_CODE(nextafterf(464.0f, INFINITY), 0x7e);   /* nearer 480: saturated, not NaN */
    EXPECT_CODE(500.0f, 0x7e);
    EXPECT_CODE(1e30f, 0x7e);
    EXPECT_CODE(-1e30f, 0xfe);
    EXPECT_CODE(INFINITY, 0x7e);
    EXPECT_CODE(-INFINITY, 0xfe);
    EXPECT_CODE(NAN, 0x7f);
    EXPECT_CODE(-NAN, 0x7f);                      /* the one NaN code, whatever the sign */
    EXPECT_CODE(1.0f, 0x38);
    EXPECT_CODE(-2.0f, 0xc0);
    EXPECT_CODE(0.1f, 0x1d);                      /* 0.1015625 = 1.625 * 2^-4 */
    EXPECT_CODE(3.14159265f, 0x45);               /* 3.25 = 1.625 * 2^1 (3.0 is further) */
}

/* Random floats: every bit pattern class (random 32-bit words: all exponents, NaNs, infinities),
 * and values spread over the format's range (uniform exponent in [-12, 10]). */
static void random_floats_match_cuda(void)
{
    rng_stream r = {24, 1, 0};
    int bad = 0;
    for (int i = 0; i < 1000000; i++) {
        uint32_t w = (uint32_t)rng_next(&r);
        float x = (i & 1) ? fp8_bits_f32(w)
                          : ldexpf(1.0f + (float)(w >> 9) * (1.0f / 8388608.0f), (int)(w % 23) - 12)
                                * ((w & 0x100u) ? -1.0f : 1.0f);
        if (fp8_e4m3_encode(x) != cuda_encode(x)) {
            if (!bad) EXPECT_MSG(0, "encode(%.9g = 0x%08x) = 0x%02x, CUDA 0x%02x", (double)x,
                                 fp8_f32_bits(x), fp8_e4m3_encode(x), cuda_encode(x));
            bad++;
        }
    }
    EXPECT_MSG(bad == 0, "%d of 1000000 random floats encode unlike CUDA", bad);
}

/* The packed pair: lo in the low byte, as CUDA's float2 -> fp8x2 puts x.x. */
static void pair_order(void)
{
    float2 v = {1.0f, -2.0f};
    EXPECT(fp8_e4m3x2_encode(1.0f, -2.0f) == 0xc038);
    EXPECT(fp8_e4m3x2_encode(1.0f, -2.0f) == __nv_cvt_float2_to_fp8x2(v, __NV_SATFINITE, __NV_E4M3));
}

/* A block's largest |x| lands on +-448 (code 0x7e / 0xfe) for any amax; an all-zero block gets a
 * scale of 1 and stays zero. */
static void block_scale(void)
{
    EXPECT(fp8_e4m3_scale(448.0f) == 1.0f);
    EXPECT(fp8_e4m3_scale(0.0f) == 1.0f);
    EXPECT(fp8_e4m3_encode(0.0f / fp8_e4m3_scale(0.0f)) == 0x00);
    rng_stream r = {24, 2, 0};
    int bad = 0;
    for (int i = 0; i < 100000; i++) {
        float amax = ldexpf(1.0f + (float)(rng_next(&r) >> 41) * (1.0f / 8388608.0f),
                            (int)(rng_next(&r) % 60) - 30);
        float s = fp8_e4m3_scale(amax);
        if (fp8_e4m3_encode(amax / s) != 0x7e || fp8_e4m3_encode(-amax / s) != 0xfe) bad++;
        if (fabsf(fp8_e4m3_decode(0x7e) * s - amax) > 1e-6f * amax) bad++;
    }
    EXPECT_MSG(bad == 0, "%d of 100000 amax values not mapped onto 448", bad);
}

/* ---- the accuracy argument of issue 24, simulated on the host ---------------------------------
 * FA3's experiment, one head at a time: N = M = 512, d = 128, Q, K and V from N(0, 1) with 0.1% of
 * the entries from N(0, 10) (standard deviation 10). Q and K in e4m3 three ways:
 *   tensor:  one scale for all of Q, one for all of K;
 *   block:   one scale per block of 64 rows (FA3's tile of Q rows, of K keys);
 *   block+H: the same after every row of Q and K went through H D (common/hadamard.cuh).
 * Everything else in float64 (products, sums, softmax, V, P), so that only the quantization of Q
 * and K is measured: S = Q K^T / sqrt(d) and O = softmax(S) V against float64 on the float inputs,
 * RMSE pooled over 4 heads.
 *
 * What it shows (and what the test asserts, with a margin over what 9 seeds gave):
 * - S's RMSE is the same three ways (within 2% on every seed; asserted: within 5%). e4m3 is a
 *   floating format: each entry is rounded to within 2^-4 of itself wherever the scale puts it, as
 *   long as it stays in the format's range -- and outliers of 10x are far inside a range of
 *   448 / 2^-9 ~ 2^18. The error of a dot product sum_c q_c k_c is then about sum_c (e_c q_c k_c)
 *   with independent relative errors e_c: its mean square, E[e^2] sum_c q_c^2 k_c^2, is on average
 *   the same after an orthogonal map. (Scales matter when outliers are so large that the small
 *   entries fall below 2^-6 into the subnormals: then a per-tensor scale loses them.)
 * - O's RMSE falls with the Hadamard map (to 0.50-0.67 of per tensor on every seed; asserted:
 *   below 0.85 of it). Without it, the large errors sit where an outlier of q meets
 *   a large entry of k: on the largest logits, which the softmax weighs most. After it, every
 *   logit of a row pair carries an error of about the same size, e |q| |k| / sqrt(d), whatever
 *   the logit's value, so the errors on the logits that matter shrink. */
enum { SIM_N = 512, SIM_D = 128, SIM_BLOCK = 64, SIM_HEADS = 4 };

static void sim_fill(float *x, int head, uint64_t stream)
{
    for (int i = 0; i < SIM_N * SIM_D; i++) {
        uint64_t at = (uint64_t)head * SIM_N * SIM_D + (uint64_t)i;
        int outlier = rng_uniform(24, stream + 1, at) < 0.001;
        x[i] = (float)((outlier ? 10.0 : 1.0) * rng_normal(24, stream, at));
    }
}

/* x (SIM_N rows) -> decoded e4m3 values times their block's scale, blocks of `rows` rows. */
static void sim_quantize(const float *x, int rows, double *out)
{
    for (int b = 0; b < SIM_N; b += rows) {
        float amax = 0.0f;
        for (int i = b * SIM_D; i < (b + rows) * SIM_D; i++) amax = fmaxf(amax, fabsf(x[i]));
        float s = fp8_e4m3_scale(amax);
        for (int i = b * SIM_D; i < (b + rows) * SIM_D; i++)
            out[i] = (double)fp8_e4m3_decode(fp8_e4m3_encode(x[i] / s)) * s;
    }
}

/* S = q k^T / sqrt(d), then O = softmax(S) v, all in float64. */
static void sim_attention(const double *q, const double *k, const double *v, double *S, double *O)
{
#pragma omp parallel for
    for (int i = 0; i < SIM_N; i++) {
        double *s = S + (size_t)i * SIM_N, m = -INFINITY, l = 0;
        for (int j = 0; j < SIM_N; j++) {
            double acc = 0;
            for (int c = 0; c < SIM_D; c++) acc += q[i * SIM_D + c] * k[j * SIM_D + c];
            s[j] = acc / sqrt((double)SIM_D);
            m = fmax(m, s[j]);
        }
        for (int c = 0; c < SIM_D; c++) O[i * SIM_D + c] = 0;
        for (int j = 0; j < SIM_N; j++) {
            double p = exp(s[j] - m);
            l += p;
            for (int c = 0; c < SIM_D; c++) O[i * SIM_D + c] += p * v[j * SIM_D + c];
        }
        for (int c = 0; c < SIM_D; c++) O[i * SIM_D + c] /= l;
    }
}

static double sq_err(const double *a, const double *b, size_t n)
{
    double se = 0;
    for (size_t i = 0; i < n; i++) se += (a[i] - b[i]) * (a[i] - b[i]);
    return se;
}

static void fp8_accuracy_simulation(void)
{
    size_t n = (size_t)SIM_N * SIM_D, nn = (size_t)SIM_N * SIM_N;
    float *q = malloc(n * sizeof *q), *k = malloc(n * sizeof *k), *v = malloc(n * sizeof *v);
    double *q64 = malloc(n * sizeof *q64), *k64 = malloc(n * sizeof *k64), *v64 = malloc(n * sizeof *v64);
    double *qh = malloc(n * sizeof *qh), *kh = malloc(n * sizeof *kh);
    double *S = malloc(nn * sizeof *S), *Sref = malloc(nn * sizeof *Sref);
    double *O = malloc(n * sizeof *O), *Oref = malloc(n * sizeof *Oref);
    double se_s[3] = {0, 0, 0}, se_o[3] = {0, 0, 0};
    if (!q || !k || !v || !q64 || !k64 || !v64 || !qh || !kh || !S || !Sref || !O || !Oref) {
        EXPECT_MSG(0, "out of memory");
        goto out;
    }
    for (int h = 0; h < SIM_HEADS; h++) {
        sim_fill(q, h, 10);
        sim_fill(k, h, 20);
        sim_fill(v, h, 30);
        for (size_t i = 0; i < n; i++) { q64[i] = q[i]; k64[i] = k[i]; v64[i] = v[i]; }
        sim_attention(q64, k64, v64, Sref, Oref);
        for (int method = 0; method < 3; method++) {
            if (method == 2)      /* the rotated rows against the unrotated reference: S is the same */
                for (int i = 0; i < SIM_N; i++) {
                    incoherent_forward(q + i * SIM_D, SIM_D, 7);
                    incoherent_forward(k + i * SIM_D, SIM_D, 7);
                }
            int rows = method == 0 ? SIM_N : SIM_BLOCK;
            sim_quantize(q, rows, qh);
            sim_quantize(k, rows, kh);
            sim_attention(qh, kh, v64, S, O);
            se_s[method] += sq_err(S, Sref, nn);
            se_o[method] += sq_err(O, Oref, n);
        }
    }
    double rs[3], ro[3];
    for (int m = 0; m < 3; m++) {
        rs[m] = sqrt(se_s[m] / ((double)SIM_HEADS * nn));
        ro[m] = sqrt(se_o[m] / ((double)SIM_HEADS * n));
    }
    printf("   note: e4m3 Q and K (N = M = %d, d = %d, %d heads, 0.1%% outliers of sigma 10), RMSE\n"
           "         per tensor / per block of %d rows / block + Hadamard:\n"
           "         S = QK^T/sqrt(d): %.3e / %.3e / %.3e;  O: %.3e / %.3e / %.3e\n",
           SIM_N, SIM_D, SIM_HEADS, SIM_BLOCK, rs[0], rs[1], rs[2], ro[0], ro[1], ro[2]);
    EXPECT_MSG(fabs(rs[1] / rs[0] - 1) < 0.05 && fabs(rs[2] / rs[0] - 1) < 0.05,
               "S's RMSE per block %.3e, block + Hadamard %.3e: not within 5%% of per tensor %.3e",
               rs[1], rs[2], rs[0]);
    EXPECT_MSG(ro[2] < 0.85 * ro[0], "O's RMSE block + Hadamard %.3e, not below 0.85 x per tensor %.3e",
               ro[2], ro[0]);
out:
    free(q); free(k); free(v); free(q64); free(k64); free(v64); free(qh); free(kh);
    free(S); free(Sref); free(O); free(Oref);
}

const test_case TESTS_fp8[] = {
    {"fp8: e4m3 decode of all 256 codes equals CUDA's (known values, NaN, -0)", decode_all_codes},
    {"fp8: e4m3 encode(decode(c)) = c for every code; values increase with the code", round_trip_and_monotone},
    {"fp8: e4m3 encode rounds to nearest even at every midpoint, as CUDA does", ties_to_even_everywhere},
    {"fp8: e4m3 subnormals, ties at 2^-10, underflow, -0", subnormals_and_zero},
    {"fp8: e4m3 saturates past 448 (and inf) to +-448; NaN -> 0x7f", saturation_and_nan},
    {"fp8: e4m3 encode equals CUDA's on 10^6 random floats", random_floats_match_cuda},
    {"fp8: e4m3x2 packs lo in the low byte, as CUDA's float2 conversion", pair_order},
    {"fp8: a block's scale maps its amax onto 448; amax = 0 gives scale 1", block_scale},
    {"fp8: simulated e4m3 Q, K: S error alike 3 ways; O error lower with Hadamard", fp8_accuracy_simulation},
    {NULL, NULL},
};
