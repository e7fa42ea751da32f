/* The online-softmax state {m, d} and its merge.
 *
 * For a set of scores x_1..x_n:  m = max_j x_j,  d = sum_j exp(x_j - m).
 * Two disjoint sets merge exactly:
 *     m = max(m_a, m_b),   d = d_a * exp(m_a - m) + d_b * exp(m_b - m).
 * The merge is associative and commutative (up to rounding) and {-inf, 0} is its identity, so
 * the state of a whole row can be built in any order, by any tree of threads, warps or blocks.
 * softmax(x)_j = exp(x_j - m) / d, and the log-sum-exp of the row is m + log(d).
 * A NaN score (or +inf, whose exp(x - m) is NaN) makes d NaN, and a NaN d survives every merge, so
 * a row a NaN reached ends with LSE NaN, never the -inf of a row that saw no key.
 * (The papers call d "l"; the seed article on the safe softmax calls it d. Same thing.)
 *
 * Written for C and CUDA alike (__host__ __device__), so the CPU tests exercise the very code the
 * kernels run. */
#ifndef SOFTMAX_STATE_H
#define SOFTMAX_STATE_H

#include <math.h>

#ifdef __CUDACC__
#define MD_FN __host__ __device__ static inline
#else
#define MD_FN static inline
#endif

typedef struct md_t {
    float m;  /* running maximum */
    float d;  /* sum of exp(x - m) */
} md_t;

MD_FN md_t md_identity(void)
{
    md_t r;
    r.m = -INFINITY;
    r.d = 0.0f;
    return r;
}

/* The state of a single score. A masked score (-inf) is the identity; d = exp(x - x): 1, or NaN
 * for a NaN or +inf score. */
MD_FN md_t md_of(float x)
{
    md_t r;
    r.m = x;
    r.d = (x == -INFINITY) ? 0.0f : (x - x) + 1.0f;
    return r;
}

MD_FN md_t md_merge(md_t a, md_t b)
{
    md_t r;
    r.m = fmaxf(a.m, b.m);
    if (r.m == -INFINITY) {  /* both empty (exp(-inf - -inf) would be NaN), or NaN, which fmaxf skips */
        r.d = a.d + b.d;
        return r;
    }
    r.d = a.d * expf(a.m - r.m) + b.d * expf(b.m - r.m);
    return r;
}

/* log-sum-exp of everything merged into s; -inf for an empty row, NaN for a row a NaN reached. */
MD_FN float md_lse(md_t s)
{
    return s.d == 0.0f ? -INFINITY : s.m + logf(s.d);
}

#endif
