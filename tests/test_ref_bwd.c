/* The float64 backward reference (common/ref_bwd.c): every element of dQ, dK and dV against central
 * finite differences of L = sum(dO o O) on tiny shapes (causal and not, GQA, MQA, N != M, rows that
 * see no key, keys past a request's length), its forward part against common/ref.c's O and LSE, and
 * properties with known values. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "test.h"
#include "../common/harness.h"
#include "../common/half.h"

/* tests/test_ref.c's: a shape with float16 storage, no KV lengths, contiguous K and V */
attn_shape test_shape(int B, int Hq, int Hkv, int N, int M, int d, int causal, float scale);
#define bshape test_shape

typedef struct group64 {
    int G, mk;
    double *q, *k, *v, *g;          /* inputs; g is dO */
    double *o, *lse, *dq, *dk, *dv;  /* outputs */
} group64;

static void group_alloc(const attn_shape *s, int mk, uint64_t seed, group64 *x)
{
    const int G = s->Hq / s->Hkv;
    const size_t qn = (size_t)G * s->N * s->d, kn = (size_t)s->M * s->d;
    x->G = G;
    x->mk = mk;
    x->q = malloc(sizeof(double) * qn); x->g = malloc(sizeof(double) * qn);
    x->k = malloc(sizeof(double) * kn); x->v = malloc(sizeof(double) * kn);
    x->o = malloc(sizeof(double) * qn); x->dq = malloc(sizeof(double) * qn);
    x->lse = malloc(sizeof(double) * G * s->N);
    x->dk = malloc(sizeof(double) * kn); x->dv = malloc(sizeof(double) * kn);
    for (size_t e = 0; e < qn; e++) { x->q[e] = rng_normal(seed, 1, e); x->g[e] = rng_normal(seed, 4, e); }
    for (size_t e = 0; e < kn; e++) { x->k[e] = rng_normal(seed, 2, e); x->v[e] = rng_normal(seed, 3, e); }
}

static void group_free(group64 *x)
{
    free(x->q); free(x->k); free(x->v); free(x->g);
    free(x->o); free(x->lse); free(x->dq); free(x->dk); free(x->dv);
}

static void run(const attn_shape *s, group64 *x)
{
    ref_bwd_f64(s, x->mk, x->G, x->q, x->k, x->v, x->g, x->o, x->lse, x->dq, x->dk, x->dv);
}

/* L = sum(dO o O) at the current inputs */
static double loss(const attn_shape *s, group64 *x)
{
    run(s, x);
    double L = 0.0;
    for (size_t e = 0; e < (size_t)x->G * s->N * s->d; e++) L += x->g[e] * x->o[e];
    return L;
}

/* Every element of dQ, dK, dV against (L(x + h) - L(x - h)) / 2h. Returns the largest |gradient|
 * seen, so that a caller can insist it is not trivially zero. */
static double fd_check(const attn_shape *s, int mk, uint64_t seed)
{
    group64 x;
    group_alloc(s, mk, seed, &x);
    run(s, &x);
    const size_t qn = (size_t)x.G * s->N * s->d, kn = (size_t)s->M * s->d;
    double *dq = malloc(sizeof(double) * qn), *dk = malloc(sizeof(double) * kn), *dv = malloc(sizeof(double) * kn);
    memcpy(dq, x.dq, sizeof(double) * qn);
    memcpy(dk, x.dk, sizeof(double) * kn);
    memcpy(dv, x.dv, sizeof(double) * kn);
    const double h = 1e-5, tol = 1e-7;
    double biggest = 0.0;
    struct { double *in, *grad; size_t n; const char *name; } t[3] = {
        {x.q, dq, qn, "dQ"}, {x.k, dk, kn, "dK"}, {x.v, dv, kn, "dV"}};
    for (int w = 0; w < 3; w++)
        for (size_t e = 0; e < t[w].n; e++) {
            double keep = t[w].in[e];
            t[w].in[e] = keep + h;
            double lp = loss(s, &x);
            t[w].in[e] = keep - h;
            double lm = loss(s, &x);
            t[w].in[e] = keep;
            double fd = (lp - lm) / (2 * h), an = t[w].grad[e];
            if (fabs(an) > biggest) biggest = fabs(an);
            EXPECT_MSG(fabs(fd - an) <= tol * (1.0 + fabs(fd)), "%s[%zu] = %.12g, finite difference %.12g "
                       "(N=%d M=%d mk=%d G=%d causal=%d)", t[w].name, e, an, fd, s->N, s->M, mk, x.G, s->causal);
        }
    free(dq); free(dk); free(dv);
    group_free(&x);
    return biggest;
}

