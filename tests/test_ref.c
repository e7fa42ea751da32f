/* The float64 reference (ref.c) on cases small enough to do by hand, the causal alignment and the
 * FLOP/byte counts of attn.h, and the seeded inputs (inputs.c). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "test.h"
#include "../common/harness.h"
#include "../common/half.h"

attn_shape test_shape(int B, int Hq, int Hkv, int N, int M, int d, int causal, float scale)
{
    attn_shape s;
    memset(&s, 0, sizeof s);
    s.B = B; s.Hq = Hq; s.Hkv = Hkv; s.N = N; s.M = M; s.d = d;
    s.causal = causal;
    s.scale = scale;
    s.dtype = ATTN_F16;
    return s;
}

static void to_f16(uint16_t *dst, const float *src, int n)
{
    for (int i = 0; i < n; i++) dst[i] = f32_to_f16(src[i]);
}

/* ------------------------------------------------------------------ ref_row, worked by hand */

/* d = 1, M = 2, scale 1: q = 1, k = (0, 1), v = (1, 3). Scores 0 and 1, weights 1/(1+e), e/(1+e):
 * O = (1 + 3e)/(1 + e) = 2.4621171573, LSE = log(1 + e) = 1.3132616875. */
static void ref_d1_m2(void)
{
    attn_shape s = test_shape(1, 1, 1, 1, 2, 1, 0, 1.0f);
    const float qf[] = {1}, kf[] = {0, 1}, vf[] = {1, 3};
    uint16_t q[1], k[2], v[2];
    to_f16(q, qf, 1); to_f16(k, kf, 2); to_f16(v, vf, 2);
    double out[1], scratch[2];
    double lse = ref_row(&s, q, k, v, 0, 0, 0, out, scratch);
    EXPECT_NEAR(out[0], 2.4621171572600096, 1e-12);
    EXPECT_NEAR(lse, 1.3132616875182228, 1e-12);

    /* the same numbers from bfloat16 storage (1, 0, 1, 3 are exact there too) */
    s.dtype = ATTN_BF16;
    for (int i = 0; i < 2; i++) { k[i] = f32_to_bf16(kf[i]); v[i] = f32_to_bf16(vf[i]); }
    q[0] = f32_to_bf16(1.0f);
    lse = ref_row(&s, q, k, v, 0, 0, 0, out, scratch);
    EXPECT_NEAR(out[0], 2.4621171572600096, 1e-12);
    EXPECT_NEAR(lse, 1.3132616875182228, 1e-12);
}

/* d = 2, M = 3, scale 0.5: q0 = (1, 2); k = (1,0), (0,1), (1,1) -> q.k = 1, 2, 3 -> scores 0.5, 1, 1.5.
 * Z = e^0.5 + e + e^1.5 = 8.8486..., weights w = (0.18632, 0.30720, 0.50648).
 * v = (1,0), (0,1), (2,-1): O = (w0 + 2 w2, w1 - w2) = (1.19928451, -0.19928451), LSE = log Z.
 * Row 1 has q1 = (0, 0): all scores 0, O = mean of v = (1, 0), LSE = log 3. */
static const float D2_Q[] = {1, 2, 0, 0};
static const float D2_K[] = {1, 0, 0, 1, 1, 1};
static const float D2_V[] = {1, 0, 0, 1, 2, -1};

static void ref_d2_m3(void)
{
    attn_shape s = test_shape(1, 1, 1, 2, 3, 2, 0, 0.5f);
    uint16_t q[4], k[6], v[6];
    to_f16(q, D2_Q, 4); to_f16(k, D2_K, 6); to_f16(v, D2_V, 6);
    double out[2], scratch[3];
    double lse = ref_row(&s, q, k, v, 0, 0, 0, out, scratch);
    EXPECT_NEAR(out[0], 1.1992845053371557, 1e-12);
    EXPECT_NEAR(out[1], -0.19928450533715558, 1e-12);
    EXPECT_NEAR(lse, 2.1802696706417346, 1e-12);

    lse = ref_row(&s, q, k, v, 0, 0, 1, out, scratch);
    EXPECT_NEAR(out[0], 1.0, 1e-12);
    EXPECT_NEAR(out[1], 0.0, 1e-12);
    EXPECT_NEAR(lse, 1.0986122886681098, 1e-12);

    /* the scale enters the LSE: with scale 1 the scores double */
    s.scale = 1.0f;
    lse = ref_row(&s, q, k, v, 0, 0, 0, out, scratch);
    EXPECT_NEAR(lse, log(exp(1.0) + exp(2.0) + exp(3.0)), 1e-12);
}

