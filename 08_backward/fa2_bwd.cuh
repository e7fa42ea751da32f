/* What rung 08's files share (08a: fa2_bwd.cu; 08b: fa2_bwd_det.cu; 08c: hopper_bwd.cu): bwd_pre,
 * the two warp products both backward kernels are made of, the shapes the rung refuses, and the entry points
 * one file takes from the other. */
#ifndef FA2_BWD_CUH
#define FA2_BWD_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <math.h>
#include <stdio.h>
#include "../common/attn.h"
#include "../common/cta_sync.cuh"   /* pdl_launch_dependents, pdl_wait */
#include "../common/mma.cuh"
#include "../common/tiles.cuh"

#define LOG2E 1.4426950408889634f

/* 16-bit storage <-> float for the elementwise kernels */
template <typename T> static __device__ __forceinline__ float to_f32(T x);
template <> __device__ __forceinline__ float to_f32<__half>(__half x) { return __half2float(x); }
template <> __device__ __forceinline__ float to_f32<__nv_bfloat16>(__nv_bfloat16 x) { return __bfloat162float(x); }

/* D_i = dO_i . O_i, LSE_i in log2 units, and (08a, 08c) the dQ accumulator's row zeroed. O and dO
 * rows of d elements (a multiple of 8); the accumulator's rows DP floats apart (DP >= d: 08c's tiles
 * pad d to DP). A warp takes BWD_PRE_ROWS rows and issues their loads together: one row a warp leaves
 * too few bytes in flight to keep the memory busy. Pairs of elements and four floats a store. Grid
 * bwd_pre_blocks(rows) of 256 threads. */
#define BWD_PRE_ROWS 4
static inline unsigned bwd_pre_blocks(long rows) { return (unsigned)((rows + 8 * BWD_PRE_ROWS - 1) / (8 * BWD_PRE_ROWS)); }

template <typename T> static __device__ __forceinline__ float2 to_f32x2(const T *p);
template <> __device__ __forceinline__ float2 to_f32x2<__half>(const __half *p)
{
    return __half22float2(*reinterpret_cast<const __half2 *>(p));
}
template <> __device__ __forceinline__ float2 to_f32x2<__nv_bfloat16>(const __nv_bfloat16 *p)
{
    return __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162 *>(p));
}

template <int DP, typename T>
__global__ void __launch_bounds__(256)
bwd_pre(const T *__restrict__ O, const T *__restrict__ dO, const float *__restrict__ LSE, float *__restrict__ Dvec,
        float *__restrict__ Lsc, float *__restrict__ dQacc, long rows, int d)
{
    pdl_launch_dependents();   /* 08d's main kernel may take SMs as this grid's last blocks leave */
    const long row0 = ((long)blockIdx.x * 8 + threadIdx.x / 32) * BWD_PRE_ROWS;
    const int lane = threadIdx.x % 32;
    float acc[BWD_PRE_ROWS];
#pragma unroll
    for (int r = 0; r < BWD_PRE_ROWS; r++) {
        const long row = row0 + r;
        acc[r] = 0.0f;
        if (row >= rows) continue;                       /* the same for the whole warp */
#pragma unroll
        for (int c = 2 * lane; c < DP; c += 64)
            if (c < d) {
                const float2 o = to_f32x2<T>(O + row * d + c), g = to_f32x2<T>(dO + row * d + c);
                acc[r] += o.x * g.x + o.y * g.y;
            }
        if (dQacc) {
#pragma unroll
            for (int c = 4 * lane; c < DP; c += 128)
                *reinterpret_cast<float4 *>(dQacc + row * DP + c) = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        }
    }
#pragma unroll
    for (int r = 0; r < BWD_PRE_ROWS; r++) {
        const long row = row0 + r;
        if (row >= rows) break;
        float a = acc[r];
#pragma unroll
        for (int off = 16; off > 0; off /= 2) a += __shfl_xor_sync(0xffffffffu, a, off);
        if (lane == 0) {
            Dvec[row] = a;
            const float l = LSE[row];
            Lsc[row] = l == -INFINITY ? INFINITY : l * LOG2E;    /* 2^(s - inf) = 0: the row adds nothing */
        }
    }
}