static void fd_full(void)
{
    attn_shape s = bshape(1, 1, 1, 3, 5, 4, 0, 0.7f);
    EXPECT(fd_check(&s, s.M, 11) > 1e-2);
}

static void fd_causal(void)
{
    /* N < M: every row sees M - N + 1 .. M keys; N = M: the square corner */
    attn_shape s = bshape(1, 1, 1, 3, 6, 4, 1, 0.5f);
    EXPECT(fd_check(&s, s.M, 12) > 1e-2);
    s = bshape(1, 1, 1, 4, 4, 3, 1, 0.9f);
    EXPECT(fd_check(&s, s.M, 13) > 1e-2);
}

static void fd_gqa_mqa(void)
{
    /* GQA: 2 query heads per KV head (dK, dV summed over them); MQA: 3 query heads on one KV head */
    attn_shape s = bshape(1, 4, 2, 3, 4, 4, 0, 0.6f);
    EXPECT(fd_check(&s, s.M, 14) > 1e-2);
    s = bshape(1, 3, 1, 4, 3, 2, 1, 0.8f);
    EXPECT(fd_check(&s, s.M, 15) > 1e-2);
}

/* causal with N > M: rows 0 .. N - M - 1 see no key. Their dQ is exactly 0 (and the finite
 * differences agree: L does not depend on them); they add nothing to dK, dV. */
static void fd_empty_rows(void)
{
    attn_shape s = bshape(1, 2, 1, 5, 3, 4, 1, 0.5f);
    EXPECT(fd_check(&s, s.M, 16) > 1e-2);
    group64 x;
    group_alloc(&s, s.M, 16, &x);
    run(&s, &x);
    for (int h = 0; h < 2; h++)
        for (int i = 0; i < s.N; i++) {
            const int empty = i < s.N - s.M;
            const size_t r = (size_t)h * s.N + i;
            EXPECT(empty == (isinf(x.lse[r]) && x.lse[r] < 0));
            for (int c = 0; c < s.d && empty; c++) {
                EXPECT_MSG(x.dq[r * s.d + c] == 0.0, "dQ[%d,%d,%d] = %g in a row that sees no key", h, i, c, x.dq[r * s.d + c]);
                EXPECT(x.o[r * s.d + c] == 0.0);
            }
        }
    /* a row that sees no key changes nothing: dK, dV are those of the shape without it */
    double *dk = malloc(sizeof(double) * s.M * s.d), *dv = malloc(sizeof(double) * s.M * s.d);
    memcpy(dk, x.dk, sizeof(double) * s.M * s.d);
    memcpy(dv, x.dv, sizeof(double) * s.M * s.d);
    for (size_t e = 0; e < (size_t)2 * s.N * s.d; e++)
        if ((e / s.d) % s.N < (size_t)(s.N - s.M)) { x.q[e] = 100.0; x.g[e] = -100.0; }
    run(&s, &x);
    for (int e = 0; e < s.M * s.d; e++) { EXPECT(dk[e] == x.dk[e]); EXPECT(dv[e] == x.dv[e]); }
    free(dk); free(dv);
    group_free(&x);
}