/* Causal, N = M = 3, every query (1, 2): row 0 sees key 0 only (O = v0, LSE = 0.5); row 1 sees keys
 * 0, 1 (weights 1-sigmoid(0.5), sigmoid(0.5)); row 2 sees all three (the d2 case above). */
static void ref_causal_square(void)
{
    attn_shape s = test_shape(1, 1, 1, 3, 3, 2, 1, 0.5f);
    const float qf[] = {1, 2, 1, 2, 1, 2};
    uint16_t q[6], k[6], v[6];
    to_f16(q, qf, 6); to_f16(k, D2_K, 6); to_f16(v, D2_V, 6);
    double out[2], scratch[3];
    double lse = ref_row(&s, q, k, v, 0, 0, 0, out, scratch);
    EXPECT_NEAR(out[0], 1.0, 1e-12);
    EXPECT_NEAR(out[1], 0.0, 1e-12);
    EXPECT_NEAR(lse, 0.5, 1e-12);
    lse = ref_row(&s, q, k, v, 0, 0, 1, out, scratch);
    EXPECT_NEAR(out[0], 0.3775406687981454, 1e-12);
    EXPECT_NEAR(out[1], 0.6224593312018546, 1e-12);
    EXPECT_NEAR(lse, 1.4740769841801067, 1e-12);
    lse = ref_row(&s, q, k, v, 0, 0, 2, out, scratch);
    EXPECT_NEAR(out[0], 1.1992845053371557, 1e-12);
    EXPECT_NEAR(lse, 2.1802696706417346, 1e-12);
}

/* Causal, N = 3 > M = 1: rows 0 and 1 see no key -> O = 0 (overwriting whatever was there) and
 * LSE = -inf; row 2 sees key 0 -> O = v0, LSE = scale * q.k0. */
static void ref_fully_masked_row(void)
{
    attn_shape s = test_shape(1, 1, 1, 3, 1, 2, 1, 0.5f);
    const float qf[] = {1, 2, 1, 2, 3, 4}, kf[] = {1, 1}, vf[] = {5, -6};
    uint16_t q[6], k[2], v[2];
    to_f16(q, qf, 6); to_f16(k, kf, 2); to_f16(v, vf, 2);
    double out[2], scratch[1];
    for (int i = 0; i < 2; i++) {
        out[0] = out[1] = 99.0;
        double lse = ref_row(&s, q, k, v, 0, 0, i, out, scratch);
        EXPECT_MSG(isinf(lse) && lse < 0, "row %d: LSE = %g, expected -inf", i, lse);
        EXPECT_MSG(out[0] == 0.0 && out[1] == 0.0, "row %d: O = (%g, %g), expected 0", i, out[0], out[1]);
    }
    double lse = ref_row(&s, q, k, v, 0, 0, 2, out, scratch);
    EXPECT_NEAR(out[0], 5.0, 1e-12);
    EXPECT_NEAR(out[1], -6.0, 1e-12);
    EXPECT_NEAR(lse, 3.5, 1e-12);   /* 0.5 * (3 + 4) */
}

/* GQA, B = 2, Hq = 4, Hkv = 2: heads 0, 1 read KV head 0 and heads 2, 3 read KV head 1 (h / 2; a
 * wrong h % 2 would swap heads 1 and 2). Every query is (1, 0); in (b, g), k_j = ((g+1) j, 0), so
 * the scores are 0 and g+1; v_0 = (0, 10b+g), v_1 = (1, 10b+g). Then O = (sigmoid(g+1), 10b+g)
 * names the KV head read, and LSE = log(1 + e^(g+1)). */
