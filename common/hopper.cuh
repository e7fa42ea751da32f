/* Thin wrappers over the Hopper (sm_90a) PTX instructions rung 07 is built from, each once:
 * mbarriers (arrival counts and transaction bytes), the tensor-memory accelerator (TMA: one
 * thread copies a box of a tensor into shared memory, completing on an mbarrier), the proxy fence,
 * wgmma (a warpgroup of 4 warps multiplies 64 x N x 16 asynchronously, B -- and A, or A from
 * registers -- read from shared memory through 64-bit descriptors) and setmaxnreg.
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

/* ---- mbarriers ------------------------------------------------------------------------------ */

static __device__ __forceinline__ void mbar_init(uint64_t *bar, int count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(smem_addr(bar)), "r"(count) : "memory");
}

/* Make the initialised barriers visible to the TMA unit (the async proxy) and the other threads. */
static __device__ __forceinline__ void mbar_init_fence(void)
{
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

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

/* ---- the tensor-memory accelerator ----------------------------------------------------------- */

static __device__ __forceinline__ void tma_prefetch_map(const void *map)
{
    asm volatile("prefetch.tensormap [%0];" :: "l"(map) : "memory");
}

/* The box at coordinates (c0, c1, c2) of a 3-D tensor map into shared memory at dst; the bytes are
 * counted on bar. Coordinates past the tensor's end read as zeros. */
static __device__ __forceinline__ void tma_load_3d(void *dst, const void *map, uint64_t *bar, int c0, int c1, int c2)
{
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5}], [%2];"
                 :: "r"(smem_addr(dst)), "l"(map), "r"(smem_addr(bar)), "r"(c0), "r"(c1), "r"(c2) : "memory");
}

/* Shared memory written by ordinary stores, read next by the async proxy (wgmma, TMA): each writing
 * thread fences before the barrier that orders the two. */
static __device__ __forceinline__ void fence_proxy_async(void)
{
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

/* ---- wgmma ------------------------------------------------------------------------------------ */

/* The descriptor of a 128B-swizzled tile at smem address addr (see the top of this file). */
static __device__ __forceinline__ uint64_t wgmma_desc(uint32_t addr, uint32_t leading, uint32_t stride)
{
    return (uint64_t)((addr & 0x3FFFF) >> 4) | (uint64_t)((leading & 0x3FFFF) >> 4) << 16 |
           (uint64_t)((stride & 0x3FFFF) >> 4) << 32 | (uint64_t)1 << 62;
}

/* Before the first wgmma that reads registers written since the last one (accumulators, A). */
static __device__ __forceinline__ void wgmma_fence(void)
{
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
}

static __device__ __forceinline__ void wgmma_commit(void)
{
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}

/* Wait until at most n committed groups of this warpgroup are still running. */
template <int n>
static __device__ __forceinline__ void wgmma_wait(void)
{
    asm volatile("wgmma.wait_group.sync.aligned %0;" :: "n"(n) : "memory");
}

/* The accumulators an asynchronous wgmma writes must not be touched by the compiler meanwhile. */
template <int n>
static __device__ __forceinline__ void wgmma_fence_regs(float (&d)[n])
{
#pragma unroll
    for (int i = 0; i < n; i++) asm volatile("" : "+f"(d[i]) :: "memory");
}

/* ---- registers -------------------------------------------------------------------------------- */

/* This warpgroup's register budget becomes n per thread (a multiple of 8, 24..256). */
template <int n>
static __device__ __forceinline__ void setmaxnreg_inc(void)
{
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" :: "n"(n));
}
template <int n>
static __device__ __forceinline__ void setmaxnreg_dec(void)
{
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" :: "n"(n));
}

/* The accumulator operands and their placeholders, per N (N / 2 floats per thread). */
#define WGMMA_D64 "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
    "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), \
    "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
    "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
#define WGMMA_P64 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}"
#define WGMMA_D128 "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
    "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), \
    "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
    "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), \
    "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), \
    "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), \
    "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), \
    "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
#define WGMMA_P128 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}"

/* d (+)= A * B, m64n64k16, float32 accumulators; A and B from shared memory (descriptors);
 * TRANS_B = 1: B is N-major; BF16: bfloat16 operands, else float16. */
template <int TRANS_B, bool BF16>
static __device__ __forceinline__ void wgmma_ss_64(float (&d)[32], uint64_t da, uint64_t db, int accumulate)
{
    if constexpr (BF16)
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\nwgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 "
                     WGMMA_P64 ", %32, %33, p, 1, 1, 0, %35;\n}\n"
                     : WGMMA_D64 : "l"(da), "l"(db), "r"(accumulate), "n"(TRANS_B));
    else
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\nwgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 "
                     WGMMA_P64 ", %32, %33, p, 1, 1, 0, %35;\n}\n"
                     : WGMMA_D64 : "l"(da), "l"(db), "r"(accumulate), "n"(TRANS_B));
}

/* The same with A from registers: four 32-bit registers of two elements each, in the layout of
 * the accumulators for its 16 columns. */
template <int TRANS_B, bool BF16>
static __device__ __forceinline__ void wgmma_rs_64(float (&d)[32], const uint32_t (&a)[4], uint64_t db, int accumulate)
{
    if constexpr (BF16)
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\nwgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 "
                     WGMMA_P64 ", {%32, %33, %34, %35}, %36, p, 1, 1, %38;\n}\n"
                     : WGMMA_D64 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(accumulate), "n"(TRANS_B));
    else
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\nwgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 "
                     WGMMA_P64 ", {%32, %33, %34, %35}, %36, p, 1, 1, %38;\n}\n"
                     : WGMMA_D64 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(accumulate), "n"(TRANS_B));
}

/* d (+)= A * B, m64n128k16, float32 accumulators; A and B from shared memory (descriptors);
 * TRANS_B = 1: B is N-major; BF16: bfloat16 operands, else float16. */
template <int TRANS_B, bool BF16>
static __device__ __forceinline__ void wgmma_ss_128(float (&d)[64], uint64_t da, uint64_t db, int accumulate)
{
    if constexpr (BF16)
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\nwgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 "
                     WGMMA_P128 ", %64, %65, p, 1, 1, 0, %67;\n}\n"
                     : WGMMA_D128 : "l"(da), "l"(db), "r"(accumulate), "n"(TRANS_B));
    else
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\nwgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 "
                     WGMMA_P128 ", %64, %65, p, 1, 1, 0, %67;\n}\n"
                     : WGMMA_D128 : "l"(da), "l"(db), "r"(accumulate), "n"(TRANS_B));
}

/* The same with A from registers: four 32-bit registers of two elements each, in the layout of
 * the accumulators for its 16 columns. */
template <int TRANS_B, bool BF16>
static __device__ __forceinline__ void wgmma_rs_128(float (&d)[64], const uint32_t (&a)[4], uint64_t db, int accumulate)
{
    if constexpr (BF16)
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\nwgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 "
                     WGMMA_P128 ", {%64, %65, %66, %67}, %68, p, 1, 1, %70;\n}\n"
                     : WGMMA_D128 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(accumulate), "n"(TRANS_B));
    else
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\nwgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 "
                     WGMMA_P128 ", {%64, %65, %66, %67}, %68, p, 1, 1, %70;\n}\n"
                     : WGMMA_D128 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(accumulate), "n"(TRANS_B));
}

#endif
