/* Rung 01: the "minimal" FlashAttention (FA1 loop order), one thread per query row.
 *
 * This is the well-known minimal kernel that the seed article ("Flash Attention 算子的简单实现")
 * takes apart, kept in its teaching shape -- and deliberately slow -- but made correct for the
 * whole problem of this course (common/attn.h):
 *   - any N and M: the last Q tile and the last K/V tile may be partial, and rows or keys past the
 *     end are neither read nor written;
 *   - GQA/MQA: query head h reads KV head h / (Hq/Hkv);
 *   - bottom-right causal mask, with K/V tiles that a row cannot see skipped, and rows that see
 *     no key at all ending with O = 0 and LSE = -inf;
 *   - a per-request KV length (seqlens_k): keys past it are never loaded;
 *   - LSE is written;
 *   - shared memory is sized from the head dim, and the tile (Br = Bc) is the largest that fits
 *     instead of a fixed 32, with a refusal when even one row does not fit;
 *   - the running O is kept in float32 in the workspace, not in the float16 output (see README).
 *
 * The algorithm is Algorithm 1 of the FlashAttention paper (Dao et al., 2022, arXiv:2205.14135):
 * the loop over K/V tiles j is OUTSIDE, the loop over Q tiles i INSIDE, so the running state of
 * every query row -- O_i, m_i, l_i -- lives in device memory and makes a round trip there on
 * every K/V tile. Names follow the paper: Br, Bc, Tr, Tc, S, P, m, l (softmax_state.h's md_t holds {m, l}
 * as {m, d}). */
#include <cuda_fp16.h>
#include <math.h>
#include <stdio.h>
#include "../common/attn.h"
#include "../common/check_cuda.h"
#include "../common/fa1.cuh"
#include "../common/softmax_state.h"

#define MAX_TILE 64   /* largest Br = Bc tried: one thread per row, so also the block size */

/* grid  = B*Hq blocks, one per (batch, query head): the block owns every query row of that head.
 * block = Br = Bc threads. Thread tx owns row tx of every Q tile (rows i*Br + tx) and, while a
 *         K/V tile is loaded, key row tx of that tile. Threads never share a query row: the only
 *         data they share is the K/V tile. (With Br <= 32 the block is a single, partly empty
 *         warp; with 64 it is two.)
 * shared memory (float32, row stride d, no padding):
 *         Qi [Br][d] | Kj [Bc][d] | Vj [Bc][d] | S [Br][Bc]
 *         Qi and S are per-thread scratch (thread tx uses only row tx); Kj and Vj are shared.
 * Per K/V tile j (outer):   load Kj, Vj; barrier;
 *   per Q tile i (inner):   each thread, on its own row r: load Qi row, m and l from device memory;
 *                           S = scale * q K_j^T and its max m~; P = exp(S - m~) and its sum l~;
 *                           O_r <- (l e^{m - m_new} O_r + e^{m~ - m_new} P V_j) / l_new, in device
 *                           memory; store m_new, l_new;
 *                           barrier before the next tile overwrites Kj, Vj.
 * Against the rung before (00, cuBLAS + softmax with S in HBM): S never reaches device memory;
 * O and {m, l} do, once per K/V tile. */
