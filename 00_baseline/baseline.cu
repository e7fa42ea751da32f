/* Rung 00: the baseline. Attention as three separate steps, each at full library speed, with the
 * whole score matrix going through device memory:
 *
 *   1. S = scale * Q K^T        cuBLAS strided-batched GEMM, float16 in, float32 accumulate and out
 *   2. P = softmax(S + mask)    three passes over each row of S: max, sum of exp, normalize (float16)
 *                               and LSE = max + log(sum)
 *   3. O = P V                  cuBLAS strided-batched GEMM, float16 in and out, float32 accumulate
 *
 * GQA without copying K/V: the g = Hq/Hkv query heads that share a KV head are consecutive in Q
 * ([B, Hq, N, d] row-major), so they form one (g*N) x d matrix; each GEMM is batched over the
 * B*Hkv KV heads with that matrix as its "rows". The causal mask is applied in step 2 only: the
 * GEMM still computes the masked half of S (part of why this is slow for causal attention).
 *
 * Softmax kernel: grid = one block per query row (B*Hq*N rows), block = 256 threads striding over
 * the row's M scores; block reductions (common/reduce.cuh) for the max and the sum. No shared
 * memory beyond the reductions' scratch. */
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <math.h>
#include <stdio.h>
#include "../common/attn.h"
#include "../common/check_cuda.h"
#include "../common/reduce.cuh"

#define SOFTMAX_THREADS 256

template <typename T> __device__ __forceinline__ T from_float(float x);
template <> __device__ __forceinline__ __half from_float<__half>(float x) { return __float2half_rn(x); }
template <> __device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }

/* One block per row of S. Keys j >= end are masked (causal and/or past this request's KV length):
 * their P is written as 0 so that step 3 can multiply the whole row by V. */
template <typename T>
__global__ void __launch_bounds__(SOFTMAX_THREADS)
safe_softmax_rows(const float *__restrict__ S, T *__restrict__ P, float *__restrict__ lse,
                  int Hq, int N, int M, int causal, const int *__restrict__ seqlens_k)
{
    const long row = blockIdx.x;                     /* over [B, Hq, N] */
    const int i = (int)(row % N);
    const int b = (int)(row / ((long)N * Hq));
    const int mk = seqlens_k ? seqlens_k[b] : M;
    int end = mk;
    if (causal) {
        long e = (long)i + (mk - N) + 1;
        end = e < 0 ? 0 : (e > mk ? mk : (int)e);
    }
    const float *s = S + row * M;
    T *p = P + row * M;

    /* pass 1: the row max */
    float mx = -INFINITY;
    for (int j = threadIdx.x; j < end; j += blockDim.x) mx = fmaxf(mx, s[j]);
    mx = block_max(mx);

    /* pass 2: the sum of exp(s - max); with max subtracted every term is in (0, 1] */
    float sum = 0.0f;
    for (int j = threadIdx.x; j < end; j += blockDim.x) sum += expf(s[j] - mx);
    sum = block_sum(sum);

    /* pass 3: normalize; masked keys get exactly 0 */
    const float inv = end > 0 ? 1.0f / sum : 0.0f;
    for (int j = threadIdx.x; j < M; j += blockDim.x)
        p[j] = from_float<T>(j < end ? expf(s[j] - mx) * inv : 0.0f);
    if (threadIdx.x == 0) lse[row] = end > 0 ? mx + logf(sum) : -INFINITY;
}

static int baseline_unsupported(const attn_shape *s, const attn_env *env, char *why, size_t n)
{
    (void)env;
    /* any contiguous shape; too large a workspace is refused by the driver with the bytes needed */
    return attn_refuse_paged(s, why, n);
}

/* S (float32) and P (float16): 6 bytes per score. */
static size_t baseline_workspace(const attn_shape *s, const attn_env *env)
{
    (void)env;
    return (size_t)s->B * s->Hq * s->N * s->M * (sizeof(float) + 2);
}

static const char *baseline_run(const attn_args *a, cudaStream_t st)
{
    const attn_shape *s = &a->shape;
    const int g = s->Hq / s->Hkv, d = s->d, N = s->N, M = s->M;
    const long long scores = (long long)s->B * s->Hq * N * M;
    float *S = (float *)a->workspace;
    void *P = (void *)(S + scores);
    const cudaDataType_t T = s->dtype == ATTN_BF16 ? CUDA_R_16BF : CUDA_R_16F;
    const float alpha = s->scale, one = 1.0f, zero = 0.0f;

    RUNG_CUBLAS(cublasSetStream(a->blas, st));
    /* Row-major X[r][c] is the column-major X^T, so S = Q K^T (row-major, g*N x M) is computed as
     * the column-major S^T = K Q^T: A = K (d x M column-major, transposed), B = Q (d x g*N). */
    RUNG_CUBLAS(cublasGemmStridedBatchedEx(
        a->blas, CUBLAS_OP_T, CUBLAS_OP_N, M, g * N, d, &alpha,
        a->k, T, d, (long long)M * d,
        a->q, T, d, (long long)g * N * d, &zero,
        S, CUDA_R_32F, M, (long long)g * N * M,
        s->B * s->Hkv, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));

    const long rows = (long)s->B * s->Hq * N;
    if (s->dtype == ATTN_BF16)
        safe_softmax_rows<__nv_bfloat16><<<rows, SOFTMAX_THREADS, 0, st>>>(
            S, (__nv_bfloat16 *)P, a->lse, s->Hq, N, M, s->causal, a->seqlens_k);
    else
        safe_softmax_rows<__half><<<rows, SOFTMAX_THREADS, 0, st>>>(
            S, (__half *)P, a->lse, s->Hq, N, M, s->causal, a->seqlens_k);
    RUNG_LAUNCHED(safe_softmax_rows);

    /* O = P V (row-major g*N x d) as the column-major O^T = V^T P^T: A = V (d x M), B = P (M x g*N). */
    RUNG_CUBLAS(cublasGemmStridedBatchedEx(
        a->blas, CUBLAS_OP_N, CUBLAS_OP_N, d, g * N, M, &one,
        a->v, T, d, (long long)M * d,
        P, T, M, (long long)g * N * M, &zero,
        a->o, T, d, (long long)g * N * d,
        s->B * s->Hkv, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    return NULL;
}

static const rung baseline = {
    "00", "baseline", "cuBLAS QK^T -> 3-pass safe softmax (S, P in HBM) -> cuBLAS PV",
    baseline_unsupported, baseline_workspace, baseline_run, NULL, NULL,
};

extern "C" const rung *const rung_variants[] = {&baseline, NULL};
