/* What the FlashAttention-1-order rungs (01-04) share: their kernel parameters, the workspace
 * they keep in device memory between K/V tiles, and two small device helpers.
 *
 * The FA1 loop order (K/V tiles outer, Q tiles inner) means a query row's running state leaves
 * the chip after every K/V tile. The workspace holds it: O in float32 (rounding a running O to
 * float16 after each of Tc tiles would add up to more error than the 2e-3 tolerance at long
 * sequences), normalized by l as in the paper, then {m, l} per row (md_t of softmax_state.h). The kernels
 * initialize it themselves; the float16 O and the LSE are written after the last tile. */
#ifndef FA1_CUH
#define FA1_CUH

#include <cuda_fp16.h>
#include <stdio.h>
#include "attn.h"
#include "softmax_state.h"

typedef struct fa1_params {
    const __half *q, *k, *v;
    __half *o;
    float *lse;
    float *o_acc;            /* workspace: [B, Hq, N, d] float32, the running (normalized) O */
    md_t *ml;                /* workspace: [B, Hq, N] running {m, l} of every query row */
    const int *seqlens_k;    /* device, [B], or NULL */
    int Hq, Hkv, N, M, d, causal;
    int Bc;                  /* for rungs that choose their key tile on the host (02) */
    float scale;
} fa1_params;

/* O in float32 (4 bytes per output element) and {m, l} per query row. */
static inline size_t fa1_workspace_bytes(const attn_shape *s)
{
    const size_t rows = (size_t)s->B * s->Hq * s->N;
    return rows * s->d * sizeof(float) + rows * sizeof(md_t);
}

static inline fa1_params fa1_params_of(const attn_args *a)
{
    const attn_shape *s = &a->shape;
    fa1_params p;
    p.q = (const __half *)a->q;
    p.k = (const __half *)a->k;
    p.v = (const __half *)a->v;
    p.o = (__half *)a->o;
    p.lse = a->lse;
    p.o_acc = (float *)a->workspace;
    p.ml = (md_t *)(p.o_acc + (size_t)s->B * s->Hq * s->N * s->d);
    p.seqlens_k = a->seqlens_k;
    p.Hq = s->Hq; p.Hkv = s->Hkv; p.N = s->N; p.M = s->M; p.d = s->d;
    p.causal = s->causal;
    p.Bc = 0;
    p.scale = s->scale;
    return p;
}

/* The refusals rungs 01-03 share: float16 only (they convert to float32 on load), and d a
 * multiple of 8 (rows are loaded as 16-byte vectors of 8 float16). 0 if neither applies. */
static inline int fa1_refuse_common(const attn_shape *s, char *why, size_t n)
{
    if (attn_refuse_paged(s, why, n)) return 1;
    if (s->dtype != ATTN_F16) {
        snprintf(why, n, "float16 only: this rung converts float16 to float32 on load and has no "
                         "bfloat16 path");
        return 1;
    }
    if (s->d % 8 != 0) {
        snprintf(why, n, "d = %d is not a multiple of 8: rows are loaded as 16-byte vectors of "
                         "8 float16", s->d);
        return 1;
    }
    return 0;
}

/* Keys [0, end) are visible to query row r of a request with mk keys: the device twin of
 * attn_row_end (attn.h), bottom-right causal. */
static __device__ __forceinline__ int visible_end(int r, int N, int mk, int causal)
{
    if (!causal) return mk;
    long long e = (long long)r + mk - N + 1;
    return e < 0 ? 0 : (e > mk ? mk : (int)e);
}

/* 8 float16 values (one 16-byte load; d % 8 == 0 keeps every row 16-byte aligned) to 8 floats. */
static __device__ __forceinline__ void load8_to_float(const __half *src, float *dst)
{
    union { uint4 u; __half2 h[4]; } raw;     /* a union, not a cast of &raw: stays in registers */
    raw.u = *(const uint4 *)src;
    float2 a = __half22float2(raw.h[0]), b = __half22float2(raw.h[1]);
    float2 c = __half22float2(raw.h[2]), e = __half22float2(raw.h[3]);
    ((float4 *)dst)[0] = make_float4(a.x, a.y, b.x, b.y);
    ((float4 *)dst)[1] = make_float4(c.x, c.y, e.x, e.y);
}

#endif
