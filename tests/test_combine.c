/* Rung 06's combine math (06_split_kv/combine.h): a row's keys cut into pieces, each piece's
 * (o_c, lse_c) from the definition in float64, merged in float by combine_weights, must give the
 * unsplit row; masked pieces (lse_c = -inf) weigh nothing; a fully masked row gives O = 0,
 * LSE = -inf. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include "test.h"
#include "../common/harness.h"
#include "../06_split_kv/combine.h"

#define MAXK 300   /* keys in a row */
#define D 16       /* head dim */
#define MAXP 5     /* pieces */

static rng_stream rs;   /* common/inputs.c's counter-based generator, as a sequence */
static uint64_t rng(void) { return rng_next(&rs); }
static double unif(void) { return ((double)(rng() >> 11) + 0.5) / 9007199254740992.0; }
static double normal(void) { return sqrt(-2.0 * log(unif())) * cos(6.283185307179586 * unif()); }

/* softmax over keys [a, b) of scores x (-inf = masked), straight from the definition:
 * o = sum_j exp(x_j - m) v_j / sum_j exp(x_j - m), lse = m + log(sum_j exp(x_j - m)).
 * No unmasked key: o = 0, lse = -inf. */
static void piece(const double *x, double (*v)[D], int a, int b, double *o, double *lse)
{
    double m = -INFINITY, l = 0.0;
    for (int j = a; j < b; j++) m = fmax(m, x[j]);
    for (int i = 0; i < D; i++) o[i] = 0.0;
    if (m == -INFINITY) {
        *lse = -INFINITY;
        return;
    }
    for (int j = a; j < b; j++) {
        if (x[j] == -INFINITY) continue;
        double p = exp(x[j] - m);
        l += p;
        for (int i = 0; i < D; i++) o[i] += p * v[j][i];
    }
    for (int i = 0; i < D; i++) o[i] /= l;
    *lse = m + log(l);
}

static void combine_matches_unsplit(void)
{
    static double x[MAXK], v[MAXK][D];
    rs = (rng_stream){6, 0, 0};
    int masked_pieces = 0, masked_rows = 0;
    for (int it = 0; it < 2000; it++) {
        int nk = 1 + (int)(rng() % MAXK);
        int np = 1 + (int)(rng() % MAXP);
        if (np > nk) np = nk;
        double spread = it % 4 == 3 ? 20.0 : 3.0;   /* some rows with a sharp softmax */
        double shift = 10.0 * normal();
        int mask_kind = it % 5;   /* 0: none; 1: random keys; 2: a masked prefix; 3: suffix; 4: all */
        int cut = (int)(rng() % (uint64_t)(nk + 1));
        for (int j = 0; j < nk; j++) {
            x[j] = shift + spread * normal();
            for (int i = 0; i < D; i++) v[j][i] = normal();
            int m = mask_kind == 1 ? (rng() % 3 == 0)
                  : mask_kind == 2 ? j < cut
                  : mask_kind == 3 ? j >= cut
                  : mask_kind == 4;
            if (m) x[j] = -INFINITY;
        }
        /* cut points: np - 1 distinct interior boundaries, sorted */
        int bnd[MAXP + 1];
        bnd[0] = 0;
        bnd[np] = nk;
        for (int c = 1; c < np; c++) {
            int t;
            int dup;
            do {
                t = 1 + (int)(rng() % (uint64_t)(nk - 1));
                dup = 0;
                for (int e = 1; e < c; e++) dup |= bnd[e] == t;
            } while (dup);
            int e = c;
            while (e > 1 && bnd[e - 1] > t) { bnd[e] = bnd[e - 1]; e--; }
            bnd[e] = t;
        }

        double o_ref[D], lse_ref;
        piece(x, v, 0, nk, o_ref, &lse_ref);
        float oc[MAXP][D], lse[MAXP], w[MAXP];
        for (int c = 0; c < np; c++) {
            double o[D], l;
            EXPECT(bnd[c + 1] > bnd[c]);
            piece(x, v, bnd[c], bnd[c + 1], o, &l);
            for (int i = 0; i < D; i++) oc[c][i] = (float)o[i];
            lse[c] = (float)l;
            masked_pieces += l == -INFINITY;
        }
        float L = combine_weights(lse, np, w);
        float o[D];
        for (int i = 0; i < D; i++) {
            o[i] = 0.0f;
            for (int c = 0; c < np; c++) o[i] += w[c] * oc[c][i];
        }
        for (int c = 0; c < np; c++)
            EXPECT_MSG(w[c] >= 0.0f && w[c] <= 1.0f && (lse[c] != -INFINITY || w[c] == 0.0f),
                       "row %d: weight %g for lse %g", it, w[c], lse[c]);
        if (lse_ref == -INFINITY) {
            masked_rows++;
            EXPECT_MSG(L == -INFINITY, "row %d fully masked: LSE %g", it, L);
            for (int i = 0; i < D; i++) EXPECT_MSG(o[i] == 0.0f, "row %d fully masked: o[%d] = %g", it, i, o[i]);
            continue;
        }
        double num = 0.0, den = 0.0;
        for (int i = 0; i < D; i++) {
            num += (o[i] - o_ref[i]) * (o[i] - o_ref[i]);
            den += o_ref[i] * o_ref[i];
        }
        double rel = sqrt(num / den);
        EXPECT_MSG(rel < 1e-5, "row %d (%d keys, %d pieces): rel err of O %.3g", it, nk, np, rel);
        EXPECT_MSG(fabs(L - lse_ref) <= 1e-5 * fmax(1.0, fabs(lse_ref)),
                   "row %d: LSE %.9g, expected %.9g", it, L, lse_ref);
    }
    EXPECT_MSG(masked_pieces > 100 && masked_rows > 100, "only %d masked pieces, %d masked rows",
               masked_pieces, masked_rows);
}

