/* check_output (check.c): outputs built from the reference itself pass; NaN, a 1% error, an LSE off
 * by 0.01, and a non-empty "empty" row each fail with the right reason. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "test.h"
#include "../common/harness.h"
#include "../common/half.h"

#define BUDGET 1e12   /* check every row */

typedef struct bufs {
    attn_shape s;
    uint16_t *q, *k, *v, *o;
    float *lse;
    size_t nq, nkv, rows;
} bufs;

static attn_shape shape(int B, int Hq, int Hkv, int N, int M, int d, int causal, attn_dtype t)
{
    attn_shape s;
    memset(&s, 0, sizeof s);
    s.B = B; s.Hq = Hq; s.Hkv = Hkv; s.N = N; s.M = M; s.d = d;
    s.causal = causal;
    s.scale = 1.0f / sqrtf((float)d);
    s.dtype = t;
    return s;
}

/* Random inputs (`mode`), and O / LSE from ref_row rounded to the storage type: what a perfect rung
 * writes. */
static bufs make_mode(attn_shape s, uint64_t seed, int mode)
{
    bufs x;
    x.s = s;
    x.nq = attn_q_elems(&s);
    x.nkv = attn_kv_elems(&s);
    x.rows = attn_lse_elems(&s);
    x.q = malloc(x.nq * 2); x.k = malloc(x.nkv * 2); x.v = malloc(x.nkv * 2);
    x.o = malloc(x.nq * 2); x.lse = malloc(x.rows * sizeof(float));
    make_inputs(&s, seed, mode, x.q, x.k, x.v);
    double *out = malloc(sizeof(double) * s.d), *scratch = malloc(sizeof(double) * s.M);
    for (int b = 0; b < s.B; b++)
        for (int h = 0; h < s.Hq; h++)
            for (int i = 0; i < s.N; i++) {
                size_t row = ((size_t)b * s.Hq + h) * s.N + i;
                x.lse[row] = (float)ref_row(&s, x.q, x.k, x.v, b, h, i, out, scratch);
                for (int c = 0; c < s.d; c++) x.o[row * s.d + c] = f32_to_elem(s.dtype, (float)out[c]);
            }
    free(out);
    free(scratch);
    return x;
}

static bufs make(attn_shape s, uint64_t seed) { return make_mode(s, seed, INPUT_NORMAL); }

static void release(bufs *x) { free(x->q); free(x->k); free(x->v); free(x->o); free(x->lse); }

static check_result run(const bufs *x, double budget)
{
    check_result r;
    memset(&r, 0x5a, sizeof r);   /* check_output must set every field it reports */
    check_output(&x->s, x->q, x->k, x->v, x->o, x->lse, budget, 1, &r);
    return r;
}

static size_t at(const attn_shape *s, int b, int h, int i) { return ((size_t)b * s->Hq + h) * s->N + i; }

static void check_reference_passes(void)
{
    bufs x = make(shape(2, 4, 2, 6, 9, 16, 0, ATTN_F16), 3);
    check_result r = run(&x, BUDGET);
    EXPECT_MSG(r.pass == 1, "exact outputs failed: %s", r.why);
    EXPECT(r.bad_elems == 0 && r.why[0] == 0);
    EXPECT(r.rows_total == 48 && r.rows_checked == 48 && r.sampled == 0);
    EXPECT_MSG(r.rel_err > 0.0 && r.rel_err < 1e-3, "rel_err %g: f16 rounding alone is ~3e-4", r.rel_err);
    EXPECT_MSG(r.max_abs_err < 1e-3, "max_abs_err %g", r.max_abs_err);
    EXPECT_MSG(r.lse_err < 1e-5, "lse_err %g: only float32 rounding", r.lse_err);
    EXPECT(check_tolerance(ATTN_F16) == 2e-3 && check_tolerance(ATTN_BF16) == 1e-2);
    release(&x);
}

