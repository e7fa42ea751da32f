/* The Hopper instructions only rung 08's backward (08_backward/hopper_bwd.cu) uses, on
 * common/hopper.cuh's wrappers and macros: for its dQ, for dS^T into shared memory, and for dV and
 * dK at d > 128. */
#ifndef HOPPER_BWD_CUH
#define HOPPER_BWD_CUH

#include "hopper.cuh"

/* A named barrier's arrival with an immediate id (hopper.cuh's bar_sync is its wait). */
template <int ID, int NT>
static __device__ __forceinline__ void bar_arrive(void) { asm volatile("bar.arrive %0, %1;" :: "n"(ID), "n"(NT) : "memory"); }

/* n bytes of float32 at src (shared memory) added element by element into dst (global memory),
 * in L2: the bulk reduce-add copy, grouped and waited for as hopper.cuh's TMA stores. Both
 * addresses 16-byte aligned, n a multiple of 16. Rung 08's Hopper backward adds each query tile's
 * dQ into its float32 accumulator this way. */
static __device__ __forceinline__ void bulk_reduce_add_f32(float *dst, const float *src, uint32_t n)
{
    asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%0], [%1], %2;"
                 :: "l"(dst), "r"(smem_addr(src)), "r"(n) : "memory");
}

/* Four 8 x 8 matrices of 16-bit elements from registers into shared memory: stmatrix, ldmatrix's
 * inverse (sm_90). Lanes 8i..8i+7 give the 16-byte-aligned addresses of matrix i's eight rows; r_i
 * holds this lane's two elements of matrix i (row lane / 4, columns 2 (lane % 4) and + 1), the
 * layout of an mma or wgmma fragment. One instruction where 32-bit stores take four. */
static __device__ __forceinline__ void stmatrix_x4(uint32_t addr, uint32_t r0, uint32_t r1, uint32_t r2, uint32_t r3)
{
    asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};"
                 :: "r"(addr), "r"(r0), "r"(r1), "r"(r2), "r"(r3) : "memory");
}

/* hopper.cuh's wgmma_ss with both operands transposed: A M-major (its M contiguous) and B N-major,
 * both from shared memory. Rung 08's Hopper backward: dQ = dS K with dS stored as dS^T (keys by
 * queries) and K as loaded (keys by d). An M-major A is described as an N-major B is (see the top
 * of hopper.cuh: the stride between 8-row groups of k 1024, 64-element chunks of M the leading
 * offset apart). */
template <int N, bool BF16>
static __device__ __forceinline__ void wgmma_ss_tt(float (&d)[N / 2], uint64_t da, uint64_t db, int acc)
{
    static_assert(N % 16 == 0 && N >= 16 && N <= 256, "wgmma N: a multiple of 16 up to 256");
    constexpr int G = N / 16;
    if constexpr (BF16) { WGMMA_BY_N(WGMMA_SS_TT_ASM, "bf16") } else { WGMMA_BY_N(WGMMA_SS_TT_ASM, "f16") }
}

/* hopper.cuh's wgmma_ss with B transposed: A K-major and B N-major, both from shared memory. Rung
 * 08 at d > 128 (bwd_wide.cuh): dV += P^T dO and dK += dS^T Q with P^T and dS^T stored keys by
 * queries (K-major) and dO and Q as loaded (queries by d: N-major, as the forward's V). */
#define WGMMA_SS_NT_ASM(G, NS, TY) WGMMA_SS_GEN(G, NS, TY, "k16", ", 0, 1")
template <int N, bool BF16>
static __device__ __forceinline__ void wgmma_ss_nt(float (&d)[N / 2], uint64_t da, uint64_t db, int acc)
{
    static_assert(N % 16 == 0 && N >= 16 && N <= 256, "wgmma N: a multiple of 16 up to 256");
    constexpr int G = N / 16;
    if constexpr (BF16) { WGMMA_BY_N(WGMMA_SS_NT_ASM, "bf16") } else { WGMMA_BY_N(WGMMA_SS_NT_ASM, "f16") }
}

/* hopper.cuh's wgmma_rs with B K-major (not transposed): A from registers, B's rows its N. Rung 08
 * at d = 96: dP^T = V dO^T with V's fragments kept in registers for the whole walk and dO as
 * loaded (queries by d: K-major, as S^T's Q). */
#define WGMMA_RS_K_ASM(G, NS, TY) WGMMA_RS_GEN(G, NS, TY, "k16", ", 0")
template <int N, bool BF16>
static __device__ __forceinline__ void wgmma_rs_k(float (&d)[N / 2], const uint32_t (&a)[4], uint64_t db, int acc)
{
    static_assert(N % 16 == 0 && N >= 16 && N <= 256, "wgmma N: a multiple of 16 up to 256");
    constexpr int G = N / 16;
    uint32_t a0 = a[0], a1 = a[1], a2 = a[2], a3 = a[3];
    if constexpr (BF16) { WGMMA_BY_N(WGMMA_RS_K_ASM, "bf16") } else { WGMMA_BY_N(WGMMA_RS_K_ASM, "f16") }
}

#endif
