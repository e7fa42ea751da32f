/* The online-softmax state {m, d} of common/softmax_state.h: the identity, a worked stream by hand, and that
 * the merge gives the same state whatever the order or the tree (the property every rung's
 * reductions rely on). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include "test.h"
#include "../common/harness.h"
#include "../common/softmax_state.h"

#define NS 64   /* stream length for the order tests */

static int is_identity(md_t s) { return s.m == -INFINITY && s.d == 0.0f; }

static void md_identity_laws(void)
{
    md_t id = md_identity();
    EXPECT(id.m == -INFINITY && id.d == 0.0f);

    const float xs[] = {0.0f, 3.5f, -7.25f, 1000.0f, -1000.0f};
    for (int i = 0; i < 5; i++) {
        md_t x = md_of(xs[i]);
        EXPECT(x.m == xs[i] && x.d == 1.0f);
        md_t l = md_merge(id, x), r = md_merge(x, id);
        EXPECT_MSG(l.m == x.m && l.d == x.d, "identity (+) {%g,1} = {%g,%g}", xs[i], l.m, l.d);
        EXPECT_MSG(r.m == x.m && r.d == x.d, "{%g,1} (+) identity = {%g,%g}", xs[i], r.m, r.d);
    }
    md_t s = {2.0f, 3.25f};   /* an arbitrary state */
    md_t l = md_merge(id, s);
    EXPECT(l.m == 2.0f && l.d == 3.25f);

    md_t ii = md_merge(id, id);
    EXPECT_MSG(is_identity(ii) && !isnan(ii.d), "identity (+) identity = {%g,%g}", ii.m, ii.d);
    EXPECT(md_lse(ii) == -INFINITY);
    EXPECT(md_lse(id) == -INFINITY);

    /* a masked score is the identity, and merging it changes nothing */
    md_t masked = md_of(-INFINITY);
    EXPECT(is_identity(masked));
    md_t y = md_merge(md_of(1.5f), masked);
    EXPECT(y.m == 1.5f && y.d == 1.0f);
    /* a long run of masked scores stays empty, never NaN */
    md_t run = md_identity();
    for (int i = 0; i < 10; i++) run = md_merge(run, md_of(-INFINITY));
    EXPECT(is_identity(run));
}

/* The stream 3, 2, 5, 1: m = 5, d = e^-2 + e^-3 + 1 + e^-4 = 1.2034379905, lse = 5.1851824526. */
static void md_worked_stream(void)
{
    md_t s = md_of(3.0f);
    EXPECT(s.m == 3.0f && s.d == 1.0f);
    s = md_merge(s, md_of(2.0f));
    EXPECT(s.m == 3.0f);
    EXPECT_NEAR(s.d, 1.3678794412, 1e-6);                 /* 1 + e^-1 */
    s = md_merge(s, md_of(5.0f));
    EXPECT(s.m == 5.0f);                                  /* the max moved: old d rescaled by e^-2 */
    EXPECT_NEAR(s.d, 1.1851224875, 1e-6);                 /* e^-2 + e^-3 + 1 */
    s = md_merge(s, md_of(1.0f));
    EXPECT(s.m == 5.0f);
    EXPECT_NEAR(s.d, 1.2034379905, 1e-6);                 /* + e^-4 */
    EXPECT_NEAR(md_lse(s), 5.1851824526, 1e-6);

    /* the softmax it implies: exp(x - m) / d */
    EXPECT_NEAR(expf(5.0f - s.m) / s.d, 0.8309526, 1e-6);

    /* same stream, other orders */
    md_t r = md_merge(md_merge(md_of(1.0f), md_of(5.0f)), md_merge(md_of(2.0f), md_of(3.0f)));
    EXPECT(r.m == 5.0f);
    EXPECT_NEAR(r.d, 1.2034379905, 1e-6);
}