/* acc (one 16 x 8*NT product per warp) = A B^T, A = rows a_row..a_row+15 of `sa`, B^T = rows
 * b_row..b_row+8*NT-1 of `sb`, k = the D columns of both. Both operands are read as stored
 * (ldmatrix, no .trans). 08a: S^T = K Q^T, dP^T = V dO^T (keys by queries); 08b's dQ kernel:
 * S = Q K^T, dP = dO V^T (queries by keys). */
template <int D, int NT, typename T>
static __device__ __forceinline__ void mma_rows_by_rows(float acc[NT][4], const T *sa, int a_row, const T *sb, int b_row,
                                                        int lane)
{
#pragma unroll
    for (int nt = 0; nt < NT; nt++) acc[nt][0] = acc[nt][1] = acc[nt][2] = acc[nt][3] = 0.0f;
#pragma unroll
    for (int kk = 0; kk < D; kk += 16) {
        uint32_t a[4];
        ldmatrix_x4(a, smem_addr(sa + tile_off<D, true>(a_row + (lane % 16), kk + (lane / 16) * 8)));
#pragma unroll
        for (int nt = 0; nt < NT; nt += 2) {
            /* lanes 0-7: rows nt*8.. at column kk; 8-15: the same rows at kk+8; 16-31: rows (nt+1)*8.. */
            uint32_t b[4];
            ldmatrix_x4(b, smem_addr(sb + tile_off<D, true>(b_row + nt * 8 + (lane % 8) + (lane / 16) * 8,
                                                            kk + ((lane / 8) % 2) * 8)));
            mma_16816_t<T>(acc[nt], a, b[0], b[1]);
            mma_16816_t<T>(acc[nt + 1], a, b[2], b[3]);
        }
    }
}

/* acc (16 x D) += A B with A = the 16 x 8*NT accumulators `p` re-packed as T (k = their 8*NT
 * columns) and B = rows b_row..b_row+8*NT-1 of the tile `sb` (k by D), read with .trans. 08a:
 * dV += P^T dO and dK += dS^T Q; 08b's dQ kernel: dQ += dS K. */
template <int D, int NT, typename T>
static __device__ __forceinline__ void mma_acc_by_tile(float acc[D / 8][4], const float p[NT][4], const T *sb, int b_row,
                                                       int lane)
{
#pragma unroll
    for (int kk = 0; kk < 8 * NT; kk += 16) {
        uint32_t a[4];
        a[0] = pack2_t<T>(p[kk / 8][0], p[kk / 8][1]);
        a[1] = pack2_t<T>(p[kk / 8][2], p[kk / 8][3]);
        a[2] = pack2_t<T>(p[kk / 8 + 1][0], p[kk / 8 + 1][1]);
        a[3] = pack2_t<T>(p[kk / 8 + 1][2], p[kk / 8 + 1][3]);
#pragma unroll
        for (int dt = 0; dt < D / 8; dt += 2) {
            /* lanes 0-7 rows kk..+7, 8-15 rows kk+8..+15 (columns dt*8..), 16-31 the same at dt+1 */
            uint32_t b[4];
            ldmatrix_x4_trans(b, smem_addr(sb + tile_off<D, true>(b_row + kk + (lane % 8) + ((lane / 8) % 2) * 8,
                                                                  dt * 8 + (lane / 16) * 8)));
            mma_16816_t<T>(acc[dt], a, b[0], b[1]);
            mma_16816_t<T>(acc[dt + 1], a, b[2], b[3]);
        }
    }
}

/* The key tile and (batch, KV head) of a block of the key-tile grid, ceil(M/128) x B * Hkv (08a's
 * and 08c's). Not causal: a head's key tiles are neighbours in launch order, so the blocks that run
 * together read the same Q and dO tiles (L2 hits). Causal: the first key tiles see the most
 * queries, so they start first and the last wave is the lightest; but every head's first key tile
 * first put the blocks that run at once on as many heads as there are SMs, each adding into its own
 * head's float32 dQ rows: at B = 8, Hq = 16, N = 2048, d = 128 that is 128 MB of rows in flight, and
 * the additions missed L2 (08c's profile: DRAM busy, the tensor pipe idle; NOTES.md). So the KV
 * heads go in sections of `sec` (bwd_section), and inside a section every head's first key tile
 * first: the balance at each section's end is given up, L2 kept. */