static void check_catches_nan(void)
{
    bufs x = make(shape(2, 4, 2, 6, 9, 16, 0, ATTN_F16), 3);
    x.o[at(&x.s, 1, 2, 3) * 16 + 5] = 0x7e00;          /* NaN at O[1,2,3,5] */
    check_result r = run(&x, BUDGET);
    EXPECT(r.pass == 0);
    EXPECT_MSG(r.bad_elems == 1, "bad_elems %ld, expected 1", r.bad_elems);
    EXPECT_MSG(strstr(r.why, "O[1,2,3,5]") != NULL, "why: %s", r.why);
    EXPECT(isinf(r.rel_err));
    x.o[at(&x.s, 1, 2, 3) * 16 + 5] = 0x7c00;          /* +inf is just as bad */
    r = run(&x, BUDGET);
    EXPECT(r.pass == 0 && r.bad_elems == 1 && strstr(r.why, "O[1,2,3,5]"));

    /* outputs never written: everything poisoned with NaN, as the driver does before a run */
    for (size_t e = 0; e < x.nq; e++) x.o[e] = 0x7e00;
    for (size_t e = 0; e < x.rows; e++) x.lse[e] = NAN;
    r = run(&x, BUDGET);
    EXPECT(r.pass == 0);
    EXPECT_MSG(r.bad_elems == (long)(x.nq + x.rows), "bad_elems %ld, expected %zu", r.bad_elems, x.nq + x.rows);
    EXPECT_MSG(strstr(r.why, "O[0,0,0,0]") != NULL, "why: %s", r.why);
    release(&x);
}

static void check_catches_wrong_o(void)
{
    bufs x = make(shape(2, 4, 2, 6, 9, 16, 0, ATTN_F16), 3);
    uint16_t *orig = malloc(x.nq * 2);
    memcpy(orig, x.o, x.nq * 2);
    for (size_t e = 0; e < x.nq; e++) x.o[e] = f32_to_f16(1.01f * f16_to_f32(orig[e]));
    check_result r = run(&x, BUDGET);
    EXPECT(r.pass == 0 && r.bad_elems == 0);
    EXPECT_MSG(r.rel_err > 8e-3 && r.rel_err < 1.2e-2, "rel_err %g for a 1%% error", r.rel_err);
    EXPECT_MSG(strstr(r.why, "rel-L2") != NULL, "why: %s", r.why);

    for (size_t e = 0; e < x.nq; e++) x.o[e] = f32_to_f16(1.001f * f16_to_f32(orig[e]));
    r = run(&x, BUDGET);                               /* 0.1% is within 2e-3 */
    EXPECT_MSG(r.pass == 1, "0.1%% error refused: %s (rel %g)", r.why, r.rel_err);

    memcpy(x.o, orig, x.nq * 2);                       /* one row swapped with another: wrong */
    memcpy(x.o + at(&x.s, 0, 0, 0) * 16, orig + at(&x.s, 0, 0, 1) * 16, 32);
    r = run(&x, BUDGET);
    EXPECT(r.pass == 0 && strstr(r.why, "rel-L2"));
    free(orig);
    release(&x);
}

static void check_catches_wrong_lse(void)
{
    bufs x = make(shape(2, 4, 2, 6, 9, 16, 0, ATTN_F16), 3);
    size_t row = at(&x.s, 0, 1, 2);
    float keep = x.lse[row];
    x.lse[row] = keep + 0.01f;
    check_result r = run(&x, BUDGET);
    EXPECT(r.pass == 0 && r.bad_elems == 0);
    EXPECT_NEAR(r.lse_err, 0.01, 1e-5);
    EXPECT_MSG(strstr(r.why, "LSE[0,1,2] off by more than") != NULL, "why: %s", r.why);

    x.lse[row] = keep - 5e-4f;                         /* within 1e-3 */
    r = run(&x, BUDGET);
    EXPECT_MSG(r.pass == 1, "LSE off by 5e-4 refused: %s", r.why);

    x.lse[row] = -INFINITY;                            /* the row sees keys: must be finite */
    r = run(&x, BUDGET);
    EXPECT(r.pass == 0 && r.bad_elems == 1);
    EXPECT_MSG(strstr(r.why, "LSE[0,1,2] is not finite") != NULL, "why: %s", r.why);
    release(&x);
}

