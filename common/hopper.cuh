/* Thin wrappers over the Hopper (sm_90a) PTX instructions rungs 07 and 08 are built from, each once
 * (hopper_fp8.cuh adds wgmma's 8-bit form, hopper_bwd.cuh those only rung 08 uses). wgmma: a
 * warpgroup of 4 warps multiplies 64 x N x 16 asynchronously, B -- and A, or A from registers --
 * read from shared memory through 64-bit descriptors.
 *
 * Shared-memory tiles here are what TMA writes with CU_TENSOR_MAP_SWIZZLE_128B: a tile of R rows
 * of 64 halves (128 bytes) whose 16-byte chunks are permuted by XOR with (row % 8), 1024-byte
 * aligned; wider rows are stored as several such tiles ("chunks" of 64 columns) one after another.
 * The wgmma descriptor of such a tile (PTX ISA, "Matrix Descriptor Format"): start address >> 4
 * (bits 0-13), leading-dimension byte offset >> 4 (16-29), stride-dimension byte offset >> 4
 * (32-45), swizzle mode (62-63: 1 = 128B).
 *   K-major operand (its K contiguous: Q and K for S = Q K^T): 8 rows of 128 bytes form one
 *     swizzle atom, so the stride between 8-row groups is 1024; the leading offset is unused; the
 *     k-th 16-column step inside a chunk starts 32 k bytes further.
 *   N-major operand (its N contiguous: V for O = P V, B[k][n] = V[key k][column n]): the stride
 *     between 8-key groups is 1024 (the stride-dimension offset) and between 64-column chunks the
 *     chunk's size (the leading-dimension offset); the k-th 16-key step starts 2048 k bytes on.
 * wgmma's accumulators (m64nNk16, float32, PTX ISA "Matrix Fragments for wgmma.m64nNk16"), thread
 * t of warp w in the warpgroup, g = lane / 4, c = lane % 4: d[4j + 0, 1] = D[16w + g][8j + 2c, +1],
 * d[4j + 2, 3] = D[16w + g + 8][8j + 2c, +1] -- mma.sync's layout, repeated over N / 8 blocks. A
 * from registers has the same layout for its 16 columns, so the accumulators of S, packed to halves
 * two at a time, are the A operand of P V without a trip through shared memory. */
#ifndef HOPPER_CUH
#define HOPPER_CUH

#include <cuda_fp16.h>
#include <stdint.h>
#include "mma.cuh"
#include "wgmma_asm.h"

/* ---- mbarriers ------------------------------------------------------------------------------ */
static __device__ __forceinline__ void mbar_init(uint64_t *bar, int count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(smem_addr(bar)), "r"(count) : "memory");
}
/* Make the initialised barriers visible to the TMA unit (the async proxy) and the other threads. */
static __device__ __forceinline__ void mbar_init_fence(void) { asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory"); }
/* One arrival that also announces `bytes` of transactions (the TMA copies that complete on it). */
static __device__ __forceinline__ void mbar_arrive_expect_tx(uint64_t *bar, uint32_t bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(smem_addr(bar)), "r"(bytes) : "memory");
}
static __device__ __forceinline__ void mbar_arrive(uint64_t *bar)
{
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" :: "r"(smem_addr(bar)) : "memory");
}
/* Wait until the phase with this parity (0, 1, 0, ...) has completed. */
static __device__ __forceinline__ void mbar_wait(uint64_t *bar, uint32_t parity)
{
    asm volatile("{\n.reg .pred done;\nwait_%=:\n"
                 "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
                 "@!done bra wait_%=;\n}" :: "r"(smem_addr(bar)), "r"(parity) : "memory");
}

/* ---- the tensor-memory accelerator (TMA): one thread copies a box of a tensor ---------------- */
static __device__ __forceinline__ void tma_prefetch_map(const void *m) { asm volatile("prefetch.tensormap [%0];" :: "l"(m) : "memory"); }
/* The box at coordinates (c0, c1, c2) of a 3-D tensor map into shared memory at dst; the bytes are
 * counted on bar. Coordinates past the tensor's end read as zeros. */
static __device__ __forceinline__ void tma_load_3d(void *dst, const void *map, uint64_t *bar, int c0, int c1, int c2)
{
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5}], [%2];"
                 :: "r"(smem_addr(dst)), "l"(map), "r"(smem_addr(bar)), "r"(c0), "r"(c1), "r"(c2) : "memory");
}
/* The box at (c0, c1, c2) written from shared memory at src, not past the tensor's end. Copies are
 * grouped per thread (bulk_commit) and waited for (bulk_wait_read: until their shared memory may be
 * reused; bulk_wait: until the writes are done). */
static __device__ __forceinline__ void tma_store_3d(const void *map, const void *src, int c0, int c1, int c2)
{
    asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%2, %3, %4}], [%1];"
                 :: "l"(map), "r"(smem_addr(src)), "r"(c0), "r"(c1), "r"(c2) : "memory");
}
static __device__ __forceinline__ void bulk_commit(void) { asm volatile("cp.async.bulk.commit_group;" ::: "memory"); }
template <int n>
static __device__ __forceinline__ void bulk_wait_read(void) { asm volatile("cp.async.bulk.wait_group.read %0;" :: "n"(n) : "memory"); }
template <int n>
static __device__ __forceinline__ void bulk_wait(void) { asm volatile("cp.async.bulk.wait_group %0;" :: "n"(n) : "memory"); }