__global__ void minimal_fa1(fa1_params p)
{
    extern __shared__ float4 smem_f4[];          /* float4: 16-byte alignment for the vector stores */
    const int B_t = blockDim.x;                  /* Br = Bc */
    const int Br = B_t, Bc = B_t, d = p.d;
    float *Qi = (float *)smem_f4;
    float *Kj = Qi + (size_t)Br * d;
    float *Vj = Kj + (size_t)Bc * d;
    float *S = Vj + (size_t)Bc * d;

    const int tx = threadIdx.x;
    const int bh = blockIdx.x, b = bh / p.Hq, h = bh % p.Hq;
    const int hk = h / (p.Hq / p.Hkv);
    const int N = p.N;
    const int mk = p.seqlens_k ? p.seqlens_k[b] : p.M;
    const int Tr = (N + Br - 1) / Br, Tc = (mk + Bc - 1) / Bc;

    const __half *Q = p.q + (size_t)bh * N * d;
    const __half *K = p.k + ((size_t)b * p.Hkv + hk) * p.M * d;   /* stride M: varlen only shortens */
    const __half *V = p.v + ((size_t)b * p.Hkv + hk) * p.M * d;
    float *O = p.o_acc + (size_t)bh * N * d;
    md_t *ml = p.ml + (size_t)bh * N;

    /* Algorithm 1, line 2: O = 0, l = 0, m = -inf in device memory. The workspace arrives
     * uninitialized, and each row is later touched only by this same thread, so no barrier. */
    for (int i = 0; i < Tr; i++) {
        const int r = i * Br + tx;
        if (r >= N) break;
        ml[r] = md_identity();
        for (int x = 0; x < d; x++) O[(size_t)r * d + x] = 0.0f;
    }

    for (int j = 0; j < Tc; j++) {
        const int c0 = j * Bc;
        const int nkv = min(Bc, mk - c0);        /* keys in this tile; the last one may be partial */

        /* Thread tx copies key row c0 + tx: the 32 lanes of a warp read 32 different rows, d
         * elements apart -- uncoalesced, as in the minimal kernel (rung 02 fixes this). */
        if (tx < nkv) {
            const __half *krow = K + (size_t)(c0 + tx) * d, *vrow = V + (size_t)(c0 + tx) * d;
            for (int x = 0; x < d; x += 8) {
                load8_to_float(krow + x, Kj + (size_t)tx * d + x);
                load8_to_float(vrow + x, Vj + (size_t)tx * d + x);
            }
        }
        __syncthreads();

        /* Causal: row r sees key c0 only if r >= c0 + N - mk; Q tiles entirely above that row see
         * nothing of this K/V tile and are skipped. */
        const int i_first = p.causal ? max(0, c0 + N - mk) / Br : 0;
        for (int i = i_first; i < Tr; i++) {
            const int r = i * Br + tx;
            if (r >= N) break;                   /* tail of the last Q tile */
            const int nv = min(nkv, visible_end(r, N, mk, p.causal) - c0);
            if (nv <= 0) continue;               /* this row sees none of the tile: state unchanged */

            float *q = Qi + (size_t)tx * d;
            float *s = S + (size_t)tx * Bc;
            const __half *qrow = Q + (size_t)r * d;
            for (int x = 0; x < d; x += 8) load8_to_float(qrow + x, q + x);
            const md_t prev = ml[r];

            /* S = scale * q K_j^T over the visible keys, and its max m~. Lanes read q at a stride of
             * d floats (all in one bank when d % 32 == 0): a 32-way bank conflict per load. */
            float m_t = -INFINITY;
            for (int y = 0; y < nv; y++) {
                float acc = 0.0f;
                for (int x = 0; x < d; x++) acc += q[x] * Kj[(size_t)y * d + x];
                acc *= p.scale;
                s[y] = acc;
                m_t = fmaxf(m_t, acc);
            }
            /* P = exp(S - m~) and l~ = rowsum(P). m~ is finite: nv >= 1 and the inputs are finite. */
            float l_t = 0.0f;
            for (int y = 0; y < nv; y++) {
                const float pr = expf(s[y] - m_t);
                s[y] = pr;
                l_t += pr;
            }
            /* m_new, l_new (Algorithm 1, line 11). For the first visible tile prev = {-inf, 0}, so
             * alpha = 0 and the old O (zero) drops out. */
            const float m_new = fmaxf(prev.m, m_t);
            const float alpha = prev.d * expf(prev.m - m_new);
            const float beta = expf(m_t - m_new);
            const float l_new = alpha + beta * l_t;
            const float inv = 1.0f / l_new;

            /* O_r <- (alpha O_r + beta P V_j) / l_new (line 12): O stays normalized after every
             * tile, as in the paper; it is read and written in device memory here. */
            float *orow = O + (size_t)r * d;
            for (int x = 0; x < d; x++) {
                float pv = 0.0f;
                for (int y = 0; y < nv; y++) pv += s[y] * Vj[(size_t)y * d + x];
                orow[x] = (alpha * orow[x] + beta * pv) * inv;
            }
            md_t next;
            next.m = m_new;
            next.d = l_new;
            ml[r] = next;
        }
        __syncthreads();                         /* everyone is done with Kj, Vj */
    }

    /* O (float16) and LSE = m + log(l). A row that never saw a key still holds O = 0, {-inf, 0}:
     * it gets O = 0 and LSE = -inf. Each row was last written by this same thread. */
    __half *Oout = p.o + (size_t)bh * N * d;
    float *lse = p.lse + (size_t)bh * N;
    for (int i = 0; i < Tr; i++) {
        const int r = i * Br + tx;
        if (r >= N) break;
        lse[r] = md_lse(ml[r]);
        for (int x = 0; x < d; x++) Oout[(size_t)r * d + x] = __float2half_rn(O[(size_t)r * d + x]);
    }
}