static void ref_gqa_mapping(void)
{
    attn_shape s = test_shape(2, 4, 2, 1, 2, 2, 0, 1.0f);
    float qf[2 * 4 * 2], kf[2 * 2 * 2 * 2], vf[2 * 2 * 2 * 2];
    for (int r = 0; r < 8; r++) { qf[2 * r] = 1; qf[2 * r + 1] = 0; }
    for (int b = 0; b < 2; b++)
        for (int g = 0; g < 2; g++)
            for (int j = 0; j < 2; j++) {
                int at = ((b * 2 + g) * 2 + j) * 2;
                kf[at] = (float)((g + 1) * j); kf[at + 1] = 0;
                vf[at] = (float)j;             vf[at + 1] = (float)(10 * b + g);
            }
    uint16_t q[16], k[16], v[16];
    to_f16(q, qf, 16); to_f16(k, kf, 16); to_f16(v, vf, 16);
    const double sig[2] = {0.7310585786300049, 0.8807970779778823};
    const double lse_g[2] = {1.3132616875182228, 2.1269280110429727};
    double out[2], scratch[2];
    for (int b = 0; b < 2; b++)
        for (int h = 0; h < 4; h++) {
            int g = h / 2;
            double lse = ref_row(&s, q, k, v, b, h, 0, out, scratch);
            EXPECT_MSG(fabs(out[1] - (10 * b + g)) < 1e-12, "b=%d h=%d read KV (b,g) = %.15g, expected %d",
                       b, h, out[1], 10 * b + g);
            EXPECT_NEAR(out[0], sig[g], 1e-12);
            EXPECT_NEAR(lse, lse_g[g], 1e-12);
        }
    /* MQA: Hkv = 1, every head reads KV head 0 */
    s.Hkv = 1;
    s.B = 1;
    double lse = ref_row(&s, q, k, v, 0, 3, 0, out, scratch);
    EXPECT_NEAR(out[1], 0.0, 1e-12);
    EXPECT_NEAR(lse, lse_g[0], 1e-12);
}

/* Varlen: seqlens {1, 3, 2} with M = 3. Request 0 sees key 0 only even though K holds 3 rows;
 * request b's K and V start at row b*M of the buffer whatever the lengths before it; keys past a
 * request's length hold 100s that would show if they were read. */
static void ref_seqlens(void)
{
    int lens[3] = {1, 3, 2};
    attn_shape s = test_shape(3, 1, 1, 1, 3, 2, 0, 0.5f);
    s.seqlens_k = lens;
    float qf[6] = {1, 2, 1, 2, 1, 2}, kf[18], vf[18];
    for (int b = 0; b < 3; b++) {
        memcpy(kf + 6 * b, D2_K, sizeof D2_K);
        memcpy(vf + 6 * b, D2_V, sizeof D2_V);
        for (int j = lens[b]; j < 3; j++) {
            kf[6 * b + 2 * j] = kf[6 * b + 2 * j + 1] = 100;
            vf[6 * b + 2 * j] = 100; vf[6 * b + 2 * j + 1] = -100;
        }
    }
    uint16_t q[6], k[18], v[18];
    to_f16(q, qf, 6); to_f16(k, kf, 18); to_f16(v, vf, 18);
    double out[2], scratch[3];
    double lse = ref_row(&s, q, k, v, 0, 0, 0, out, scratch);       /* key 0 only */
    EXPECT_NEAR(out[0], 1.0, 1e-12);
    EXPECT_NEAR(out[1], 0.0, 1e-12);
    EXPECT_NEAR(lse, 0.5, 1e-12);
    lse = ref_row(&s, q, k, v, 1, 0, 0, out, scratch);              /* all three: the d2 case */
    EXPECT_NEAR(out[0], 1.1992845053371557, 1e-12);
    EXPECT_NEAR(lse, 2.1802696706417346, 1e-12);
    lse = ref_row(&s, q, k, v, 2, 0, 0, out, scratch);              /* keys 0, 1 */
    EXPECT_NEAR(out[0], 0.3775406687981454, 1e-12);
    EXPECT_NEAR(out[1], 0.6224593312018546, 1e-12);
    EXPECT_NEAR(lse, 1.4740769841801067, 1e-12);
    /* causal with N = 1: the one query sees every key of its request */
    s.causal = 1;
    lse = ref_row(&s, q, k, v, 0, 0, 0, out, scratch);
    EXPECT_NEAR(lse, 0.5, 1e-12);
    lse = ref_row(&s, q, k, v, 2, 0, 0, out, scratch);
    EXPECT_NEAR(lse, 1.4740769841801067, 1e-12);
}

/* ref_row against an independent direct evaluation on a random GQA shape, every row, both masks:
 * catches indexing mistakes (strides of b, h, i, d) that the one-head cases above cannot. */
