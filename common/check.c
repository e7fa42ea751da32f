/* Checking a rung's O and LSE against the float64 reference.
 *
 * Two separate questions:
 *  1. Was every output written, and is it a number? The driver poisons O and LSE with NaN before
 *     every run, so an element the kernel forgot stays NaN. This scan covers every row, always.
 *     Rows that see no key must hold O = 0 and LSE = -inf; every other LSE must be finite.
 *  2. Are the values right? rel-L2 of O and max |LSE - ref| against the reference, on every row
 *     when that is affordable, else on a stated sample.
 * Inputs that hold a NaN or an infinity (--inputs nonfinite-*, or a loaded file) change question 1:
 * an element of O or LSE must be NaN or Inf exactly where the float64 reference's is (the NaN or Inf
 * reached it, as in PyTorch's scaled_dot_product_attention), and a number everywhere else (an LSE
 * the NaN reached: NaN or +inf, not -inf, which says the row saw no key); NaN and Inf are not told
 * apart (0 x Inf is NaN, and a weight that underflows in float but not in double
 * turns the reference's Inf into our NaN). Every row is then compared, whatever the budget. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "harness.h"
#include "half.h"

double check_tolerance(attn_dtype t)
{
    return t == ATTN_E4M3 ? CHECK_E4M3_TOLERANCE : t == ATTN_BF16 ? 1e-2 : 2e-3;
}

double check_lse_tolerance(attn_dtype t) { return t == ATTN_E4M3 ? CHECK_E4M3_LSE_MAX : LSE_TOLERANCE; }

/* Row index r over [B, Hq, N] -> (b, h, i). */
static void row_coords(const attn_shape *s, long r, int *b, int *h, int *i)
{
    *i = (int)(r % s->N);
    *h = (int)((r / s->N) % s->Hq);
    *b = (int)(r / ((long)s->N * s->Hq));
}

static void fail(check_result *r, const char *fmt, int b, int h, int i, int c)
{
    if (r->why[0]) return;  /* keep the first */
    snprintf(r->why, sizeof r->why, fmt, b, h, i, c);
}

/* Whether any element of Q, K or V is not finite (inf_only: is an infinity) */
static int inputs_scan(const attn_shape *s, const uint16_t *q, const uint16_t *k, const uint16_t *v, int inf_only)
{
    const size_t nq = attn_q_elems(s), nkv = attn_kv_elems(s);
    const uint16_t *t[3] = {q, k, v};
    for (int x = 0; x < 3; x++)
        for (size_t e = 0, n = x ? nkv : nq; e < n; e++) {
            const float f = elem_to_f32(s->dtype, t[x][e]);
            if (inf_only ? isinf(f) : !isfinite(f)) return 1;
        }
    return 0;
}

int inputs_nonfinite(const attn_shape *s, const uint16_t *q, const uint16_t *k, const uint16_t *v)
{
    return inputs_scan(s, q, k, v, 0);
}

int inputs_infinite(const attn_shape *s, const uint16_t *q, const uint16_t *k, const uint16_t *v)
{
    return inputs_scan(s, q, k, v, 1);
}

/* Pass 1: every element written and finite, empty rows exactly empty. With non-finite inputs (nf)
 * the rows that see a key are left to pass 2, which knows where the reference is not a number. */
static void scan_written(const attn_shape *s, const uint16_t *o, const float *lse, int nf, check_result *r)
{
    long rows = (long)s->B * s->Hq * s->N, bad = 0;
    for (long row = 0; row < rows; row++) {
        int b, h, i;
        row_coords(s, row, &b, &h, &i);
        int empty = attn_row_end(s, i, attn_kv_len(s, b)) == 0;
        if (nf && !empty) continue;
        const uint16_t *orow = o + row * s->d;
        for (int c = 0; c < s->d; c++) {
            float x = elem_to_f32(s->dtype, orow[c]);
            if (!isfinite(x)) {
                bad++;
                fail(r, "O[%d,%d,%d,%d] is NaN/Inf (unwritten?)", b, h, i, c);
            } else if (empty && x != 0.0f) {
                bad++;
                fail(r, "O[%d,%d,%d,%d] should be 0: the row sees no key", b, h, i, c);
            }
        }
        float l = lse[row];
        if (empty ? !(isinf(l) && l < 0) : !isfinite(l)) {
            bad++;
            fail(r, empty ? "LSE[%d,%d,%d] should be -inf: the row sees no key%.0d"
                          : "LSE[%d,%d,%d] is not finite (unwritten?)%.0d", b, h, i, 0);
        }
    }
    r->bad_elems = bad;
}