/* ------------------------------------------------------------------ host side */

static size_t smem_bytes(int tile, int d)
{
    return ((size_t)3 * tile * d + (size_t)tile * tile) * sizeof(float);
}

/* Br = Bc = the largest power of two <= MAX_TILE whose tiles fit in shared memory; 0 if none. */
static int pick_tile(int d, size_t limit)
{
    for (int t = MAX_TILE; t >= 1; t >>= 1)
        if (smem_bytes(t, d) <= limit) return t;
    return 0;
}

static int minimal_unsupported(const attn_shape *s, const attn_env *env, char *why, size_t n)
{
    if (fa1_refuse_common(s, why, n)) return 1;
    if (!pick_tile(s->d, env->smem_per_block_optin)) {
        snprintf(why, n, "d = %d needs %.1f KB of shared memory even with Br = Bc = 1; this GPU "
                         "allows %.1f KB per block", s->d, smem_bytes(1, s->d) / 1024.0,
                 env->smem_per_block_optin / 1024.0);
        return 1;
    }
    return 0;
}

/* The running O in float32 (4 bytes per output element) and {m, l} per query row. */
static size_t minimal_workspace(const attn_shape *s, const attn_env *env)
{
    (void)env;
    return fa1_workspace_bytes(s);
}

static const char *minimal_run(const attn_args *a, cudaStream_t st)
{
    const attn_shape *s = &a->shape;
    const int tile = pick_tile(s->d, a->env.smem_per_block_optin);
    if (s->dtype != ATTN_F16 || s->d % 8 != 0 || !tile) return "minimal: unsupported shape";

    fa1_params p = fa1_params_of(a);

    const size_t smem = smem_bytes(tile, s->d);
    RUNG_CUDA(cudaFuncSetAttribute(minimal_fa1, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    minimal_fa1<<<s->B * s->Hq, tile, smem, st>>>(p);
    RUNG_LAUNCHED(minimal_fa1);
    return NULL;
}

/* The tile this shape gets, for the report's extra field. */
static void minimal_describe(const attn_shape *s, const attn_env *env, char *buf, size_t len)
{
    const int tile = pick_tile(s->d, env->smem_per_block_optin);
    snprintf(buf, len, "Br=%d;Bc=%d;threads=%d;smem=%zu;", tile, tile, tile, smem_bytes(tile, s->d));
}

static const rung minimal = {
    "01", "minimal",
    "no S in HBM: one thread per Q row, K/V tiles outer (FA1 order), O and {m, l} in HBM per tile",
    minimal_unsupported, minimal_workspace, minimal_run, minimal_describe, NULL,
};

extern "C" const rung *const rung_variants[] = {&minimal, NULL};