/* a request shorter than M (varlen): keys mk .. M - 1 get dK = dV = 0 */
static void fd_short_request(void)
{
    attn_shape s = bshape(1, 2, 2, 3, 6, 4, 1, 0.5f);
    s.Hq = s.Hkv = 1;
    EXPECT(fd_check(&s, 4, 17) > 1e-2);
    group64 x;
    group_alloc(&s, 4, 17, &x);
    run(&s, &x);
    for (int e = 4 * s.d; e < s.M * s.d; e++) { EXPECT(x.dk[e] == 0.0); EXPECT(x.dv[e] == 0.0); }
    group_free(&x);
}

/* Known sums: sum_j dV_j = sum of dO over the rows that see a key (each row's P sums to 1), and
 * sum_j dS_ij = 0 for every row, so with every key equal to one vector k, dQ = 0. */
static void known_sums(void)
{
    attn_shape s = bshape(1, 2, 1, 5, 3, 4, 1, 0.5f);
    group64 x;
    group_alloc(&s, s.M, 18, &x);
    run(&s, &x);
    for (int c = 0; c < s.d; c++) {
        double sv = 0.0, sg = 0.0;
        for (int j = 0; j < s.M; j++) sv += x.dv[j * s.d + c];
        for (int r = 0; r < 2 * s.N; r++)
            if (r % s.N >= s.N - s.M) sg += x.g[r * s.d + c];
        EXPECT_NEAR(sv, sg, 1e-12);
    }
    for (int j = 0; j < s.M; j++)
        for (int c = 0; c < s.d; c++) x.k[j * s.d + c] = x.k[c];
    run(&s, &x);
    for (int e = 0; e < 2 * s.N * s.d; e++) EXPECT_NEAR(x.dq[e], 0.0, 1e-13);
    group_free(&x);
}

/* The forward part of ref_bwd_group (storage inputs, float16 and bfloat16, GQA, both masks, B = 2)
 * against ref_row, and its gradients against ref_bwd_f64 on the same values */
static void forward_matches_ref(void)
{
    for (int dt = 0; dt < 2; dt++)
        for (int causal = 0; causal < 2; causal++) {
            attn_shape s = bshape(2, 4, 2, 7, 5, 8, causal, 0.35f);
            s.dtype = dt ? ATTN_BF16 : ATTN_F16;
            uint16_t *q = malloc(2 * attn_q_elems(&s)), *g = malloc(2 * attn_q_elems(&s));
            uint16_t *k = malloc(2 * attn_kv_elems(&s)), *v = malloc(2 * attn_kv_elems(&s));
            make_inputs(&s, 21, INPUT_NORMAL, q, k, v);
            fill_normal(g, attn_q_elems(&s), s.dtype, 21, 4, 1.0);
            ref_bwd_out r;
            EXPECT(ref_bwd_alloc(&s, &r) == 0);
            double out[8], scratch[5];
            for (int b = 0; b < s.B; b++)
                for (int kvh = 0; kvh < s.Hkv; kvh++) {
                    EXPECT(ref_bwd_group(&s, q, k, v, g, b, kvh, &r) == 0);
                    for (int hh = 0; hh < 2; hh++)
                        for (int i = 0; i < s.N; i++) {
                            const int h = kvh * 2 + hh;
                            double l = ref_row(&s, q, k, v, b, h, i, out, scratch);
                            const double lb = r.lse[hh * s.N + i];
                            EXPECT_MSG(l == lb || fabs(l - lb) <= 1e-12, "LSE[%d,%d,%d] %g vs ref_row %g", b, h, i, lb, l);
                            for (int c = 0; c < s.d; c++) EXPECT_NEAR(r.o[(hh * s.N + i) * s.d + c], out[c], 1e-12);
                        }
                }
            ref_bwd_free(&r);
            free(q); free(g); free(k); free(v);
        }
}