/* Causal N = 5 > M = 3: rows 0 and 1 see no key and must hold exactly O = 0, LSE = -inf. */
static void check_empty_rows(void)
{
    bufs x = make(shape(1, 2, 1, 5, 3, 8, 1, ATTN_F16), 4);
    EXPECT(isinf(x.lse[at(&x.s, 0, 1, 1)]) && x.lse[at(&x.s, 0, 1, 1)] < 0);   /* the reference's */
    check_result r = run(&x, BUDGET);
    EXPECT_MSG(r.pass == 1, "exact causal N>M outputs failed: %s", r.why);

    x.o[at(&x.s, 0, 1, 1) * 8 + 4] = f32_to_f16(1.0f);
    r = run(&x, BUDGET);
    EXPECT(r.pass == 0 && r.bad_elems == 1);
    EXPECT_MSG(strstr(r.why, "O[0,1,1,4] should be 0") != NULL, "why: %s", r.why);
    x.o[at(&x.s, 0, 1, 1) * 8 + 4] = 0x8000;           /* -0 is zero: fine */
    r = run(&x, BUDGET);
    EXPECT_MSG(r.pass == 1, "-0 in an empty row refused: %s", r.why);

    x.lse[at(&x.s, 0, 0, 0)] = 0.0f;
    r = run(&x, BUDGET);
    EXPECT(r.pass == 0 && r.bad_elems == 1);
    EXPECT_MSG(strstr(r.why, "LSE[0,0,0] should be -inf") != NULL, "why: %s", r.why);
    x.lse[at(&x.s, 0, 0, 0)] = INFINITY;
    r = run(&x, BUDGET);
    EXPECT(r.pass == 0 && strstr(r.why, "LSE[0,0,0] should be -inf"));
    release(&x);
}

/* A large shape is sampled, yet the NaN scan still covers every row. */
static void check_sampled(void)
{
    bufs x = make(shape(1, 2, 2, 400, 64, 16, 0, ATTN_F16), 5);
    check_result r = run(&x, 1.0);
    EXPECT_MSG(r.pass == 1, "sampled check failed: %s", r.why);
    EXPECT(r.sampled == 1 && r.rows_total == 800);
    EXPECT_MSG(r.rows_checked >= 64 && r.rows_checked < 800, "rows_checked %ld", r.rows_checked);

    size_t row = at(&x.s, 0, 1, 200);                  /* a middle row, likely not sampled */
    x.o[row * 16 + 7] = 0x7e00;
    r = run(&x, 1.0);
    EXPECT(r.pass == 0 && r.bad_elems == 1);
    EXPECT_MSG(strstr(r.why, "O[0,1,200,7]") != NULL, "why: %s", r.why);
    x.o[row * 16 + 7] = 0;

    /* rows 0..15 of the first (b, h) are always in the sample: corrupt them */
    for (int i = 0; i < 16; i++)
        for (int c = 0; c < 16; c++) x.o[at(&x.s, 0, 0, i) * 16 + c] = f32_to_f16(1.5f * f16_to_f32(x.o[at(&x.s, 0, 0, i) * 16 + c]));
    r = run(&x, 1.0);
    EXPECT_MSG(r.pass == 0 && strstr(r.why, "rel-L2"), "corrupt first rows passed a sampled check: %s", r.why);
    release(&x);
}

/* A decode-like shape (32 rows, one query each) with a budget too small for every row: whatever
 * check_output samples, rows_checked must not exceed the rows there are, and if it claims every
 * row then a wrong value in any row must fail. */
static void check_sample_claims(void)
{
    bufs x = make(shape(1, 32, 1, 1, 64, 16, 0, ATTN_F16), 8);
    int missed = 0, first_missed = -1;
    long claimed = 0;
    for (int h = 0; h < 32; h++) {
        uint16_t keep = x.o[h * 16];
        x.o[h * 16] = f32_to_f16(f16_to_f32(keep) + 1.0f);
        check_result r = run(&x, 1.0);
        EXPECT_MSG(r.rows_checked <= r.rows_total, "rows_checked %ld > rows_total %ld", r.rows_checked, r.rows_total);
        claimed = r.rows_checked;
        if (r.pass && r.rows_checked >= r.rows_total) {
            if (first_missed < 0) first_missed = h;
            missed++;
        }
        x.o[h * 16] = keep;
    }
    EXPECT_MSG(missed == 0, "reported %ld of 32 rows checked, yet a wrong row passed in %d cases (first: h=%d)",
               claimed, missed, first_missed);

    /* one (b, h) pair, 10 rows: the first and last pair are the same pair; count each row once */
    bufs y = make(shape(1, 1, 1, 10, 64, 16, 0, ATTN_F16), 9);
    check_result r = run(&y, 1.0);
    EXPECT(r.pass == 1);
    EXPECT_MSG(r.rows_checked <= r.rows_total, "rows_checked %ld > rows_total %ld", r.rows_checked, r.rows_total);
    release(&x);
    release(&y);
}