/* Which rows to compare with the reference: all of them if the budget allows, else the first and
 * last 16 queries of the first and last (b, h) pair (where tail tiles and the causal corner are)
 * plus distinct rows drawn at random until the budget is spent. Every listed row is distinct, so
 * rows_checked counts rows really compared. */
static long pick_rows(const attn_shape *s, double budget, uint64_t seed, long **out, int *sampled)
{
    long rows = (long)s->B * s->Hq * s->N;
    double per_row = 2.0 * s->d * (double)s->M + 1.0;   /* multiply-adds, upper bound */
    long want = budget >= (double)rows * per_row ? rows : (long)(budget / per_row);
    if (want < 64) want = 64;          /* a sample too small to mean anything is not a check */
    long *list = malloc(sizeof(long) * (want < rows ? want + 64 : rows));
    if (want >= rows) {
        for (long r = 0; r < rows; r++) list[r] = r;
        *out = list;
        *sampled = 0;
        return rows;
    }
    unsigned char *taken = calloc((size_t)rows, 1);
    long n = 0;
    long pairs[2] = {0, (long)s->B * s->Hq - 1};
    for (int p = 0; p < 2; p++)
        for (int i = 0; i < s->N; i++) {
            if (i >= 16 && i < s->N - 16) continue;
            long r = pairs[p] * s->N + i;
            if (!taken[r]) { taken[r] = 1; list[n++] = r; }
        }
    /* random distinct rows; want < rows, so this ends */
    for (uint64_t k = 0; n < want; k++) {
        long r = (long)(rng_uniform(seed, 11, k) * rows) % rows;
        if (!taken[r]) { taken[r] = 1; list[n++] = r; }
    }
    free(taken);
    *out = list;
    *sampled = 1;
    return n;
}

