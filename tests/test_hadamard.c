/* Incoherent processing of common/hadamard.cuh: the transform is the Walsh-Hadamard matrix, the map
 * H D is orthogonal and undone by its inverse, it keeps dot products (so Q K^T), it flattens an
 * outlier, and its signs depend on the seed alone. Rows are random normal, seeded. */
#include <math.h>
#include <stdint.h>
#include "test.h"
#include "../common/hadamard.cuh"
#include "../common/harness.h"

enum { DMAX = 256, ROWS = 50 };
static const int dims[] = {16, 32, 64, 128, 256};
#define NDIMS 5

static void fill_row(float *x, int d, uint64_t stream)
{
    for (int j = 0; j < d; j++) x[j] = (float)rng_normal(24, stream, (uint64_t)j);
}

static double dot(const float *a, const float *b, int d)
{
    double s = 0;
    for (int j = 0; j < d; j++) s += (double)a[j] * b[j];
    return s;
}

static void dims_accepted(void)
{
    for (int i = 0; i < NDIMS; i++) EXPECT(hadamard_dim_ok(dims[i]));
    EXPECT(!hadamard_dim_ok(8) && !hadamard_dim_ok(512) && !hadamard_dim_ok(96) && !hadamard_dim_ok(0));
}

/* Column i of H is H e_i, and the Sylvester-Hadamard matrix has H[j][i] = (-1)^popcount(i & j):
 * a worked example that the butterflies build this matrix and no other. */
static void transform_is_walsh_hadamard(void)
{
    int bad = 0;
    for (int n = 0; n < NDIMS; n++) {
        int d = dims[n];
        float r = 1.0f / sqrtf((float)d), x[DMAX];
        for (int i = 0; i < d; i++) {
            for (int j = 0; j < d; j++) x[j] = (j == i);
            hadamard_transform(x, d);
            for (int j = 0; j < d; j++)
                if (x[j] != (__builtin_popcount((unsigned)(i & j)) & 1 ? -r : r)) bad++;
        }
    }
    EXPECT_MSG(bad == 0, "%d entries of H differ from (-1)^popcount(i & j) / sqrt(d)", bad);
}

/* |H D x| = |x| to 1e-6 relative (seen: <= 6e-8), and the inverse gives x back to 2e-6 of x's RMS
 * (seen: <= 5e-7): there and back, 2 log2(d) <= 16 passes of butterflies and two scalings each
 * round to 2^-24 = 6e-8 relative, and the worst of d entries collects a few of those. */
static void map_is_orthogonal(void)
{
    for (int n = 0; n < NDIMS; n++) {
        int d = dims[n];
        double worst_norm = 0, worst_back = 0;
        for (int t = 0; t < ROWS; t++) {
            float x[DMAX], y[DMAX];
            fill_row(x, d, (uint64_t)(100 * d + t));
            for (int j = 0; j < d; j++) y[j] = x[j];
            incoherent_forward(y, d, (uint32_t)t);
            double nx = sqrt(dot(x, x, d)), ny = sqrt(dot(y, y, d));
            worst_norm = fmax(worst_norm, fabs(ny - nx) / nx);
            incoherent_inverse(y, d, (uint32_t)t);
            for (int j = 0; j < d; j++) worst_back = fmax(worst_back, fabs(y[j] - x[j]) / (nx / sqrt(d)));
        }
        EXPECT_MSG(worst_norm <= 1e-6, "d = %d: | |HDx| - |x| | / |x| = %.2e", d, worst_norm);
        EXPECT_MSG(worst_back <= 2e-6, "d = %d: inverse(forward(x)) off by %.2e of x's RMS", d, worst_back);
    }
}

/* (M q) . (M k) = q . k to 1e-5 of |q| |k| (the size of q . k's terms; q . k itself may be near 0).
 * With different seeds for q and k the dot product is not kept: the seed must be shared. */
static void dot_products_kept(void)
{
    int other_seed_changed = 0;
    for (int n = 0; n < NDIMS; n++) {
        int d = dims[n];
        double worst = 0;
        for (int t = 0; t < ROWS; t++) {
            float q[DMAX], k[DMAX], k2[DMAX];
            fill_row(q, d, (uint64_t)(200 * d + t));
            fill_row(k, d, (uint64_t)(300 * d + t));
            double before = dot(q, k, d), scale = sqrt(dot(q, q, d) * dot(k, k, d));
            for (int j = 0; j < d; j++) k2[j] = k[j];
            incoherent_forward(q, d, 5);
            incoherent_forward(k, d, 5);
            incoherent_forward(k2, d, 6);
            worst = fmax(worst, fabs(dot(q, k, d) - before) / scale);
            if (fabs(dot(q, k2, d) - before) > 0.01 * scale) other_seed_changed++;
        }
        EXPECT_MSG(worst <= 1e-5, "d = %d: q . k moved by %.2e of |q| |k|", d, worst);
    }
    EXPECT_MSG(other_seed_changed >= NDIMS * ROWS * 8 / 10,
               "only %d of %d dot products changed when k used another seed", other_seed_changed,
               NDIMS * ROWS);
}

