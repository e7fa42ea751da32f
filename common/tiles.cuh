/* Shared-memory tiles for the mma.sync rungs (05, 06): the XOR-swizzled layout and the tile loader
 * (cp.async or plain loads, zero-filled tails, optionally rows shorter than the tile). */
#ifndef TILES_CUH
#define TILES_CUH

#include <cuda_fp16.h>
#include "mma.cuh"

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
 * of row r0 + kR is the swizzle of r0 XOR a constant.
 * PAD: the rows in global memory are d < D elements long (d a multiple of 8, so a row is still
 * whole 16-byte chunks): the row stride is d, and the chunks at columns d..D-1 of the tile are
 * zero-filled, never read. A thread keeps its chunk column for every step, so that is one test
 * per thread. T: any 16-bit storage type (__half, __nv_bfloat16); only bytes move. */
template <int D, int ROWS, int THREADS, bool ASYNC, bool SWIZZLE, bool PAD = false, typename T>
static __device__ __forceinline__ void load_tile(T *tile, const T *src, int valid_rows, int d = D)
{
    constexpr int CPR = D / 8;                 /* chunks per row */
    constexpr int R = THREADS / CPR;           /* rows per step */
    constexpr int STEPS = ROWS / R;
    static_assert(THREADS % CPR == 0 && ROWS % R == 0 && (R % 8 == 0 || R == 4), "tile loader shape");
    static_assert(sizeof(T) == 2, "16-bit storage");
    const int ld = PAD ? d : D;                /* row stride in global memory */
    const int r0 = threadIdx.x / CPR, c0 = threadIdx.x % CPR;
    const bool col_ok = !PAD || c0 * 8 < d;
    const T *g = src + (size_t)r0 * ld + c0 * 8;
    T *s0 = tile + tile_off<D, SWIZZLE>(r0, c0 * 8);
#pragma unroll
    for (int k = 0; k < STEPS; k++) {
        const bool valid = col_ok && r0 + k * R < valid_rows;
        /* row r0 + kR: same swizzle as r0 when R % 8 == 0; when R == 4 odd steps flip bit 2 */
        T *sdst = SWIZZLE && R == 4 && (k & 1)
                      ? tile + tile_off<D, SWIZZLE>(r0 + k * R, c0 * 8)
                      : s0 + k * R * D;
        if (ASYNC) {
            cp_async_16(smem_addr(sdst), g + (size_t)k * R * ld, valid);   /* not read if !valid */
        } else {
            uint4 v = make_uint4(0, 0, 0, 0);
            if (valid) v = *reinterpret_cast<const uint4 *>(g + (size_t)k * R * ld);
            *reinterpret_cast<uint4 *>(sdst) = v;
        }
    }
}

#endif