static void check_bf16_tolerance(void)
{
    bufs x = make(shape(1, 2, 1, 8, 8, 16, 1, ATTN_BF16), 6);
    check_result r = run(&x, BUDGET);
    EXPECT_MSG(r.pass == 1, "exact bf16 outputs failed: %s", r.why);
    EXPECT_MSG(r.rel_err > 5e-4 && r.rel_err < 5e-3, "bf16 rounding rel_err %g", r.rel_err);
    uint16_t *orig = malloc(x.nq * 2);
    memcpy(orig, x.o, x.nq * 2);
    for (size_t e = 0; e < x.nq; e++) x.o[e] = f32_to_bf16(1.004f * bf16_to_f32(orig[e]));
    r = run(&x, BUDGET);                               /* fails f16's 2e-3, passes bf16's 1e-2 */
    EXPECT_MSG(r.pass == 1 && r.rel_err > 2e-3, "0.4%% in bf16: pass %d rel %g (%s)", r.pass, r.rel_err, r.why);
    for (size_t e = 0; e < x.nq; e++) x.o[e] = f32_to_bf16(1.03f * bf16_to_f32(orig[e]));
    r = run(&x, BUDGET);
    EXPECT(r.pass == 0 && strstr(r.why, "rel-L2"));
    free(orig);
    release(&x);
}

static long count_nonfinite(attn_dtype t, const uint16_t *x, size_t n, int want_nan)
{
    long c = 0;
    for (size_t e = 0; e < n; e++) {
        const float f = elem_to_f32(t, x[e]);
        c += want_nan ? isnan(f) != 0 : isinf(f) != 0;
    }
    return c;
}

/* inputs_infinite, what an FP8 step is refused on: an infinity anywhere in Q, K or V; a NaN alone is not one. */
static void check_infinite(void)
{
    bufs x = make(shape(2, 4, 2, 6, 9, 16, 0, ATTN_F16), 3);
    EXPECT(inputs_infinite(&x.s, x.q, x.k, x.v) == 0 && inputs_nonfinite(&x.s, x.q, x.k, x.v) == 0);
    x.k[5] = f32_to_elem(ATTN_F16, NAN);
    EXPECT(inputs_infinite(&x.s, x.q, x.k, x.v) == 0 && inputs_nonfinite(&x.s, x.q, x.k, x.v) == 1);
    x.v[x.nkv - 1] = f32_to_elem(ATTN_F16, -INFINITY);
    EXPECT(inputs_infinite(&x.s, x.q, x.k, x.v) == 1);
    release(&x);
}

/* --inputs nonfinite-q|k|v: one NaN and one Inf in the tensor named, none elsewhere; the check asks
 * for NaN or Inf exactly where the reference has them, compares every row whatever the budget, and
 * fails a lost NaN, a stray NaN and a finite LSE where the reference's is NaN. */
