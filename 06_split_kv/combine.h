/* Merging the partial results of one query row (rung 06's combine step).
 *
 * A row whose keys were cut into n pieces comes back as n partials: piece c gives o_c (its output,
 * already divided by its own softmax denominator) and lse_c = m_c + log(l_c), the log-sum-exp of
 * its scores (FlashAttention's LSE; -inf for a piece whose keys are all masked). The whole row is
 *     LSE = log(sum_c exp(lse_c)),     O = sum_c w_c * o_c,     w_c = exp(lse_c - LSE),
 * because exp(lse_c) is piece c's denominator, so w_c is its share of the row's. This is the
 * {m, d} state of common/softmax_state.h one level up, with the partial LSEs as the scores:
 *     m = max_c lse_c,   d = sum_c exp(lse_c - m),   LSE = m + log(d),   w_c = exp(lse_c - m) / d.
 * The weights are formed from m and d, not as exp(lse_c - LSE): LSE rounded to float is off by
 * up to half an ulp of |LSE| (3e-5 at LSE = 1000), and that error would land in every weight.
 * A row with every piece masked has no key at all: m = -inf, d = 0, LSE = -inf and every w_c = 0,
 * hence O = 0, as the reference wants for a row that sees nothing.
 *
 * Written for C and CUDA alike (__host__ __device__): the CPU test (tests/test_combine.c) runs the
 * very code the kernels run. Two forms:
 *   combine_state + combine_weight   no array of weights: two passes over the LSEs for {m, d},
 *                                    then each thread forms the weights it needs;
 *   combine_weights                  all n weights at once, and the merged LSE. */
#ifndef COMBINE_H
#define COMBINE_H

#include <math.h>
#include "../common/softmax_state.h"

#ifdef __CUDACC__
#define COMBINE_FN __host__ __device__ static inline
#else
#define COMBINE_FN static inline
#endif

/* {m, d} of the n partial LSEs, max first (two passes, no rescaling); {-inf, 0} when every one is
 * -inf or n < 1, d NaN when a partial's LSE is NaN (fmaxf skips it). md_lse of it is the row's LSE. */
COMBINE_FN md_t combine_state(const float *lse, int n)
{
    md_t s = md_identity();
    for (int c = 0; c < n; c++) s.m = fmaxf(s.m, lse[c]);
    if (s.m == -INFINITY) {
        for (int c = 0; c < n; c++) s.d += lse[c] == -INFINITY ? 0.0f : lse[c];   /* 0, or NaN */
        return s;
    }
    for (int c = 0; c < n; c++) s.d += expf(lse[c] - s.m);   /* exp(-inf) = 0: a masked piece */
    return s;                                                /* d >= 1: the largest term is 1 */
}

/* The row's LSE alone. */
COMBINE_FN float combine_lse(const float *lse, int n) { return md_lse(combine_state(lse, n)); }

/* The weight of the partial with LSE lse_c in a row of state s: 0 for a masked piece, and so for
 * every piece of a fully masked row (never exp(-inf - -inf) = NaN). */
COMBINE_FN float combine_weight(float lse_c, md_t s)
{
    return lse_c == -INFINITY ? 0.0f : expf(lse_c - s.m) / s.d;
}

/* Writes w[c] = exp(lse[c] - LSE) for c < n and returns LSE; the caller then forms
 * O[j] = sum_c w[c] * o_c[j]. w may be lse itself (the weights overwrite the LSEs in place). */
COMBINE_FN float combine_weights(const float *lse, int n, float *w)
{
    md_t s = combine_state(lse, n);
    for (int c = 0; c < n; c++) w[c] = combine_weight(lse[c], s);
    return md_lse(s);
}

#endif