/* ---- named barriers ------------------------------------------------------------------------- */
/* Barrier ID (1..15; 0 is __syncthreads) over NT threads: bar_sync waits until NT threads have
 * arrived (itself included); bar_arrive_id counts itself and goes on. The ids and counts are
 * immediates, so the compiler reserves only the barriers used. */
template <int ID, int NT>
static __device__ __forceinline__ void bar_sync(void) { asm volatile("bar.sync %0, %1;" :: "n"(ID), "n"(NT) : "memory"); }
/* The id in a register (one per warp): one instruction, where a branch on it makes two barriers */
template <int NT>
static __device__ __forceinline__ void bar_sync_id(int id) { asm volatile("bar.sync %0, %1;" :: "r"(id), "n"(NT) : "memory"); }
template <int NT>
static __device__ __forceinline__ void bar_arrive_id(int id) { asm volatile("bar.arrive %0, %1;" :: "r"(id), "n"(NT) : "memory"); }
/* Shared memory written by ordinary stores, read next by the async proxy (wgmma, TMA): each writing
 * thread fences before the barrier that orders the two. */
static __device__ __forceinline__ void fence_proxy_async(void) { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }

/* ---- wgmma ------------------------------------------------------------------------------------ */
/* The descriptor of a 128B-swizzled tile at smem address addr (see the top of this file), kept as
 * its two 32-bit words: lo the start address and the leading offset, hi
 * the stride and the swizzle. A product's k steps move through a tile by constant byte offsets, and
 * with the words apart each step is one 32-bit add to lo (the 14-bit start field holds any shared
 * memory address, so the add never carries into the leading offset). Rebuilt from the address at
 * every step, a descriptor costs about a dozen instructions, in the issuing warps' slots. */
typedef struct wgmma_dsc { uint32_t lo, hi; } wgmma_dsc;
static __device__ __forceinline__ wgmma_dsc wgmma_dsc_of(uint32_t addr, uint32_t leading, uint32_t stride)
{
    return wgmma_dsc{((addr & 0x3FFFF) >> 4) | ((leading & 0x3FFFF) >> 4) << 16, ((stride & 0x3FFFF) >> 4) | 1u << 30};
}
/* The descriptor of the tile `bytes` (a multiple of 16) past d's start. */
static __device__ __forceinline__ uint64_t wgmma_dsc_at(wgmma_dsc d, uint32_t bytes)
{
    return (uint64_t)d.hi << 32 | (d.lo + (bytes >> 4));
}

/* Before the first wgmma that reads registers written since the last one (accumulators, A). */
static __device__ __forceinline__ void wgmma_fence(void) { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
static __device__ __forceinline__ void wgmma_commit(void) { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
/* Wait until at most n committed groups of this warpgroup are still running. */
template <int n>
static __device__ __forceinline__ void wgmma_wait(void) { asm volatile("wgmma.wait_group.sync.aligned %0;" :: "n"(n) : "memory"); }
/* The accumulators an asynchronous wgmma writes must not be touched by the compiler meanwhile. */
template <int n>
static __device__ __forceinline__ void wgmma_fence_regs(float (&d)[n])
{
#pragma unroll
    for (int i = 0; i < n; i++) asm volatile("" : "+f"(d[i]) :: "memory");
}
/* setmaxnreg: this warpgroup's register budget becomes n per thread (a multiple of 8, 24..256). */
template <int n>
static __device__ __forceinline__ void setmaxnreg_inc(void) { asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" :: "n"(n)); }
template <int n>
static __device__ __forceinline__ void setmaxnreg_dec(void) { asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" :: "n"(n)); }
/* wgmma m64nNk16, N a multiple of 16 up to 256, float32 accumulators d[N / 2] (the layout above).
 *   wgmma_ss<N, BF16>(d, da, db, acc): A and B from shared memory, both K-major (S = Q K^T).
 *   wgmma_rs<N, BF16>(d, a, db, acc): A from registers (a[4], two elements per register, the
 *     accumulator layout of its 16 columns), B from shared memory N-major (O += P V).
 * acc = 0 overwrites d, 1 accumulates. The PTX text and its operand lists are wgmma_asm.h's. */
template <int N, bool BF16>
static __device__ __forceinline__ void wgmma_ss(float (&d)[N / 2], uint64_t da, uint64_t db, int acc)
{
    static_assert(N % 16 == 0 && N >= 16 && N <= 256, "wgmma N: a multiple of 16 up to 256");
    constexpr int G = N / 16;
    if constexpr (BF16) { WGMMA_BY_N(WGMMA_SS_ASM, "bf16") } else { WGMMA_BY_N(WGMMA_SS_ASM, "f16") }
}
template <int N, bool BF16>
static __device__ __forceinline__ void wgmma_rs(float (&d)[N / 2], const uint32_t (&a)[4], uint64_t db, int acc)
{
    static_assert(N % 16 == 0 && N >= 16 && N <= 256, "wgmma N: a multiple of 16 up to 256");
    constexpr int G = N / 16;
    uint32_t a0 = a[0], a1 = a[1], a2 = a[2], a3 = a[3];
    if constexpr (BF16) { WGMMA_BY_N(WGMMA_RS_ASM, "bf16") } else { WGMMA_BY_N(WGMMA_RS_ASM, "f16") }
}

#endif
