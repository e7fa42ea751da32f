/* Warp and block reductions over float (sum, max) and over the {m, d} state of softmax_state.h.
 *
 * Warp versions use butterfly shuffles (__shfl_xor_sync), so every lane ends with the result.
 * Block versions reduce inside each warp, pass one value per warp through shared memory, reduce
 * those in every warp, and return the result to every thread. They contain __syncthreads(): call
 * them from all threads of the block, and with blockDim.x a multiple of 32. */
#ifndef REDUCE_CUH
#define REDUCE_CUH

#include "softmax_state.h"

#define FULL_MASK 0xffffffffu

static __device__ __forceinline__ float warp_sum(float v)
{
    for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(FULL_MASK, v, off);
    return v;
}

static __device__ __forceinline__ float warp_max(float v)
{
    for (int off = 16; off > 0; off >>= 1) v = fmaxf(v, __shfl_xor_sync(FULL_MASK, v, off));
    return v;
}

static __device__ __forceinline__ md_t warp_md(md_t s)
{
    for (int off = 16; off > 0; off >>= 1) {
        md_t o;
        o.m = __shfl_xor_sync(FULL_MASK, s.m, off);
        o.d = __shfl_xor_sync(FULL_MASK, s.d, off);
        s = md_merge(s, o);
    }
    return s;
}

/* Scratch for the block reductions: one slot per warp (at most 32 warps per block). The trailing
 * __syncthreads() lets a block call these back to back without a race on the scratch. */
static __device__ __forceinline__ float block_sum(float v)
{
    __shared__ float scratch[32];
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = (blockDim.x + 31) >> 5;
    v = warp_sum(v);
    if (lane == 0) scratch[warp] = v;
    __syncthreads();
    v = lane < nwarps ? scratch[lane] : 0.0f;
    v = warp_sum(v);
    __syncthreads();
    return v;
}

static __device__ __forceinline__ float block_max(float v)
{
    __shared__ float scratch[32];
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = (blockDim.x + 31) >> 5;
    v = warp_max(v);
    if (lane == 0) scratch[warp] = v;
    __syncthreads();
    v = lane < nwarps ? scratch[lane] : -INFINITY;
    v = warp_max(v);
    __syncthreads();
    return v;
}

static __device__ __forceinline__ md_t block_md(md_t s)
{
    __shared__ md_t scratch[32];
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = (blockDim.x + 31) >> 5;
    s = warp_md(s);
    if (lane == 0) scratch[warp] = s;
    __syncthreads();
    s = lane < nwarps ? scratch[lane] : md_identity();
    s = warp_md(s);
    __syncthreads();
    return s;
}

#endif
