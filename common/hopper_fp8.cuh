/* wgmma's 8-bit form, for rung 07's FP8 step (07_fa3_wgmma_tma/fp8.cuh), on common/hopper.cuh's
 * macros: m64nNk32 with float8 e4m3 operands. */
#ifndef HOPPER_FP8_CUH
#define HOPPER_FP8_CUH

#include "hopper.cuh"

/* The descriptor of a swizzled tile at smem address addr (hopper.cuh's top); swizzle: the mode
 * field, 128B, or 64B (rows of 64 bytes, 8-row atoms of 512: 07g's Q and K at d <= 64). */
enum { WGMMA_SWIZZLE_128B = 1, WGMMA_SWIZZLE_64B = 2 };
static __device__ __forceinline__ uint64_t wgmma_desc_sw(uint32_t addr, uint32_t leading, uint32_t stride, int swizzle)
{
    return (uint64_t)((addr & 0x3FFFF) >> 4) | (uint64_t)((leading & 0x3FFFF) >> 4) << 16 |
           (uint64_t)((stride & 0x3FFFF) >> 4) << 32 | (uint64_t)swizzle << 62;
}

/* The 8-bit forms take no transpose bits (both operands K-major, always). */
#define WGMMA_SS8_ASM(G, NS, TY) WGMMA_SS_GEN(G, NS, TY, "k32", "")
#define WGMMA_RS8_ASM(G, NS, TY) WGMMA_RS_GEN(G, NS, TY, "k32", "")

/* wgmma m64nNk32 with float8 e4m3 operands (rung 07's FP8 step), float32 accumulators in the same
 * layout as above, N a multiple of 16 up to 256. FP8 wgmma has no transpose: both operands are
 * K-major (their k contiguous, 32 bytes a step).
 *   wgmma_ss_e4m3<N>(d, da, db, acc): A and B from shared memory (S = Q K^T).
 *   wgmma_rs_e4m3<N>(d, a, db, acc): A from registers, a[4] of four e4m3 each: register r, byte b
 *     holds A[16 w + g + 8 (r % 2)][4 c + b + 16 (r / 2)] (warp w of the warpgroup, g = lane / 4,
 *     c = lane % 4; PTX ISA, "Register Fragments" of wgmma .m64nNk32; not the accumulator layout:
 *     07_fa3_wgmma_tma/fp8_quant.h), B from shared memory K-major (O += P V, V transposed). */
template <int N>
static __device__ __forceinline__ void wgmma_ss_e4m3(float (&d)[N / 2], uint64_t da, uint64_t db, int acc)
{
    static_assert(N % 16 == 0 && N >= 16 && N <= 256, "wgmma N: a multiple of 16 up to 256");
    constexpr int G = N / 16;
    WGMMA_BY_N(WGMMA_SS8_ASM, "e4m3")
}

template <int N>
static __device__ __forceinline__ void wgmma_rs_e4m3(float (&d)[N / 2], const uint32_t (&a)[4], uint64_t db, int acc)
{
    static_assert(N % 16 == 0 && N >= 16 && N <= 256, "wgmma N: a multiple of 16 up to 256");
    constexpr int G = N / 16;
    uint32_t a0 = a[0], a1 = a[1], a2 = a[2], a3 = a[3];
    WGMMA_BY_N(WGMMA_RS8_ASM, "e4m3")
}

#endif
