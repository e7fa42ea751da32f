/* The online softmax of the tensor-core rungs (05, 06, 07), one row at a time, in log2 units: the
 * scores are multiplied by scale · log2(e) as they are used, and 2^x replaces e^x (the same
 * softmax: 2^(x log2 e) = e^x). A row's running max m is kept in those units; it is -inf until the
 * row has seen a key. Per tile, each rung finds the row's new max m_new over its scores (how the
 * row's scores are spread over lanes differs: mma.sync or wgmma fragments), then:
 *
 *   off   = online_offset(m_new)           what the row's exponentials subtract from now on
 *   alpha = online_alpha(m, off)           O and l are multiplied by it; then m = m_new
 *   p     = online_p(s, scale_log2, off)   each score's unnormalised probability; l += the p's
 *
 * A warp of the mma.sync rungs (05, 06) starts its rows with online_start: O = 0, m = -inf, l = 0.
 *
 * The {m, l} state and its merge across threads, warps and blocks are common/softmax_state.h's. */
#ifndef ONLINE_SOFTMAX_CUH
#define ONLINE_SOFTMAX_CUH

#include <math.h>

/* 2^x with the hardware approximation (MUFU.EX2, about 2 ulp): exp2f without -use_fast_math adds
 * range handling these kernels do not need. 2^-inf = 0. */
static __device__ __forceinline__ float fast_exp2(float x)
{
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}

/* The offset a row's exponentials subtract: its max, or 0 while it has seen no key, so that
 * 2^(-inf - -inf) never makes a NaN; its p and alpha then come out 0. */
static __device__ __forceinline__ float online_offset(float m)
{
    return m == -INFINITY ? 0.0f : m;
}

/* The factor a row's O and l take when its max moves from m_old to the one whose offset is off. */
static __device__ __forceinline__ float online_alpha(float m_old, float off)
{
    return fast_exp2(m_old - off);
}

/* A score's unnormalised probability, 2^(s · scale_log2 - offset). */
static __device__ __forceinline__ float online_p(float s, float scale_log2, float offset)
{
    return fast_exp2(fmaf(s, scale_log2, -offset));
}

/* A warp's fresh accumulators in mma.sync's layout: MT m16 tiles of rows (each thread's rows g and
 * g + 8 of a tile) by DT n8 tiles of O's columns; m = -inf (no key seen yet), l = 0. */
template <int MT, int DT>
static __device__ __forceinline__ void online_start(float (&o)[MT][DT][4], float (&m)[MT][2], float (&l)[MT][2])
{
#pragma unroll
    for (int mt = 0; mt < MT; mt++) {
#pragma unroll
        for (int dt = 0; dt < DT; dt++) o[mt][dt][0] = o[mt][dt][1] = o[mt][dt][2] = o[mt][dt][3] = 0.0f;
        m[mt][0] = m[mt][1] = -INFINITY;
        l[mt][0] = l[mt][1] = 0.0f;
    }
}

#endif