static void ref_matches_direct(void)
{
    for (int causal = 0; causal < 2; causal++) {
        attn_shape s = test_shape(2, 6, 2, 5, 7, 3, causal, 0.4f);
        size_t nq = attn_q_elems(&s), nkv = attn_kv_elems(&s);
        uint16_t *q = malloc(nq * 2), *k = malloc(nkv * 2), *v = malloc(nkv * 2);
        make_inputs(&s, 5, INPUT_NORMAL, q, k, v);
        double out[3], scratch[7], worst = 0.0;
        for (int b = 0; b < 2; b++)
            for (int h = 0; h < 6; h++)
                for (int i = 0; i < 5; i++) {
                    int kvh = h / 3, vis = causal ? i + 2 + 1 : 7;   /* j <= i + (M - N) */
                    double p[7], z = 0.0, o[3] = {0, 0, 0};
                    for (int j = 0; j < vis; j++) {
                        double dot = 0.0;
                        for (int c = 0; c < 3; c++)
                            dot += f16_to_f32(q[((b * 6 + h) * 5 + i) * 3 + c]) *
                                   (double)f16_to_f32(k[((b * 2 + kvh) * 7 + j) * 3 + c]);
                        p[j] = exp(0.4f * dot);
                        z += p[j];
                    }
                    for (int j = 0; j < vis; j++)
                        for (int c = 0; c < 3; c++)
                            o[c] += p[j] / z * f16_to_f32(v[((b * 2 + kvh) * 7 + j) * 3 + c]);
                    double lse = ref_row(&s, q, k, v, b, h, i, out, scratch);
                    for (int c = 0; c < 3; c++) worst = fmax(worst, fabs(out[c] - o[c]));
                    worst = fmax(worst, fabs(lse - log(z)));
                }
        EXPECT_MSG(worst < 1e-9, "causal=%d: ref_row differs from the direct sum by %g", causal, worst);
        free(q); free(k); free(v);
    }
}

/* ------------------------------------------------------------------ masks and counts (attn.h) */

static void causal_alignment(void)
{
    attn_shape s = test_shape(1, 1, 1, 3, 5, 8, 1, 1.0f);     /* N < M: row 0 sees keys 0..2 */
    const int lt[3] = {3, 4, 5};
    for (int i = 0; i < 3; i++) EXPECT_MSG(attn_row_end(&s, i, 5) == lt[i], "N=3 M=5 row %d: %d", i, attn_row_end(&s, i, 5));

    s.N = s.M = 4;                                       /* N = M: the usual triangle */
    for (int i = 0; i < 4; i++) EXPECT(attn_row_end(&s, i, 4) == i + 1);

    s.N = 5; s.M = 3;                                    /* N > M: rows 0, 1 see nothing */
    const int gt[5] = {0, 0, 1, 2, 3};
    for (int i = 0; i < 5; i++) EXPECT_MSG(attn_row_end(&s, i, 3) == gt[i], "N=5 M=3 row %d: %d", i, attn_row_end(&s, i, 3));

    s.N = 1;                                             /* decode: one query sees every key */
    EXPECT(attn_row_end(&s, 0, 3) == 3);
    EXPECT(attn_row_end(&s, 0, 1000) == 1000);

    s.N = 4;                                             /* per-request KV length mk, N = 4 */
    EXPECT(attn_row_end(&s, 0, 2) == 0);
    EXPECT(attn_row_end(&s, 3, 2) == 2);
    EXPECT(attn_row_end(&s, 3, 10) == 10);

    s.causal = 0;                                        /* non-causal: every key */
    for (int i = 0; i < 5; i++) EXPECT(attn_row_end(&s, i, 7) == 7);
    EXPECT(attn_row_end(&s, 0, 1) == 1);
}