/* Scores at large magnitude: no overflow, since only differences are exponentiated. */
static void md_large_scores(void)
{
    md_t s = md_merge(md_of(1000.0f), md_of(999.0f));
    EXPECT(s.m == 1000.0f);
    EXPECT_NEAR(s.d, 1.3678794412, 1e-6);
    EXPECT_NEAR(md_lse(s), 1000.3132617, 1e-4);
    md_t t = md_merge(md_of(-1000.0f), md_of(-1001.0f));
    EXPECT(t.m == -1000.0f);
    EXPECT_NEAR(t.d, 1.3678794412, 1e-6);
    md_t u = md_merge(md_of(80.0f), md_of(-80.0f));   /* exp(-160) underflows to 0 in float */
    EXPECT(u.m == 80.0f && u.d == 1.0f);
}

static void make_stream(float *x, int n, uint64_t seed)
{
    for (int i = 0; i < n; i++) x[i] = (float)(8.0 * rng_normal(seed, 42, (uint64_t)i));
}

static md_t fold(const float *x, const int *idx, int n)
{
    md_t s = md_identity();
    for (int i = 0; i < n; i++) s = md_merge(s, md_of(x[idx ? idx[i] : i]));
    return s;
}

/* Pairwise tree over x[idx[lo..hi)] (the shape of a block reduction). */
static md_t tree(const float *x, const int *idx, int lo, int hi)
{
    if (hi - lo == 1) return md_of(x[idx[lo]]);
    int mid = lo + (hi - lo) / 2;
    return md_merge(tree(x, idx, lo, mid), tree(x, idx, mid, hi));
}

/* 32 lanes each fold a strided slice, then a butterfly across the lanes (a warp shuffle). */
static md_t warp_like(const float *x, int n)
{
    md_t lane[32];
    for (int l = 0; l < 32; l++) {
        lane[l] = md_identity();
        for (int i = l; i < n; i += 32) lane[l] = md_merge(lane[l], md_of(x[i]));
    }
    for (int off = 16; off >= 1; off >>= 1) {
        md_t nxt[32];
        for (int l = 0; l < 32; l++) nxt[l] = md_merge(lane[l], lane[l ^ off]);
        for (int l = 0; l < 32; l++) lane[l] = nxt[l];
    }
    /* every lane ends with the same state (d only up to rounding: lane l computes merge(x, y)
     * where its partner computes merge(y, x), and a contracted multiply-add may differ) */
    for (int l = 1; l < 32; l++)
        if (lane[l].m != lane[0].m || fabs((double)lane[l].d - lane[0].d) > 1e-6 * lane[0].d)
            return (md_t){NAN, NAN};
    return lane[0];
}

static void shuffle(int *idx, int n, uint64_t seed)
{
    for (int i = 0; i < n; i++) idx[i] = i;
    for (int i = n - 1; i > 0; i--) {
        int j = (int)(rng_uniform(seed, 9, (uint64_t)i) * (i + 1));
        int t = idx[i]; idx[i] = idx[j]; idx[j] = t;
    }
}

static void expect_same_state(md_t a, md_t ref, const char *what)
{
    EXPECT_MSG(a.m == ref.m, "%s: m = %.9g, expected %.9g exactly", what, a.m, ref.m);
    EXPECT_MSG(fabs((double)a.d - ref.d) <= 1e-6 * ref.d, "%s: d = %.9g, expected %.9g (rel %.2g)",
               what, a.d, ref.d, fabs((double)a.d - ref.d) / ref.d);
}