void check_output(const attn_shape *s, const uint16_t *q, const uint16_t *k, const uint16_t *v,
                  const uint16_t *o, const float *lse, double budget, uint64_t seed,
                  check_result *r)
{
    memset(r, 0, sizeof *r);
    r->rows_total = (long)s->B * s->Hq * s->N;
    const int nf = inputs_nonfinite(s, q, k, v);
    scan_written(s, o, lse, nf, r);

    long *rows;
    long n = pick_rows(s, nf ? INFINITY : budget, seed, &rows, &r->sampled);
    r->rows_checked = n;
    ref_init();

    double err2 = 0.0, ref2 = 0.0, max_abs = 0.0, lse_err = 0.0, lse2 = 0.0;
    const double lse_tol = check_lse_tolerance(s->dtype);
    long lse_mismatch = -1, lse_rows = 0, nf_bad = 0, nf_first = -1;
    char nf_why[sizeof r->why] = "";
    #pragma omp parallel reduction(+:err2, ref2, lse2, lse_rows, nf_bad) reduction(max:max_abs, lse_err)
    {
        double *out = malloc(sizeof(double) * s->d);
        double *scratch = malloc(sizeof(double) * (size_t)s->M);
        #pragma omp for schedule(dynamic, 4)
        for (long t = 0; t < n; t++) {
            int b, h, i;
            row_coords(s, rows[t], &b, &h, &i);
            double lref = ref_row(s, q, k, v, b, h, i, out, scratch);
            const uint16_t *orow = o + rows[t] * s->d;
            /* non-finite inputs: each element of O, and the LSE (column d; -inf, a row without keys,
             * is pass 1's), a number exactly where the reference's is; an LSE the NaN reached is NaN,
             * not the -inf that says the row saw no key (rung 08 would read it so) */
            for (int c = 0; nf && c <= s->d; c++) {
                if (c == s->d && isinf(lref) && lref < 0) break;
                const double x = c < s->d ? elem_to_f32(s->dtype, orow[c]) : lse[rows[t]];
                const double y = c < s->d ? out[c] : lref;
                if (isfinite(x) == isfinite(y) && !(c == s->d && x == -INFINITY)) continue;
                nf_bad++;
                #pragma omp critical(check_nonfinite)
                if (nf_first < 0 || rows[t] * (s->d + 1) + c < nf_first) {
                    nf_first = rows[t] * (s->d + 1) + c;
                    if (c < s->d)
                        snprintf(nf_why, sizeof nf_why, "O[%d,%d,%d,%d] is %g where the float64 reference is %g",
                                 b, h, i, c, x, y);
                    else
                        snprintf(nf_why, sizeof nf_why, "LSE[%d,%d,%d] is %g where the float64 reference is %g",
                                 b, h, i, x, y);
                }
            }
            for (int c = 0; c < s->d; c++) {
                double x = elem_to_f32(s->dtype, orow[c]);
                if (!isfinite(out[c]) || (nf && !isfinite(x))) continue;   /* judged above */
                double e = fabs(x - out[c]);
                if (!(e <= max_abs)) max_abs = e;   /* NaN propagates as a huge error */
                err2 += (x - out[c]) * (x - out[c]);
                ref2 += out[c] * out[c];
            }
            double l = lse[rows[t]];
            if (isfinite(lref) && (!nf || isfinite(l))) {
                double e = fabs(l - lref);
                if (!(e <= lse_err)) lse_err = isnan(e) ? INFINITY : e;
                lse2 += isfinite(e) ? e * e : INFINITY;
                lse_rows++;
                if (!(e <= lse_tol)) {
                    #pragma omp critical(check_first)
                    if (lse_mismatch < 0 || rows[t] < lse_mismatch) lse_mismatch = rows[t];
                }
            }
        }
        free(out);
        free(scratch);
    }
    free(rows);

    r->rel_err = ref2 > 0.0 ? sqrt(err2 / ref2) : sqrt(err2);
    if (isnan(r->rel_err)) r->rel_err = INFINITY;
    r->max_abs_err = max_abs;
    r->lse_err = lse_err;
    r->bad_elems += nf_bad;
    r->lse_rms = lse_rows ? sqrt(lse2 / lse_rows) : 0.0;
    r->rmse = n > 0 ? sqrt(err2 / ((double)n * s->d)) : 0.0;
    if (isnan(r->rmse)) r->rmse = INFINITY;

    double tol = check_tolerance(s->dtype);
    const int lse_rms_bad = s->dtype == ATTN_E4M3 && !(r->lse_rms <= CHECK_E4M3_LSE_RMS);
    r->pass = r->bad_elems == 0 && r->rel_err <= tol && lse_mismatch < 0 && !lse_rms_bad;
    if (!r->pass && !r->why[0]) {
        if (nf_bad) snprintf(r->why, sizeof r->why, "%s", nf_why);
        else if (r->rel_err > tol)
            snprintf(r->why, sizeof r->why, "rel-L2 error of O %.3g > %.0e", r->rel_err, tol);
        else if (lse_mismatch < 0)
            snprintf(r->why, sizeof r->why, "root mean square of the LSE errors %.3g > %.0e", r->lse_rms,
                     CHECK_E4M3_LSE_RMS);
        else {
            int b, h, i;
            row_coords(s, lse_mismatch, &b, &h, &i);
            snprintf(r->why, sizeof r->why, "LSE[%d,%d,%d] off by more than %.0e (max %.3g)",
                     b, h, i, lse_tol, lse_err);
        }
    }
}
