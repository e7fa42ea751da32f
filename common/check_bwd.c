/* Checking a backward rung's dQ, dK and dV (rung 08) against the float64 reference (ref_bwd.c), with
 * the forward's rules (check.c):
 *  1. Every element written and a number: the driver poisons dQ, dK and dV with NaN before every
 *     launch; this scan covers every element, always. A row that sees no key must have dQ = 0
 *     exactly; a key past its request's length dK = dV = 0.
 *  2. The values: rel-L2 of each of dQ, dK, dV under the forward's tolerance (check_tolerance). The
 *     reference works a (b, KV head) group at a time (dK and dV of a key need every row that sees
 *     it), so the sample is of whole groups: every group when the budget allows, else the last
 *     group, then the first, then random ones until the budget is spent. One group is always
 *     checked, whatever its cost (7 G N M d multiply-adds: ref_bwd_group_cost).
 * Non-finite inputs (inputs_nonfinite): every group is compared, and each gradient element must be
 * NaN or Inf exactly where the reference's is (check.c says why NaN and Inf are not told apart). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "harness.h"
#include "half.h"

static const char *const grad_names[3] = {"dQ", "dK", "dV"};

static long scan_grads(const attn_shape *s, const uint16_t *g[3], int nf, check_result *r)
{
    long bad = 0;
    const long qrows = (long)s->B * s->Hq * s->N, krows = (long)s->B * s->Hkv * s->M;
    for (int w = 0; w < 3; w++) {
        const long rows = w == 0 ? qrows : krows;
        for (long row = 0; row < rows; row++) {
            int zero;
            if (w == 0) {
                const int i = (int)(row % s->N), b = (int)(row / ((long)s->N * s->Hq));
                zero = attn_row_end(s, i, attn_kv_len(s, b)) == 0;
            } else {
                const int j = (int)(row % s->M), b = (int)(row / ((long)s->M * s->Hkv));
                zero = j >= attn_kv_len(s, b);
            }
            for (int c = 0; c < s->d; c++) {
                const float x = elem_to_f32(s->dtype, g[w][row * s->d + c]);
                if ((isfinite(x) || (nf && !zero)) && (!zero || x == 0.0f)) continue;
                if (!bad++ && !r->why[0])
                    snprintf(r->why, sizeof r->why, !isfinite(x) ? "%s row %ld column %d is NaN/Inf (unwritten?)"
                             : w == 0 ? "%s row %ld column %d should be 0: the row sees no key"
                                      : "%s row %ld column %d should be 0: no row sees the key",
                             grad_names[w], row, c);
            }
        }
    }
    return bad;
}

void check_grads(const attn_shape *s, const uint16_t *q, const uint16_t *k, const uint16_t *v,
                 const uint16_t *dout, const uint16_t *dq, const uint16_t *dk, const uint16_t *dv,
                 double budget, uint64_t seed, check_result *r, double rel[3])
{
    memset(r, 0, sizeof *r);
    const uint16_t *g[3] = {dq, dk, dv};
    const int G = s->Hq / s->Hkv;
    const long groups = (long)s->B * s->Hkv;
    r->rows_total = (long)s->B * s->Hq * s->N;
    const int nf = inputs_nonfinite(s, q, k, v);
    r->bad_elems = scan_grads(s, g, nf, r);

    /* the groups to compare: all, or the last, the first, then random ones within the budget */
    const double cost = ref_bwd_group_cost(s);
    long want = (long)(budget / cost);
    if (want < 1) want = 1;
    if (want > groups || nf) want = groups;
    long *list = malloc(sizeof(long) * want);
    unsigned char *taken = calloc((size_t)groups, 1);
    long n = 0;
    if (want == groups) {
        for (long x = 0; x < groups; x++) list[n++] = x;
    } else {
        list[n++] = groups - 1;
        taken[groups - 1] = 1;
        if (n < want && !taken[0]) { list[n++] = 0; taken[0] = 1; }
        for (uint64_t t = 0; n < want; t++) {
            long x = (long)(rng_uniform(seed, 12, t) * groups) % groups;
            if (!taken[x]) { taken[x] = 1; list[n++] = x; }
        }
    }
    free(taken);
    r->sampled = n < groups;
    r->rows_checked = n * G * (long)s->N;

    double err2[3] = {0, 0, 0}, ref2[3] = {0, 0, 0}, max_abs = 0.0;
    ref_bwd_out ref;
    if (ref_bwd_alloc(s, &ref)) {
        snprintf(r->why, sizeof r->why, "host memory: cannot hold the backward reference of one group");
        free(list);
        return;
    }
    const size_t qn = (size_t)G * s->N * s->d, kn = (size_t)s->M * s->d;
    for (long t = 0; t < n; t++) {
        const int b = (int)(list[t] / s->Hkv), kvh = (int)(list[t] % s->Hkv);
        if (ref_bwd_group(s, q, k, v, dout, b, kvh, &ref)) {
            snprintf(r->why, sizeof r->why, "host memory: cannot convert one group for the reference");
            break;
        }
        const size_t off[3] = {((size_t)b * s->Hq + (size_t)kvh * G) * s->N * s->d,
                               ((size_t)b * s->Hkv + kvh) * kn, ((size_t)b * s->Hkv + kvh) * kn};
        const double *want_[3] = {ref.dq, ref.dk, ref.dv};
        const size_t cnt[3] = {qn, kn, kn};
        for (int w = 0; w < 3; w++)
            for (size_t e = 0; e < cnt[w]; e++) {
                const double x = elem_to_f32(s->dtype, g[w][off[w] + e]), y = want_[w][e], d = fabs(x - y);
                if (nf && isfinite(x) != isfinite(y)) {
                    if (!r->bad_elems++ && !r->why[0])
                        snprintf(r->why, sizeof r->why, "%s row %zu column %zu is %g where the float64 reference is %g",
                                 grad_names[w], off[w] / s->d + e / s->d, e % s->d, x, y);
                    continue;
                }
                if (nf && !isfinite(y)) continue;   /* the NaN or Inf reached this element, as it should */
                if (!(d <= max_abs)) max_abs = isnan(d) ? INFINITY : d;
                err2[w] += (x - y) * (x - y);
                ref2[w] += y * y;
            }
    }
    ref_bwd_free(&ref);
    free(list);

    const double tol = check_tolerance(s->dtype);
    int worst = 0;
    for (int w = 0; w < 3; w++) {
        rel[w] = ref2[w] > 0.0 ? sqrt(err2[w] / ref2[w]) : sqrt(err2[w]);
        if (isnan(rel[w])) rel[w] = INFINITY;
        if (rel[w] > rel[worst]) worst = w;
    }
    r->rel_err = rel[worst];
    r->max_abs_err = max_abs;
    r->pass = !r->why[0] && r->bad_elems == 0 && r->rel_err <= tol;
    if (!r->pass && !r->why[0])
        snprintf(r->why, sizeof r->why, "rel-L2 error of %s %.3g > %.0e", grad_names[worst], r->rel_err, tol);
}