static __device__ __forceinline__ void bwd_block_tile(int nkt, int causal, int sec, int *kt, int *bh)
{
    const int heads = gridDim.x / nkt;
    *kt = blockIdx.x % nkt;
    *bh = blockIdx.x / nkt;
    if (causal) {
        const int s0 = blockIdx.x / (sec * nkt) * sec, r = blockIdx.x % (sec * nkt);
        const int hs = min(sec, heads - s0);   /* KV heads in this section (the last may have fewer) */
        *kt = r / hs;
        *bh = s0 + r % hs;
    }
}

/* The KV heads of a causal section: as many as keep their float32 dQ rows (G query heads x N x d)
 * within 16 of the H100's 50 MB of L2. */
static inline int bwd_section(const attn_shape *s)
{
    const double dq_head = (double)(s->Hq / s->Hkv) * s->N * s->d * 4.0;
    int kv = 1;
    while (kv < s->Hkv * s->B && (kv + 1) * dq_head <= 16.0 * 1024 * 1024) kv++;
    return kv;
}

/* The shapes rung 08 refuses, for a variant that needs `smem` bytes of shared memory a block;
 * any_d: the variant takes every head dim the forward does (08c, 08d), else d = 64 and 128 only. */
static int bwd_refuse(const attn_shape *s, const attn_env *env, char *why, size_t n, size_t smem, int any_d)
{
    if (attn_refuse_paged(s, why, n)) return 1;
    if (s->seqlens_k) {
        snprintf(why, n, "rung 08 takes every request with M keys; per-request KV lengths are a decode's, not a training step's");
        return 1;
    }
    if (!any_d && s->d != 64 && s->d != 128) {
        snprintf(why, n, "08a and 08b run head dims 64 and 128 (d = %d); 08c and 08d every multiple of 8 up to 256", s->d);
        return 1;
    }
    if (s->d % 8 || s->d < 8 || s->d > 256) {
        snprintf(why, n, "rung 08 runs head dims that are multiples of 8 up to 256 (d = %d)", s->d);
        return 1;
    }
    if (env->cc_major < 8) {
        snprintf(why, n, "mma.sync m16n8k16 (float16 and bfloat16), ldmatrix and cp.async need compute capability 8.0+");
        return 1;
    }
    if (smem > env->smem_per_block_optin) {
        snprintf(why, n, "d = %d needs %zu KB of shared memory per block; this GPU allows %zu KB", s->d,
                 smem / 1024, env->smem_per_block_optin / 1024);
        return 1;
    }
    return 0;
}

/* fa2_bwd.cu: bwd_pre, then 08a's bwd_main for the shape of `a`. With dq_acc NULL, bwd_main leaves
 * dQ out (08b computes it apart, fa2_bwd_det.cu) and bwd_pre zeroes nothing. Dvec and Lsc: B*Hq*N
 * floats each. NULL, or the launch's error. */
const char *bwd_pre_and_kv(const attn_args *a, cudaStream_t st, float *dq_acc, float *Dvec, float *Lsc);
/* fa2_bwd.cu: the shared memory bwd_main needs a block at head dim d, with or without dQ */
size_t bwd_kv_smem(int d, int with_dq);

/* fa2_bwd.cu: dQ = scale * dq_acc, rounded to the storage type, over the whole dQ (08a, and 08c
 * whose accumulator rows are dp >= d floats apart; swz: 08d's, whose rows are swizzled, column col
 * of query q at col ^ 8 (q % 4); pdl: 08d's, launched as a dependent of the kernel before it).
 * NULL, or the launch's error. */
const char *bwd_dq_convert(const attn_args *a, cudaStream_t st, const float *dq_acc, int dp, int swz, int pdl);

extern "C" const rung rung_08b;   /* fa2_bwd_det.cu: deterministic, dQ by a kernel of its own */
extern "C" const rung rung_08c;   /* hopper_bwd.cu: TMA, wgmma, warp specialization (sm_90a) */
extern "C" const rung rung_08d;   /* hopper_bwd.cu: 08c + overlap (bwd_overlap.cuh) */

#endif