static void flops_and_bytes(void)
{
    /* causal B=1 Hq=2 N=3 M=5 d=4: rows see 3 + 4 + 5 = 12 keys; FLOPs 4 * 2 * 4 * 12 = 384 */
    attn_shape s = test_shape(1, 2, 1, 3, 5, 4, 1, 0.5f);
    EXPECT_NEAR(attn_visible_pairs(&s), 12.0, 0);
    EXPECT_NEAR(attn_flops(&s), 384.0, 0);
    s.causal = 0;                                        /* 3 * 5 = 15 pairs, 480 FLOPs */
    EXPECT_NEAR(attn_visible_pairs(&s), 15.0, 0);
    EXPECT_NEAR(attn_flops(&s), 480.0, 0);

    /* causal N=5 M=3: 0 + 0 + 1 + 2 + 3 = 6 */
    attn_shape t = test_shape(1, 1, 1, 5, 3, 2, 1, 1.0f);
    EXPECT_NEAR(attn_visible_pairs(&t), 6.0, 0);
    EXPECT_NEAR(attn_flops(&t), 4.0 * 1 * 2 * 6, 0);

    /* varlen causal B=2 N=3, lengths {5, 2}: 12 + (0 + 1 + 2) = 15 */
    int lens[2] = {5, 2};
    attn_shape u = test_shape(2, 1, 1, 3, 5, 2, 1, 1.0f);
    u.seqlens_k = lens;
    EXPECT_NEAR(attn_visible_pairs(&u), 15.0, 0);
    EXPECT(attn_kv_len(&u, 1) == 2);
    u.causal = 0;                                        /* 3*5 + 3*2 = 21 */
    EXPECT_NEAR(attn_visible_pairs(&u), 21.0, 0);

    /* the closed form (no loop over rows) equals the row-by-row sum of attn_row_end */
    for (int n = 1; n <= 24; n++)
        for (int m = 1; m <= 24; m++) {
            attn_shape c = test_shape(3, 1, 1, n, m, 2, 1, 1.0f);
            double rows = 0.0;
            for (int i = 0; i < n; i++) rows += attn_row_end(&c, i, m);
            EXPECT_MSG(attn_visible_pairs(&c) == 3 * rows, "causal N=%d M=%d: %g pairs, rows sum to %g", n, m,
                       attn_visible_pairs(&c), 3 * rows);
        }

    /* bytes, B=1 Hq=2 Hkv=1 N=3 M=5 d=4, f16: Q and O 24 elems each, K and V 20 each, LSE 6 floats:
     * 2 * (24 + 24 + 20 + 20) + 4 * 6 = 200 */
    EXPECT_NEAR(attn_bytes(&s), 200.0, 0);
    /* varlen counts only the valid KV rows: B=2 Hq=1 Hkv=1 N=3 d=2, lengths {5,2}:
     * Q, O 2*3*2 = 12 each; K, V (5+2)*2 = 14 each; LSE 6 -> 2 * 52 + 24 = 128 */
    EXPECT_NEAR(attn_bytes(&u), 128.0, 0);
    EXPECT(attn_q_elems(&s) == 24 && attn_kv_elems(&s) == 20 && attn_lse_elems(&s) == 6);
}

/* ------------------------------------------------------------------ inputs.c */

static void seqlens_dists(void)
{
    static const char *dists[3] = {"equal", "uniform", "longtail"};
    enum { B = 2000, M = 37 };
    static int a[B], b[B];
    double mean[3];
    for (int t = 0; t < 3; t++) {
        EXPECT(make_seqlens(dists[t], B, M, 99, a) == 0);
        int lo = M + 1, hi = 0;
        double sum = 0.0;
        for (int i = 0; i < B; i++) {
            if (a[i] < lo) lo = a[i];
            if (a[i] > hi) hi = a[i];
            sum += a[i];
        }
        mean[t] = sum / B;
        EXPECT_MSG(lo >= 1 && hi <= M, "%s: lengths in [%d, %d], allowed [1, %d]", dists[t], lo, hi, M);
        if (t == 1) EXPECT_MSG(lo == 1 && hi == M, "uniform over 2000 draws should reach 1 and M: [%d, %d]", lo, hi);
        EXPECT(make_seqlens(dists[t], B, M, 99, b) == 0);
        EXPECT_MSG(memcmp(a, b, sizeof a) == 0, "%s: same seed, different lengths", dists[t]);
        if (t > 0) {
            EXPECT(make_seqlens(dists[t], B, M, 100, b) == 0);
            EXPECT_MSG(memcmp(a, b, sizeof a) != 0, "%s: seed ignored", dists[t]);
        }
    }
    EXPECT_NEAR(mean[0], M, 0);
    EXPECT_MSG(fabs(mean[1] - (M + 1) / 2.0) < 1.5, "uniform mean %g, expected about %g", mean[1], (M + 1) / 2.0);
    EXPECT_MSG(mean[2] < M / 3.0, "longtail mean %g should be well under M/3", mean[2]);

    for (int t = 0; t < 3; t++) {                      /* M = 1 leaves no choice */
        EXPECT(make_seqlens(dists[t], 50, 1, 3, a) == 0);
        for (int i = 0; i < 50; i++) EXPECT(a[i] == 1);
    }
    a[0] = -5;
    EXPECT(make_seqlens("zipf", 4, 10, 1, a) == -1);
    EXPECT(make_seqlens("", 4, 10, 1, a) == -1);
    EXPECT(make_seqlens("Equal", 4, 10, 1, a) == -1);
}

