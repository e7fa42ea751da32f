/* Shared-memory tiles for the mma.sync rungs (05, 06): the XOR-swizzled layout, the tile loader
 * (cp.async or plain loads, zero-filled tails) and a fast exp2. */
#ifndef TILES_CUH
#define TILES_CUH

#include <cuda_fp16.h>
#include "mma.cuh"

/* 2^x with the hardware approximation (MUFU.EX2, about 2 ulp): exp2f without -use_fast_math adds
 * range handling this kernel does not need. 2^-inf = 0. */
static __device__ __forceinline__ float fast_exp2(float x)
{
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}

/* Offset (in halves) of element (row, col) of a tile with D halves per row. Columns come in
 * 16-byte chunks of 8 halves; the swizzle permutes the chunks of a row by XOR with (row % 8). */
template <int D, bool SWIZZLE>
static __device__ __forceinline__ int tile_off(int row, int col)
{
    if (SWIZZLE) return row * D + ((((col >> 3) ^ row) & 7) | ((col >> 3) & ~7)) * 8 + (col & 7);
    return row * D + col;
}

/* ROWS x D halves from global (row stride D) into a shared tile; rows >= valid_rows read as 0.
 * Thread i copies 16-byte chunk i, i + THREADS, ...: consecutive threads take consecutive chunks
 * of a row (coalesced), and step k moves every thread down by R = THREADS / (D/8) rows. The
 * thread's row and chunk are computed once; each step is a constant offset, so the compiler
 * needs no address registers per step (it hoisted and spilled them when each step computed its
 * own). R is a multiple of 4, and the thread's own row % 8 is below 4 when R = 4, so the swizzle
 * of row r0 + kR is the swizzle of r0 XOR a constant. */
template <int D, int ROWS, int THREADS, bool ASYNC, bool SWIZZLE>
static __device__ __forceinline__ void load_tile(__half *tile, const __half *src, int valid_rows)
{
    constexpr int CPR = D / 8;                 /* chunks per row */
    constexpr int R = THREADS / CPR;           /* rows per step */
    constexpr int STEPS = ROWS / R;
    static_assert(THREADS % CPR == 0 && ROWS % R == 0 && (R % 8 == 0 || R == 4), "tile loader shape");
    const int r0 = threadIdx.x / CPR, c0 = threadIdx.x % CPR;
    const __half *g = src + (size_t)r0 * D + c0 * 8;
    __half *s0 = tile + tile_off<D, SWIZZLE>(r0, c0 * 8);
#pragma unroll
    for (int k = 0; k < STEPS; k++) {
        const bool valid = r0 + k * R < valid_rows;
        /* row r0 + kR: same swizzle as r0 when R % 8 == 0; when R == 4 odd steps flip bit 2 */
        __half *sdst = SWIZZLE && R == 4 && (k & 1)
                           ? tile + tile_off<D, SWIZZLE>(r0 + k * R, c0 * 8)
                           : s0 + k * R * D;
        if (ASYNC) {
            cp_async_16(smem_addr(sdst), g + (size_t)k * R * D, valid);   /* not read if !valid */
        } else {
            uint4 v = make_uint4(0, 0, 0, 0);
            if (valid) v = *reinterpret_cast<const uint4 *>(g + (size_t)k * R * D);
            *reinterpret_cast<uint4 *>(sdst) = v;
        }
    }
}

#endif
