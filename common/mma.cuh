/* Thin wrappers over the PTX instructions the tensor-core rungs (05, 06) are built from:
 * ldmatrix (shared memory -> mma fragments), mma.sync m16n8k16 (float16 or bfloat16 in, float32
 * accumulate), cp.async (global -> shared without a trip through registers), and the float32
 * reduction into global memory of the backward pass's dQ (rung 08). Requires sm_80
 * or newer. At the end, the same operations picked by the storage type T (__half or
 * __nv_bfloat16), for kernels that take it as a template parameter (rungs 04 and 05).
 *
 * Fragment layout of mma.sync.m16n8k16.row.col (PTX ISA, "Matrix Fragments for mma.m16n8k16"),
 * for lane = 4 * g + t (g = lane / 4 in 0..7, t = lane % 4 in 0..3):
 *   A (16 x 16, row-major), 4 registers of two halves each:
 *       a0 = A[g][2t, 2t+1]    a1 = A[g+8][2t, 2t+1]    a2 = A[g][2t+8, +9]    a3 = A[g+8][2t+8, +9]
 *   B (16 x 8, "col": B[k][n]), 2 registers:
 *       b0 = B[2t, 2t+1][g]    b1 = B[2t+8, 2t+9][g]
 *   C, D (16 x 8, float32), 4 registers:
 *       c0, c1 = C[g][2t, 2t+1]                  c2, c3 = C[g+8][2t, 2t+1]
 * ldmatrix.x4 loads four 8 x 8 matrices of 16-bit elements: lanes 8i..8i+7 give the addresses of
 * the 8 rows of matrix i, and every lane receives, in register i, the two elements
 * (row g, columns 2t, 2t+1) of matrix i -- or, with .trans, of its transpose. */
#ifndef MMA_CUH
#define MMA_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

static __device__ __forceinline__ uint32_t smem_addr(const void *p)
{
    return (uint32_t)__cvta_generic_to_shared(p);
}

static __device__ __forceinline__ void ldmatrix_x4(uint32_t r[4], uint32_t addr)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}

static __device__ __forceinline__ void ldmatrix_x4_trans(uint32_t r[4], uint32_t addr)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}

/* d = a * b + d, 16 x 8 x 16, float16 operands, float32 accumulators. */
static __device__ __forceinline__ void mma_16816(float d[4], const uint32_t a[4], uint32_t b0, uint32_t b1)
{
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

/* The same with bfloat16 operands (8 exponent bits, 7 mantissa bits; same fragment layout). */
static __device__ __forceinline__ void mma_16816_bf16(float d[4], const uint32_t a[4], uint32_t b0, uint32_t b1)
{
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

/* Two floats -> one register of two halves (the lower column in the low half). */
static __device__ __forceinline__ uint32_t pack_half2(float lo, float hi)
{
    __half2 h = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<uint32_t *>(&h);
}

/* Two floats -> one register of two bfloat16 (the lower column in the low half). */
static __device__ __forceinline__ uint32_t pack_bf162(float lo, float hi)
{
    __nv_bfloat162 b = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<uint32_t *>(&b);
}

/* 16 bytes global -> shared, asynchronously. With valid == false nothing is read and the 16 bytes
 * are zero-filled (src-size 0): this is how tail tiles are padded without a branch per element.
 * .cg caches in L2 only: the tile is used once per block, from shared memory. */
static __device__ __forceinline__ void cp_async_16(uint32_t dst, const void *src, bool valid)
{
    int bytes = valid ? 16 : 0;
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" :: "r"(dst), "l"(src), "r"(bytes));
}

/* 4 bytes global -> shared, asynchronously (one float of a row vector such as the LSE, whose rows
 * need not start 16 bytes apart); zero-filled with valid == false. .ca: cp.async takes 4 bytes
 * only through L1. */
static __device__ __forceinline__ void cp_async_4(uint32_t dst, const void *src, bool valid)
{
    int bytes = valid ? 4 : 0;
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" :: "r"(dst), "l"(src), "r"(bytes));
}

static __device__ __forceinline__ void cp_async_commit(void)
{
    asm volatile("cp.async.commit_group;\n" ::);
}

/* Wait until at most n groups committed by this thread are still in flight. */
template <int n>
static __device__ __forceinline__ void cp_async_wait(void)
{
    asm volatile("cp.async.wait_group %0;\n" :: "n"(n));
}

/* p[0] += a, p[1] += b in global memory, float32, without reading the result back (a reduction,
 * not an atomic that returns the old value). p 8-byte aligned. On sm_90 one red.global.add.v2.f32:
 * the two floats travel to L2 as one request; before sm_90 the vector form does not exist, and it
 * is two scalar reductions. The order in which several blocks' additions land is not fixed. */
static __device__ __forceinline__ void red_add_f32x2(float *p, float a, float b)
{
#if __CUDA_ARCH__ >= 900
    asm volatile("red.global.add.v2.f32 [%0], {%1, %2};\n" :: "l"(p), "f"(a), "f"(b) : "memory");
#else
    atomicAdd(p, a);
    atomicAdd(p + 1, b);
#endif
}

/* ---- picked by the storage type T: __half (float16) or __nv_bfloat16 (bfloat16) ----------
 * ldmatrix and cp.async move 16-bit elements whatever they are; only the product and the
 * float -> storage conversions differ. Resolved at compile time: a float16 instantiation
 * compiles to exactly the code it had before T existed. */
template <typename T> inline constexpr bool storage_bf16 = false;
template <> inline constexpr bool storage_bf16<__nv_bfloat16> = true;

template <typename T>
static __device__ __forceinline__ void mma_16816_t(float d[4], const uint32_t a[4], uint32_t b0, uint32_t b1)
{
    if constexpr (storage_bf16<T>) mma_16816_bf16(d, a, b0, b1);
    else mma_16816(d, a, b0, b1);
}

template <typename T>
static __device__ __forceinline__ uint32_t pack2_t(float lo, float hi)
{
    if constexpr (storage_bf16<T>) return pack_bf162(lo, hi);
    else return pack_half2(lo, hi);
}

/* One float -> T, round to nearest even. */
template <typename T>
static __device__ __forceinline__ T to_storage(float x)
{
    if constexpr (storage_bf16<T>) return __float2bfloat16_rn(x);
    else return __float2half_rn(x);
}

#endif