static double max_over_rms(const float *x, int d)
{
    double mx = 0;
    for (int j = 0; j < d; j++) mx = fmax(mx, fabs(x[j]));
    return mx / sqrt(dot(x, x, d) / d);
}

/* A row of N(0, 1) with one entry of 100: its max/RMS is close to sqrt(d) (the spike carries most
 * of the norm). After H D the spike is +-100/sqrt(d) on every entry and the N(0, 1) part is still
 * N(0, 1) (an orthogonal map of independent normals), so every |entry| <= 100/sqrt(d) + (about 4,
 * the largest of <= 256 normals) while the RMS is >= 100/sqrt(d): max/RMS <= 1 + 4 sqrt(d)/100,
 * at most 1.64 (d = 256). Seen: >= 0.98 sqrt(d) before, <= 1.56 after. The test asks for <= 2
 * after and >= 0.8 sqrt(d) before: as the RMS is kept, the block scale (amax / 448) of such a row
 * shrinks by sqrt(d)/2.5 or more, 1.6x at d = 16 to 6.4x at d = 256. */
static void outlier_flattened(void)
{
    for (int n = 0; n < NDIMS; n++) {
        int d = dims[n];
        double worst_before = INFINITY, worst_after = 0;
        for (int t = 0; t < ROWS; t++) {
            float x[DMAX];
            fill_row(x, d, (uint64_t)(400 * d + t));
            x[(t * 37) % d] = (t & 1) ? -100.0f : 100.0f;
            worst_before = fmin(worst_before, max_over_rms(x, d));
            incoherent_forward(x, d, (uint32_t)t);
            worst_after = fmax(worst_after, max_over_rms(x, d));
        }
        EXPECT_MSG(worst_before >= 0.8 * sqrt(d), "d = %d: max/RMS before %.2f < 0.8 sqrt(d)", d, worst_before);
        EXPECT_MSG(worst_after <= 2.0, "d = %d: max/RMS after the map %.2f > 2", d, worst_after);
    }
}

/* The signs are a function of (seed, column): the same twice; about half of them -1; and 100 seeds
 * give 100 unrelated patterns: every pair differs in 32 to 96 of 128 columns (two independent
 * patterns differ in 64 +- 5.7, so this is 5.6 standard deviations either side), and the counts of
 * -1 vary from seed to seed (a seed that only permuted the columns, hash(j ^ seed), would give
 * every seed below 128 the same count). */
static void signs_deterministic_and_seeded(void)
{
    enum { SEEDS = 100, D = 128 };
    static float s[SEEDS][D];
    int bad = 0, counts_seen[D + 1] = {0}, distinct = 0;
    for (int a = 0; a < SEEDS; a++) {
        int neg = 0;
        for (int j = 0; j < D; j++) {
            s[a][j] = hadamard_sign((uint32_t)a, j);
            if (s[a][j] != hadamard_sign((uint32_t)a, j) || (s[a][j] != 1.0f && s[a][j] != -1.0f)) bad++;
            neg += s[a][j] < 0;
        }
        EXPECT_MSG(neg >= 32 && neg <= 96, "seed %d: %d of %d signs are -1", a, neg, D);
        distinct += counts_seen[neg]++ == 0;
    }
    EXPECT_MSG(distinct >= 10, "only %d different counts of -1 over %d seeds", distinct, SEEDS);
    EXPECT_MSG(bad == 0, "%d signs not +-1 or not the same twice", bad);
    int close = 0;
    for (int a = 0; a < SEEDS; a++)
        for (int b = a + 1; b < SEEDS; b++) {
            int differ = 0;
            for (int j = 0; j < D; j++) differ += s[a][j] != s[b][j];
            if (differ < 32 || differ > 96) {
                if (!close) EXPECT_MSG(0, "seeds %d and %d differ in %d of %d columns", a, b, differ, D);
                close++;
            }
        }
    EXPECT_MSG(close == 0, "%d pairs of seeds with related sign patterns", close);
}

const test_case TESTS_hadamard[] = {
    {"hadamard: d = 16..256 powers of two accepted, others refused", dims_accepted},
    {"hadamard: the transform is the Walsh-Hadamard matrix / sqrt(d)", transform_is_walsh_hadamard},
    {"hadamard: H D keeps the norm (1e-6) and its inverse gives x back (2e-6)", map_is_orthogonal},
    {"hadamard: q . k kept by the same map (1e-5 of |q||k|), not by two seeds", dot_products_kept},
    {"hadamard: an outlier of 100 in N(0,1): max/RMS from >= 0.8 sqrt(d) to <= 2", outlier_flattened},
    {"hadamard: signs deterministic per seed, balanced, unrelated across seeds", signs_deterministic_and_seeded},
    {NULL, NULL},
};