/* dQ, dK, dV as a perfect rung writes them: ref_bwd_group's, rounded to float16, group by group. */
static void ref_grads_f16(const attn_shape *s, const uint16_t *q, const uint16_t *k, const uint16_t *v,
                          const uint16_t *g, uint16_t *dq, uint16_t *dk, uint16_t *dv)
{
    ref_bwd_out r;
    EXPECT(ref_bwd_alloc(s, &r) == 0);
    const int G = s->Hq / s->Hkv;
    for (int b = 0; b < s->B; b++)
        for (int kvh = 0; kvh < s->Hkv; kvh++) {
            ref_bwd_group(s, q, k, v, g, b, kvh, &r);
            const size_t q0 = ((size_t)b * s->Hq + (size_t)kvh * G) * s->N * s->d, k0 = ((size_t)b * s->Hkv + kvh) * s->M * s->d;
            for (size_t e = 0; e < (size_t)G * s->N * s->d; e++) dq[q0 + e] = f32_to_f16((float)r.dq[e]);
            for (size_t e = 0; e < (size_t)s->M * s->d; e++) {
                dk[k0 + e] = f32_to_f16((float)r.dk[e]);
                dv[k0 + e] = f32_to_f16((float)r.dv[e]);
            }
        }
    ref_bwd_free(&r);
}

/* A gradient case: inputs (mode, seed), dO, and the reference's gradients as a perfect rung writes them. */
typedef struct gcase {
    attn_shape s;
    size_t qn, kn;
    uint16_t *q, *g, *k, *v, *dq, *dk, *dv;
} gcase;

