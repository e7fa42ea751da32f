/* Incoherent processing (FlashAttention-3, its FP8 section; issue 24): before Q and K are quantized
 * to FP8, each row of both goes through the same random orthogonal map
 *
 *     x -> H D x,    D = diag(s_0 .. s_{d-1}), s_j = +-1 at random;  H = the Walsh-Hadamard
 *                    matrix of order d scaled by 1/sqrt(d), so that H H^T = I and H = H^T.
 *
 * Why it is free: M = H D is orthogonal (M^T M = D H H D = D D = I), so for a query row q and a key
 * row k, (M q) . (M k) = q^T M^T M k = q . k: S = Q K^T, and so the attention, is unchanged, and
 * nothing has to be undone afterwards (V does not go through it).
 * Why it helps: every output entry is a +-1/sqrt(d) combination of all d inputs, so one outlier of
 * size A in a row becomes d entries of size about A / sqrt(d) on top of the others. The row's
 * largest |x| falls towards its RMS and the block's scale (amax / 448, common/fp8.cuh) with it, so
 * small entries stay clear of e4m3's subnormals; and the rounding errors of S no longer gather on
 * the logits where an outlier meets a large entry -- the largest logits, which the softmax weighs
 * most (tests/test_fp8.c simulates it: S's RMSE stays the same, O's falls). The random signs make
 * sure no fixed input (a constant row, a row along one Hadamard direction) is mapped onto a spike.
 *
 * H is applied by the fast transform: log2(d) passes of butterflies (a, b) -> (a + b, a - b), d/2
 * of them a pass, O(d log d) adds instead of d^2 multiply-adds; then one multiply by 1/sqrt(d).
 * d must be a power of two, 16 to 256 (hadamard_dim_ok); a head dim such as 96 would need a
 * Hadamard matrix of another order (or padding to 128) and is not served here.
 * Written for C and CUDA alike, one row in one thread's array: the CPU tests run this very code. */
#ifndef HADAMARD_CUH
#define HADAMARD_CUH

#include <math.h>
#include <stdint.h>

#ifdef __CUDACC__
#define HAD_FN __host__ __device__ static inline
#else
#define HAD_FN static inline
#endif

HAD_FN int hadamard_dim_ok(int d) { return d >= 16 && d <= 256 && (d & (d - 1)) == 0; }

/* A 32-bit integer hash with full avalanche (Chris Wellons' "lowbias32": xor-shift, multiply, three
 * times): a few integer operations, no table, no state, the same on the host and the device; 32
 * bits because a 64-bit multiply (common/inputs.c's mix64) costs several instructions on a GPU. */
HAD_FN uint32_t hadamard_hash(uint32_t x)
{
    x ^= x >> 16; x *= 0x7feb352du;
    x ^= x >> 15; x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

/* s_j for column j under `seed`: the top bit of hash(j xor hash(seed)). Hashing the seed first
 * means neighbouring seeds give unrelated sign patterns, not shifted copies of one another. Q and
 * K must use the same seed (the same M), or q . k is not preserved. */
HAD_FN float hadamard_sign(uint32_t seed, int j)
{
    return (hadamard_hash((uint32_t)j ^ hadamard_hash(seed)) >> 31) ? -1.0f : 1.0f;
}

/* x <- H x in place, H normalised. H is symmetric and orthogonal, so this is its own inverse. */
HAD_FN void hadamard_transform(float *x, int d)
{
    for (int h = 1; h < d; h *= 2)                 /* pass: pairs h apart, in blocks of 2h */
        for (int i = 0; i < d; i += 2 * h)
            for (int j = i; j < i + h; j++) {
                float a = x[j], b = x[j + h];
                x[j] = a + b;
                x[j + h] = a - b;
            }
    float r = 1.0f / sqrtf((float)d);
    for (int j = 0; j < d; j++) x[j] *= r;
}

/* x <- H D x: what the quantize kernel does to each row of Q and of K. */
HAD_FN void incoherent_forward(float *x, int d, uint32_t seed)
{
    for (int j = 0; j < d; j++) x[j] *= hadamard_sign(seed, j);
    hadamard_transform(x, d);
}

/* x <- (H D)^T x = D H x, the inverse (for tests: attention itself never needs it). */
HAD_FN void incoherent_inverse(float *x, int d, uint32_t seed)
{
    hadamard_transform(x, d);
    for (int j = 0; j < d; j++) x[j] *= hadamard_sign(seed, j);
}

#endif