static void check_nonfinite(void)
{
    for (int mode = INPUT_NONFINITE_Q; mode <= INPUT_NONFINITE_V; mode++)
        for (int causal = 0; causal < 2; causal++) {
            bufs x = make_mode(shape(2, 4, 2, 6, 9, 16, causal, ATTN_F16), 3, mode);
            const uint16_t *t = mode == INPUT_NONFINITE_Q ? x.q : mode == INPUT_NONFINITE_K ? x.k : x.v;
            const size_t nt = mode == INPUT_NONFINITE_Q ? x.nq : x.nkv;
            EXPECT_MSG(count_nonfinite(ATTN_F16, t, nt, 1) == 1 && count_nonfinite(ATTN_F16, t, nt, 0) == 1,
                       "mode %d: %ld NaN, %ld Inf", mode, count_nonfinite(ATTN_F16, t, nt, 1), count_nonfinite(ATTN_F16, t, nt, 0));
            EXPECT(inputs_nonfinite(&x.s, x.q, x.k, x.v) == 1);
            EXPECT(inputs_infinite(&x.s, x.q, x.k, x.v) == 1);   /* every mode plants an infinity */
            long nan_o = 0, fin_o = 0, nan_lse = 0;
            for (size_t e = 0; e < x.nq; e++) isfinite(f16_to_f32(x.o[e])) ? fin_o++ : nan_o++;
            for (size_t e = 0; e < x.rows; e++) nan_lse += !isfinite(x.lse[e]);
            EXPECT_MSG(nan_o > 0 && fin_o > 0, "mode %d causal %d: %ld non-finite, %ld finite", mode, causal, nan_o, fin_o);
            EXPECT(mode == INPUT_NONFINITE_V ? nan_lse == 0 : nan_lse > 0);   /* V does not reach the LSE */
            check_result r = run(&x, 1.0);                 /* a budget of nothing: every row all the same */
            EXPECT_MSG(r.pass == 1, "mode %d causal %d: %s", mode, causal, r.why);
            EXPECT(r.rows_checked == (long)x.rows && r.sampled == 0 && r.bad_elems == 0);

            size_t lost = 0, stray = 0;                    /* the first non-finite element, the first finite */
            while (isfinite(f16_to_f32(x.o[lost]))) lost++;
            while (!isfinite(f16_to_f32(x.o[stray]))) stray++;
            const uint16_t keep = x.o[lost];
            x.o[lost] = f32_to_f16(0.5f);                  /* the NaN did not reach this element */
            r = run(&x, BUDGET);
            EXPECT_MSG(!r.pass && r.bad_elems == 1 && strstr(r.why, "where the float64 reference is"), "%s", r.why);
            x.o[lost] = keep;
            x.o[stray] = 0x7e00;                           /* a NaN where the reference is a number */
            r = run(&x, BUDGET);
            EXPECT_MSG(!r.pass && r.bad_elems == 1 && strstr(r.why, "is nan where the float64 reference is"), "%s", r.why);
            x.o[stray] = f32_to_f16(f16_to_f32(x.o[stray + 1 < x.nq ? stray + 1 : 0]) + 1.0f);
            r = run(&x, BUDGET);                           /* and a number that is wrong still fails on rel-L2 */
            EXPECT(!r.pass);
            release(&x);
            if (mode == INPUT_NONFINITE_V) continue;
            x = make_mode(shape(2, 4, 2, 6, 9, 16, causal, ATTN_F16), 3, mode);
            size_t row = 0;
            while (isfinite(x.lse[row])) row++;
            x.lse[row] = 1.0f;                             /* a finite LSE where the reference's is NaN */
            r = run(&x, BUDGET);
            EXPECT_MSG(!r.pass && strstr(r.why, "LSE["), "%s", r.why);
            x.lse[row] = -INFINITY;                        /* "saw no key": rung 08 would drop the row */
            r = run(&x, BUDGET);
            EXPECT_MSG(!r.pass && strstr(r.why, "is -inf where the float64 reference is"), "%s", r.why);
            release(&x);
        }
}

const test_case TESTS_check[] = {
    {"check: outputs from ref_row (rounded to f16) pass, every row checked", check_reference_passes},
    {"check: a NaN/Inf in O fails with bad_elems and O[b,h,i,c]; all-NaN counts every element", check_catches_nan},
    {"check: O off by 1% fails on rel-L2; 0.1% passes", check_catches_wrong_o},
    {"check: LSE off by 0.01 fails, 5e-4 passes, -inf in a seen row fails", check_catches_wrong_lse},
    {"check: causal N>M empty rows must be exactly O=0, LSE=-inf", check_empty_rows},
    {"check: sampled rows on a large shape; the NaN scan still covers all rows", check_sampled},
    {"check: a sample never claims more rows than it compared (decode shape, tight budget)", check_sample_claims},
    {"check: bf16 uses its 1e-2 tolerance", check_bf16_tolerance},
    {"check: nonfinite-q|k|v inputs: NaN/Inf exactly where the reference has them, every row", check_nonfinite},
    {"check: inputs_infinite finds an infinity, not a NaN alone (an FP8 step's refusal)", check_infinite},
    {NULL, NULL},
};