/* Two pieces by hand: lse 0 and log 3 (denominators 1 and 3) weigh 1/4 and 3/4, LSE = log 4;
 * a masked third piece changes nothing; every piece masked gives -inf and zero weights. */
static void combine_by_hand(void)
{
    float w[3];
    const float lse[3] = {0.0f, logf(3.0f), -INFINITY};
    float L = combine_weights(lse, 3, w);
    EXPECT_NEAR(L, log(4.0), 1e-6);
    EXPECT_NEAR(w[0], 0.25, 1e-6);
    EXPECT_NEAR(w[1], 0.75, 1e-6);
    EXPECT(w[2] == 0.0f);
    /* large LSEs must not overflow: exp(1000) is inf in float */
    const float big[2] = {1000.0f, 1000.0f};
    L = combine_weights(big, 2, w);
    EXPECT_NEAR(L, 1000.0 + log(2.0), 1e-4);
    EXPECT_NEAR(w[0], 0.5, 1e-6);
    const float none[2] = {-INFINITY, -INFINITY};
    L = combine_weights(none, 2, w);
    EXPECT(L == -INFINITY && w[0] == 0.0f && w[1] == 0.0f);
    EXPECT(combine_lse(none, 0) == -INFINITY);
    EXPECT(combine_weight(-INFINITY, combine_state(none, 2)) == 0.0f);
    /* in place, as a kernel does with one shared array: the weights overwrite the LSEs */
    float io[3] = {0.0f, logf(3.0f), -INFINITY};
    L = combine_weights(io, 3, io);
    EXPECT_NEAR(L, log(4.0), 1e-6);
    EXPECT(fabsf(io[0] - 0.25f) < 1e-6f && fabsf(io[1] - 0.75f) < 1e-6f && io[2] == 0.0f);
    /* a NaN partial (a NaN reached that piece) makes the LSE NaN, with or without finite pieces */
    const float nan1[3] = {0.0f, NAN, -INFINITY}, nan2[2] = {NAN, -INFINITY};
    EXPECT(isnan(combine_lse(nan1, 3)) && isnan(combine_lse(nan2, 2)));
}

const test_case TESTS_combine[] = {
    {"combine_matches_unsplit", combine_matches_unsplit},
    {"combine_by_hand", combine_by_hand},
    {NULL, NULL},
};