static void inputs_seeded(void)
{
    attn_shape s = test_shape(1, 2, 1, 64, 96, 32, 0, 1.0f);
    size_t nq = attn_q_elems(&s), nkv = attn_kv_elems(&s);
    uint16_t *q1 = malloc(nq * 2), *k1 = malloc(nkv * 2), *v1 = malloc(nkv * 2);
    uint16_t *q2 = malloc(nq * 2), *k2 = malloc(nkv * 2), *v2 = malloc(nkv * 2);
    make_inputs(&s, 7, INPUT_NORMAL, q1, k1, v1);
    make_inputs(&s, 7, INPUT_NORMAL, q2, k2, v2);
    EXPECT(memcmp(q1, q2, nq * 2) == 0 && memcmp(k1, k2, nkv * 2) == 0 && memcmp(v1, v2, nkv * 2) == 0);
    EXPECT(memcmp(k1, v1, nkv * 2) != 0);               /* K and V are different streams */

    /* element i depends only on (seed, stream, i): it can be regenerated alone */
    EXPECT(q1[1234] == f32_to_f16((float)rng_normal(7, 1, 1234)));
    EXPECT(v1[777] == f32_to_f16((float)rng_normal(7, 3, 777)));

    double sum = 0.0, sq = 0.0;
    for (size_t i = 0; i < nkv; i++) { double x = f16_to_f32(k1[i]); sum += x; sq += x * x; }
    double mean = sum / nkv, sd = sqrt(sq / nkv - mean * mean);
    EXPECT_MSG(fabs(mean) < 0.05 && fabs(sd - 1.0) < 0.05, "K: mean %g, sd %g; expected N(0,1)", mean, sd);

    make_inputs(&s, 7, INPUT_OUTLIER, q2, k2, v2);       /* Q, K with sigma 10; V unchanged */
    sum = sq = 0.0;
    for (size_t i = 0; i < nq; i++) { double x = f16_to_f32(q2[i]); sum += x; sq += x * x; }
    sd = sqrt(sq / nq - (sum / nq) * (sum / nq));
    EXPECT_MSG(fabs(sd - 10.0) < 0.6, "outlier Q: sd %g, expected 10", sd);
    EXPECT(memcmp(v1, v2, nkv * 2) == 0);

    make_inputs(&s, 8, INPUT_NORMAL, q2, k2, v2);
    EXPECT(memcmp(q1, q2, nq * 2) != 0);

    for (uint64_t i = 0; i < 10000; i++) {
        double u = rng_uniform(3, 4, i);
        if (!(u >= 0.0 && u < 1.0)) { EXPECT_MSG(0, "rng_uniform = %g", u); break; }
    }
    free(q1); free(k1); free(v1); free(q2); free(k2); free(v2);
}

const test_case TESTS_ref[] = {
    {"ref: d=1 M=2 by hand (f16 and bf16 storage)", ref_d1_m2},
    {"ref: d=2 M=3 scale 0.5 by hand, second row uniform", ref_d2_m3},
    {"ref: causal N=M=3 rows see 1, 2, 3 keys", ref_causal_square},
    {"ref: fully masked row (causal N>M) gives O=0, LSE=-inf", ref_fully_masked_row},
    {"ref: GQA Hq=4 Hkv=2 head h reads KV head h/2, per batch", ref_gqa_mapping},
    {"ref: varlen seqlens limit the keys and keep the M stride", ref_seqlens},
    {"ref: matches a direct evaluation on a random GQA shape, both masks", ref_matches_direct},
    {"attn: causal row_end for N<M, N=M, N>M, and non-causal", causal_alignment},
    {"attn: visible pairs, FLOPs and bytes counted by hand", flops_and_bytes},
    {"inputs: make_seqlens in [1,M], equal=M, unknown=-1, seeded", seqlens_dists},
    {"inputs: make_inputs is seeded, per-element, N(0,1) / sigma 10", inputs_seeded},
    {NULL, NULL},
};