static gcase gcase_make(attn_shape s, uint64_t seed, int mode)
{
    gcase x = {s, attn_q_elems(&s), attn_kv_elems(&s), NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    x.q = malloc(2 * x.qn); x.g = malloc(2 * x.qn); x.dq = malloc(2 * x.qn);
    x.k = malloc(2 * x.kn); x.v = malloc(2 * x.kn); x.dk = malloc(2 * x.kn); x.dv = malloc(2 * x.kn);
    make_inputs(&x.s, seed, mode, x.q, x.k, x.v);
    make_grad_input(&x.s, seed, x.g);
    ref_grads_f16(&x.s, x.q, x.k, x.v, x.g, x.dq, x.dk, x.dv);
    return x;
}

static void gcase_free(gcase *x) { free(x->q); free(x->g); free(x->k); free(x->v); free(x->dq); free(x->dk); free(x->dv); }

/* check_grads (common/check_bwd.c): the reference's own gradients rounded to the storage type pass;
 * a NaN (an unwritten element), a nonzero dQ in a row that sees no key, or dK off by 1% fail; a
 * budget too small for one group still checks one (the last), and says it sampled. */
static void check_grads_rules(void)
{
    gcase x = gcase_make(bshape(2, 4, 2, 6, 4, 8, 1, 0.35f), 31, INPUT_NORMAL);
    const attn_shape s = x.s;
    check_result c;
    double rel[3];
    check_grads(&s, x.q, x.k, x.v, x.g, x.dq, x.dk, x.dv, 1e12, 1, &c, rel);
    EXPECT_MSG(c.pass, "%s", c.why);
    EXPECT(!c.sampled && c.rows_checked == c.rows_total && c.rows_total == 2 * 4 * 6);
    EXPECT(rel[0] > 0 && rel[0] < 1e-3 && rel[1] < 1e-3 && rel[2] < 1e-3);
    EXPECT(x.dq[0] == 0 && x.dq[s.d] == 0);                  /* row 0 of head 0 sees no key: exactly 0 */

    uint16_t keep = x.dv[5];
    x.dv[5] = 0xffff;                                      /* a NaN: an element never written */
    check_grads(&s, x.q, x.k, x.v, x.g, x.dq, x.dk, x.dv, 1e12, 1, &c, rel);
    EXPECT(!c.pass && c.bad_elems == 1 && strstr(c.why, "dV") && strstr(c.why, "NaN"));
    x.dv[5] = keep;

    x.dq[3] = f32_to_f16(1e-3f);                           /* nonzero dQ in a row that sees no key */
    check_grads(&s, x.q, x.k, x.v, x.g, x.dq, x.dk, x.dv, 1e12, 1, &c, rel);
    EXPECT(!c.pass && strstr(c.why, "sees no key"));
    x.dq[3] = 0;

    for (size_t e = 0; e < x.kn; e++) x.dk[e] = f32_to_f16(f16_to_f32(x.dk[e]) * 1.01f);
    check_grads(&s, x.q, x.k, x.v, x.g, x.dq, x.dk, x.dv, 1e12, 1, &c, rel);
    EXPECT(!c.pass && strstr(c.why, "dK") && rel[1] > 5e-3 && rel[0] < 1e-3);
    check_grads(&s, x.q, x.k, x.v, x.g, x.dq, x.dk, x.dv, 1.0, 1, &c, rel);   /* one group only: still checked */
    EXPECT(c.sampled && c.rows_checked == 2 * s.N && !c.pass);
    gcase_free(&x);
}

/* Non-finite inputs: the reference's gradients pass, NaN where the reference's are and numbers
 * elsewhere (nonfinite-v: dQ and dK NaN, dV numbers); a NaN made a number, or a number made NaN,
 * fails and is named. */
static void check_grads_nonfinite(void)
{
    gcase x = gcase_make(bshape(2, 4, 2, 5, 7, 8, 1, 0.35f), 32, INPUT_NONFINITE_V);
    const attn_shape s = x.s;
    long nan_dq = 0, nan_dv = 0;
    for (size_t e = 0; e < x.qn; e++) nan_dq += !isfinite(f16_to_f32(x.dq[e]));
    for (size_t e = 0; e < x.kn; e++) nan_dv += !isfinite(f16_to_f32(x.dv[e]));
    EXPECT_MSG(nan_dq > 0 && nan_dq < (long)x.qn && nan_dv == 0, "%ld of %zu dQ non-finite, %ld dV", nan_dq, x.qn, nan_dv);
    check_result c;
    double rel[3];
    check_grads(&s, x.q, x.k, x.v, x.g, x.dq, x.dk, x.dv, 1.0, 1, &c, rel);   /* every group, whatever the budget */
    EXPECT_MSG(c.pass && !c.sampled && c.rows_checked == c.rows_total, "%s", c.why);
    size_t e = 0;
    while (isfinite(f16_to_f32(x.dq[e]))) e++;
    const uint16_t keep = x.dq[e];
    x.dq[e] = f32_to_f16(0.25f);
    check_grads(&s, x.q, x.k, x.v, x.g, x.dq, x.dk, x.dv, 1e12, 1, &c, rel);
    EXPECT_MSG(!c.pass && strstr(c.why, "dQ") && strstr(c.why, "where the float64 reference is nan"), "%s", c.why);
    x.dq[e] = keep;
    x.dv[3] = 0x7e00;
    check_grads(&s, x.q, x.k, x.v, x.g, x.dq, x.dk, x.dv, 1e12, 1, &c, rel);
    EXPECT_MSG(!c.pass && strstr(c.why, "dV"), "%s", c.why);
    gcase_free(&x);
}

const test_case TESTS_ref_bwd[] = {
    {"ref_bwd: dQ dK dV = finite differences of sum(dO o O), not causal, N<M", fd_full},
    {"ref_bwd: finite differences, causal N<M and N=M", fd_causal},
    {"ref_bwd: finite differences, GQA (2 per KV head) and causal MQA (3 on 1)", fd_gqa_mqa},
    {"ref_bwd: causal N>M: rows that see no key get dQ=0 exactly and change no dK dV", fd_empty_rows},
    {"ref_bwd: keys past a request's length get dK=dV=0", fd_short_request},
    {"ref_bwd: sum of dV = sum of dO over seeing rows; equal keys give dQ=0", known_sums},
    {"ref_bwd: forward part = ref_row's O and LSE (f16 bf16, GQA, B=2, both masks)", forward_matches_ref},
    {"check_grads: rounded reference passes; NaN, nonzero empty-row dQ, dK +1% fail; one group at least", check_grads_rules},
    {"check_grads: nonfinite-v: NaN exactly where the reference has it, every group", check_grads_nonfinite},
    {NULL, NULL},
};
