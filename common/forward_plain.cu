/* The forward pass the driver runs before a backward rung (rung 08), outside the timed region: it
 * makes the O (storage type) and LSE (float32) that the backward reads, as a training step's forward
 * would have left them. Not a rung and never timed, so it is written to be read, not to be fast: one
 * warp per query row, the keys one after another (a dot product over the lanes, reduced by
 * shuffles), the online softmax in float32 with expf, O in float32 registers (d/32 columns a lane).
 * The driver checks its O and LSE against common/ref.c like any forward before the backward runs.
 * Why not the reference on the CPU: O(B Hq N M d) host work is minutes at the ladder's long shapes;
 * why not a forward rung: rung 08's binary would then link rung 05's folder, and a bug there would
 * pass for one in the backward. Head dims up to 256; causal bottom-right and per-request KV lengths
 * as attn.h says. */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <math.h>
#include "check_cuda.h"
extern "C" {
#include "harness.h"
}

#define FP_WARPS 8
#define FP_MAXC 8          /* columns a lane holds: d <= 32 * 8 = 256 */

static __device__ __forceinline__ float fp_load(const uint16_t *p, int bf16)
{
    const uint16_t h = *p;
    return bf16 ? __bfloat162float(__ushort_as_bfloat16(h)) : __half2float(__ushort_as_half(h));
}

static __device__ __forceinline__ uint16_t fp_store(float x, int bf16)
{
    return bf16 ? __bfloat16_as_ushort(__float2bfloat16_rn(x)) : __half_as_ushort(__float2half_rn(x));
}

__global__ void __launch_bounds__(FP_WARPS * 32)
forward_plain_kernel(const uint16_t *Q, const uint16_t *K, const uint16_t *V, uint16_t *O, float *LSE,
                     const int *seqlens_k, int B, int Hq, int Hkv, int N, int M, int d, int causal,
                     float scale, int bf16)
{
    const int lane = threadIdx.x % 32;
    const long row = (long)blockIdx.x * FP_WARPS + threadIdx.x / 32;
    if (row >= (long)B * Hq * N) return;
    const int i = (int)(row % N), h = (int)(row / N % Hq), b = (int)(row / ((long)N * Hq));
    const int kvh = h / (Hq / Hkv), mk = seqlens_k ? seqlens_k[b] : M;
    int end = mk;
    if (causal) { long e = (long)i + mk - N + 1; end = e < 0 ? 0 : (e > mk ? mk : (int)e); }
    const uint16_t *qr = Q + row * d;
    const uint16_t *kb = K + ((size_t)b * Hkv + kvh) * (size_t)M * d;
    const uint16_t *vb = V + ((size_t)b * Hkv + kvh) * (size_t)M * d;
    float q[FP_MAXC], o[FP_MAXC];
#pragma unroll
    for (int t = 0; t < FP_MAXC; t++) {
        const int c = lane + 32 * t;
        q[t] = c < d ? fp_load(qr + c, bf16) : 0.0f;
        o[t] = 0.0f;
    }
    float m = -INFINITY, l = 0.0f;
    for (int j = 0; j < end; j++) {
        float acc = 0.0f;
#pragma unroll
        for (int t = 0; t < FP_MAXC; t++) {
            const int c = lane + 32 * t;
            if (c < d) acc += q[t] * fp_load(kb + (size_t)j * d + c, bf16);
        }
#pragma unroll
        for (int off = 16; off > 0; off /= 2) acc += __shfl_xor_sync(0xffffffffu, acc, off);
        const float s = acc * scale, m_new = fmaxf(m, s), off = m_new == -INFINITY ? 0.0f : m_new;
        const float alpha = expf(m - off), p = expf(s - off);   /* off: no exp(-inf - -inf) = NaN */
        l = l * alpha + p;
#pragma unroll
        for (int t = 0; t < FP_MAXC; t++) {
            const int c = lane + 32 * t;
            o[t] = o[t] * alpha + (c < d ? p * fp_load(vb + (size_t)j * d + c, bf16) : 0.0f);
        }
        m = m_new;
    }
    const float inv = l > 0.0f ? 1.0f / l : 0.0f;
#pragma unroll
    for (int t = 0; t < FP_MAXC; t++) {
        const int c = lane + 32 * t;
        if (c < d) O[row * d + c] = fp_store(o[t] * inv, bf16);
    }
    if (lane == 0) LSE[row] = l == 0.0f ? -INFINITY : m + logf(l);   /* NaN where a NaN reached the row */
}

const char *forward_plain(const attn_shape *s, const void *q, const void *k, const void *v, void *o,
                          float *lse, const int *seqlens_k, cudaStream_t st)
{
    if (s->d > 32 * FP_MAXC) return "the harness's forward (common/forward_plain.cu) runs head dims up to 256";
    const long rows = (long)s->B * s->Hq * s->N;
    const long blocks = (rows + FP_WARPS - 1) / FP_WARPS;
    if (blocks > 0x7fffffffL) return "the harness's forward: too many rows for one grid";
    forward_plain_kernel<<<(unsigned)blocks, FP_WARPS * 32, 0, st>>>(
        (const uint16_t *)q, (const uint16_t *)k, (const uint16_t *)v, (uint16_t *)o, lse, seqlens_k,
        s->B, s->Hq, s->Hkv, s->N, s->M, s->d, s->causal, s->scale, s->dtype == ATTN_BF16);
    RUNG_LAUNCHED(forward_plain_kernel);
    return NULL;
}