static void md_order_independent(void)
{
    for (uint64_t seed = 1; seed <= 20; seed++) {
        float x[NS];
        int idx[NS], rev[NS], id[NS];
        make_stream(x, NS, seed);
        for (int i = 0; i < NS; i++) { rev[i] = NS - 1 - i; id[i] = i; }
        shuffle(idx, NS, seed);

        /* the truth, in float64 */
        double mx = -INFINITY, dd = 0.0;
        for (int i = 0; i < NS; i++) if (x[i] > mx) mx = x[i];
        for (int i = 0; i < NS; i++) dd += exp((double)x[i] - mx);

        md_t fwd = fold(x, NULL, NS);
        EXPECT(fwd.m == (float)mx);
        EXPECT_MSG(fabs(fwd.d - dd) <= 1e-6 * dd, "seed %d: forward d = %.9g, float64 %.9g",
                   (int)seed, fwd.d, dd);
        expect_same_state(fold(x, rev, NS), fwd, "reversed");
        expect_same_state(fold(x, idx, NS), fwd, "shuffled");
        expect_same_state(tree(x, id, 0, NS), fwd, "tree");
        expect_same_state(tree(x, idx, 0, NS), fwd, "shuffled tree");
        expect_same_state(tree(x, id, 0, NS - 5), md_merge(fold(x, NULL, NS - 5), md_identity()),
                          "uneven tree");
        expect_same_state(warp_like(x, NS), fwd, "32 lanes + butterfly");
        EXPECT_NEAR(md_lse(fold(x, idx, NS)), mx + log(dd), 1e-5);
    }
}

/* The split-KV identity: the state of a row is the merge of the states of its two halves (at any
 * split point, including an empty half). */
static void md_halves_equal_one_pass(void)
{
    float x[NS];
    make_stream(x, NS, 77);
    md_t whole = fold(x, NULL, NS);
    const int cuts[] = {0, 1, 17, 32, 63, NS};
    for (int c = 0; c < 6; c++) {
        int k = cuts[c];
        md_t a = fold(x, NULL, k), b = fold(x + k, NULL, NS - k);
        md_t ab = md_merge(a, b), ba = md_merge(b, a);
        expect_same_state(ab, whole, "halves");
        expect_same_state(ba, whole, "halves swapped");
        EXPECT_NEAR(md_lse(ab), md_lse(whole), 1e-5);
    }
    /* and the softmax weights from the merged state sum to 1 */
    md_t s = md_merge(fold(x, NULL, 20), fold(x + 20, NULL, NS - 20));
    double sum = 0.0;
    for (int i = 0; i < NS; i++) sum += expf(x[i] - s.m) / s.d;
    EXPECT_NEAR(sum, 1.0, 1e-5);
}

/* A NaN or +inf score reaches d and the LSE whatever the order it is merged in, even into the
 * identity (fmaxf skips NaN, so m alone would lose it); -inf scores stay the identity. */
static void md_nonfinite(void)
{
    const float xs[4] = {1.0f, NAN, -2.0f, INFINITY};
    for (int bad = 1; bad <= 3; bad += 2)
        for (int first = 0; first < 4; first++) {
            md_t s = md_identity();
            for (int t = 0; t < 4; t++) {
                const int j = (first + t) % 4;
                if (j == 1 || j == 3) { if (j == bad) s = md_merge(s, md_of(xs[j])); }
                else s = md_merge(s, md_of(xs[j]));
            }
            EXPECT_MSG(isnan(s.d) && isnan(md_lse(s)), "score %g merged from %d: d %g lse %g", xs[bad], first, s.d,
                       md_lse(s));
        }
    md_t s = md_merge(md_of(NAN), md_identity());
    EXPECT(isnan(s.d) && isnan(md_lse(s)));
    s = md_merge(md_identity(), md_merge(md_of(-INFINITY), md_of(-INFINITY)));
    EXPECT(s.d == 0.0f && md_lse(s) == -INFINITY);
    EXPECT(md_of(3.0f).d == 1.0f && md_of(-1e30f).d == 1.0f);
}

const test_case TESTS_md[] = {
    {"md: {-inf,0} is the identity; identity (+) identity has d = 0, no NaN", md_identity_laws},
    {"md: worked stream 3,2,5,1 -> m=5, d=e^-2+e^-3+1+e^-4, lse", md_worked_stream},
    {"md: large-magnitude scores do not overflow", md_large_scores},
    {"md: merge order and tree shape do not change {m, d}", md_order_independent},
    {"md: merging two halves equals one pass", md_halves_equal_one_pass},
    {"md: a NaN or +inf score makes d and the LSE NaN in any order; -inf stays the identity", md_nonfinite},
    {NULL, NULL},
};
