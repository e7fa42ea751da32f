/* The problem every rung solves, and the interface every rung exposes.
 *
 *   O   = softmax(scale * Q K^T + mask) V          Q [B,Hq,N,d], K,V [B,Hkv,M,d], O [B,Hq,N,d]
 *   LSE = log sum_j exp(scale * q.k_j)  (natural log, over the keys the row sees)   LSE [B,Hq,N]
 *
 * Row-major, contiguous. Query head h reads KV head h / (Hq/Hkv) (MHA, GQA, MQA by indexing).
 * Causal masks are aligned bottom-right: query i sees key j iff j <= i + (M_b - N), where M_b is
 * request b's KV length (M, or seqlens_k[b] in a varlen batch). A row that sees no key gets
 * O = 0 and LSE = -inf. Storage is float16 (bfloat16 where a rung says so); accumulation float32.
 *
 * A paged KV cache (shape.page_size = P > 0, --page-size; rung 06 reads it, every other rung
 * refuses it): K and V are pools of pages [num_pages][P][Hkv][d] (page, key within the page, KV
 * head, d: the layout of FlashAttention's flash_attn_with_kvcache and of vLLM's cache), request b's
 * M_b keys fill ceil(M_b / P) pages that lie anywhere in the pool, and a block table
 * [B][max_pages] maps its logical page i to the physical one: key t of request b, KV head h, is at
 *     pool + ((block_table[b][t / P] * P + t % P) * Hkv + h) * d.
 * The driver builds the table and fills the pools from the same K and V it checks against
 * (common/pages.c).
 *
 * This header is plain C so that the C driver, the C tests and the CUDA rungs share it. */
#ifndef ATTN_H
#define ATTN_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cuda_runtime_api.h>
#include <cublas_v2.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ATTN_E4M3 (--dtype e4m3): float8 e4m3 compute, for the steps built for it (rung.e4m3 below; rung
 * 07's FP8 step). Everything the driver holds stays float16 as with ATTN_F16 -- the inputs it makes
 * or loads, O, the float64 reference, which therefore compares against the user's 16-bit Q, K, V --
 * and the step quantizes Q, K and V to e4m3 itself, in its workspace. */
typedef enum { ATTN_F16 = 0, ATTN_BF16 = 1, ATTN_E4M3 = 2 } attn_dtype;

typedef struct attn_shape {
    int B, Hq, Hkv, N, M, d;
    int causal;            /* 1: bottom-right aligned causal mask */
    float scale;           /* softmax scale, 1/sqrt(d) unless given */
    attn_dtype dtype;
    const int *seqlens_k;  /* host: B KV lengths, each in [1, M]; NULL means every request has M */
    int page_size;         /* keys per page of a paged KV cache, a multiple of 16 in 16..256; 0: K and V
                              contiguous [B,Hkv,M,d] (the header comment above has the layout) */
} attn_shape;

/* What a rung may ask of the machine it runs on (filled by the driver from the device). */
typedef struct attn_env {
    int sm_count;
    int cc_major, cc_minor;
    size_t smem_per_block_optin;   /* bytes a block may use after cudaFuncSetAttribute */
    size_t smem_per_sm;
    const char *planner;           /* rung 06: split planner name, NULL for its default */
    int kv_block;                  /* rung 06: keys per KV block (the split planner's unit), 0 for
                                      its default; the driver allows multiples of 64 in 64..1024 */
    int fp8_per_tensor;            /* --fp8-scale tensor: one e4m3 scale per tensor, not per block */
    int fp8_no_hadamard;           /* --fp8-hadamard off: Q and K quantized without the Hadamard map */
} attn_env;

/* The backward pass (rung 08): what a backward rung reads and writes besides attn_args' q, k, v and
 * its o and lse, which are then inputs: the forward's O and LSE, made by the driver outside the
 * timed region. The gradients are of a scalar loss L whose gradient with respect to O is dO. */
typedef struct attn_grads {
    const void *dout;              /* device, dtype, [B,Hq,N,d]: dL/dO */
    void *dq;                      /* device, dtype, [B,Hq,N,d] */
    void *dk, *dv;                 /* device, dtype, [B,Hkv,M,d]: summed over a KV head's query heads */
} attn_grads;

typedef struct attn_args {
    attn_shape shape;
    attn_env env;
    const void *q, *k, *v;         /* device, dtype; k and v [B,Hkv,M,d], or with shape.page_size the
                                      page pools [num_pages][P][Hkv][d] */
    void *o;                       /* device, dtype, [B,Hq,N,d] */
    float *lse;                    /* device, [B,Hq,N] */
    const int *seqlens_k;          /* device copy of shape.seqlens_k, or NULL */
    void *workspace;               /* device, workspace_bytes(shape) bytes (NULL if 0) */
    size_t workspace_bytes;
    cublasHandle_t blas;           /* for rungs that call cuBLAS; its stream is set by the rung */
    /* A paged KV cache (shape.page_size = P > 0); NULL and 0 when K and V are contiguous. */
    const int *block_table;        /* device, int32 [B][max_pages]: request b's logical page i is
                                      physical page block_table[b * max_pages + i] of the pools;
                                      entries past its ceil(M_b / P) pages are -1: no key is there */
    int max_pages;                 /* ceil(M / P), the block table's row length */
    int num_pages;                 /* pages in each pool: the sum over b of ceil(M_b / P) */
    /* Rung 08 (the backward pass): dO in, dQ, dK, dV out; o and lse above are then the forward's,
     * inputs. NULL for every forward rung. */
    const attn_grads *grad;
} attn_args;

/* One rung (or one variant of a rung). The driver owns allocation, inputs, poisoning, the
 * reference, timing and the report; a rung only says what it can run and launches it. */
typedef struct rung {
    const char *id;        /* "00", "05b", ... : the name in tables, CSVs and plots */
    const char *name;      /* "baseline", "fa2 mma.sync + cp.async" */
    const char *summary;   /* what changed against the rung before, one line */
    /* 0 if the rung can run this shape; else nonzero with a sentence in why[] */
    int (*unsupported)(const attn_shape *s, const attn_env *env, char *why, size_t why_len);
    /* device bytes needed beyond inputs and outputs */
    size_t (*workspace_bytes)(const attn_shape *s, const attn_env *env);
    /* launch everything on `stream`; NULL on success, else a message (static storage) */
    const char *(*run)(const attn_args *a, cudaStream_t stream);
    /* optional (may be NULL): key=value;... facts about how the shape was run (e.g. rung 06's
     * plan), appended to the report's extra field */
    void (*describe)(const attn_shape *s, const attn_env *env, char *buf, size_t len);
    /* optional (may be NULL): kernels that turn the user's inputs into the form the attention
     * kernel reads (07g: the quantize kernels, float16 -> e4m3 and scales, into the workspace),
     * run on `stream` before every run(), which then launches the attention kernel alone. The
     * driver times the two apart and together (report.c: the row's ms is run()'s; the extra field
     * gives quant_ms, this hook's, and total_ms, both in one timed region); NULL or a message. */
    const char *(*prepare)(const attn_args *a, cudaStream_t stream);
} rung;

/* The refusal of a dtype a step does not compute in: e4m3 by a 16-bit step (every step of
 * rung_variants[]), float16 or bfloat16 by an FP8 step (rung_fp8_variants[]: fp8 = 1). 1 with the
 * reason in why[], or 0. */
static inline int attn_refuse_dtype(const rung *r, int fp8, const attn_shape *s, char *why, size_t n)
{
    if (s->dtype == ATTN_E4M3 && !fp8)
        snprintf(why, n, "%s computes in float16 or bfloat16; float8 e4m3 (--dtype e4m3) is taken only by a step "
                 "built for it (rung 07's 07g)", r->id);
    else if (s->dtype != ATTN_E4M3 && fp8)
        snprintf(why, n, "%s is an FP8 step: it takes --dtype e4m3 (float16 inputs, quantized to float8 e4m3 "
                 "by the step)", r->id);
    else return 0;
    return 1;
}

/* What the driver asks before running a shape: the dtype, then the rung's own unsupported(). */
static inline int attn_unsupported(const rung *r, int fp8, const attn_shape *s, const attn_env *env, char *why,
                                   size_t n)
{
    return attn_refuse_dtype(r, fp8, s, why, n) || r->unsupported(s, env, why, n);
}

/* Page sizes of a paged KV cache (--page-size, validated in cli.c): multiples of 16 keys from 16 to
 * 256. A 64-key tile then starts at a multiple of 16 within its page and spans at most 4 pages. */
enum { ATTN_PAGE_STEP = 16, ATTN_PAGE_MAX = 256 };

/* The refusal every rung but 06 gives a paged KV cache, from its unsupported(): 1 with the reason in
 * why[], or 0 for contiguous K and V. (A rung that reads K and V as [B,Hkv,M,d] would read the
 * pools as if they were; tests/cli.sh checks that every rung but 06 refuses a paged shape.) */
static inline int attn_refuse_paged(const attn_shape *s, char *why, size_t n)
{
    if (!s->page_size) return 0;
    snprintf(why, n, "this rung reads K and V contiguous [B,Hkv,M,d]; a paged KV cache (page size %d) is "
             "rung 06's", s->page_size);
    return 1;
}

/* Every rung's .cu defines this NULL-terminated list in lesson order (05a, 05b, 05c): the last
 * entry is the rung's own, run when no --variant is given; --list prints them in this order. */
extern const rung *const rung_variants[];

/* Optional, beside it: the rung's FP8 steps, which compute in float8 e4m3 and run --dtype e4m3 only
 * (every step of rung_variants[] refuses it: attn_refuse_dtype), in the same form; --list prints them
 * after rung_variants[]' and the last is the rung's own for --dtype e4m3. Rung 07 has one, 07g; the
 * driver finds the list through a weak reference, so the other rungs need not mention it. */
extern const rung *const rung_fp8_variants[];

/* Optional, once per rung binary: what a rung adds to the driver's command line. A rung with a
 * default shape or flags of its own defines `extern "C" const rung_cli rung_cli_own` beside
 * rung_variants (rung 06 does: a decode shape, --planner, --kv-block); a rung that does not runs
 * on the driver's defaults and refuses those flags (common/cli.c; the driver finds rung_cli_own
 * through a weak reference, so the other rungs need not mention it). */
typedef struct rung_cli {
    int B, Hq, Hkv, N, M, d;           /* the default shape: one the rung runs (--help shows it) */
    const char *const *planners;       /* --planner: the names it takes, NULL-terminated; NULL: none */
    const char *planner_default;       /*   the one it uses without --planner */
    int kv_block_default;              /* --kv-block: its keys per KV block; 0: no --kv-block */
    const char *example;               /* another shape it runs, as flags (make stage's hint) */
} rung_cli;

/* Optional, once per rung binary: a rung whose variants compute gradients (rung 08, the backward
 * pass) defines `extern "C" const rung_grad rung_grad_own` beside rung_variants. The driver finds it
 * through a weak reference, as it finds rung_cli_own: with it, every variant of the binary is run as
 * a backward pass (inputs Q, K, V, dO; the forward's O and LSE made untimed; outputs dQ, dK, dV,
 * checked against common/ref_bwd.c); without it, as a forward pass. The forward rungs never name it. */
typedef struct rung_grad {
    /* ids of the variants (NULL-terminated; NULL: none) whose dQ is summed with float atomics in an
     * order that changes run to run: their same-bits check covers dK and dV, not dQ */
    const char *const *atomic_dq;
} rung_grad;

/* ---- counts shared by every report (so rungs, peers and plots compare like with like) ---- */

static inline int attn_kv_len(const attn_shape *s, int b)
{
    return s->seqlens_k ? s->seqlens_k[b] : s->M;
}

/* Keys query row i of a request with KV length mk sees: [0, attn_row_end) */
static inline int attn_row_end(const attn_shape *s, int i, int mk)
{
    if (!s->causal) return mk;
    long e = (long)i + (mk - s->N) + 1;
    return e < 0 ? 0 : (e > mk ? mk : (int)e);
}

/* The (query, key) pairs one request with KV length mk sees, for one head: N * mk, or causal the sum
 * over rows of attn_row_end, which is max(0, i + mk - N + 1) (never above mk): the keys
 * max(1, mk - N + 1) .. mk summed, in closed form, so that a shape of 10^9 rows costs no loop. */
static inline double attn_request_pairs(const attn_shape *s, int mk)
{
    if (!s->causal) return (double)s->N * mk;
    double lo = mk - s->N + 1 > 1 ? (double)mk - s->N + 1 : 1.0, hi = mk;
    return hi < lo ? 0.0 : (lo + hi) * (hi - lo + 1) / 2;
}

/* Number of (query, key) pairs that are not masked, summed over the batch, for one head. */
static inline double attn_visible_pairs(const attn_shape *s)
{
    if (!s->seqlens_k) return s->B * attn_request_pairs(s, s->M);
    double total = 0.0;
    for (int b = 0; b < s->B; b++) total += attn_request_pairs(s, s->seqlens_k[b]);
    return total;
}

/* FLOPs: 4 * Hq * d per visible pair (2 for QK^T, 2 for PV). */
static inline double attn_flops(const attn_shape *s)
{
    return 4.0 * s->Hq * s->d * attn_visible_pairs(s);
}

static inline size_t attn_elem_bytes(attn_dtype t) { (void)t; return 2; }

/* Fewest bytes: Q, K, V (the valid KV rows), O and LSE, each moved once (a paged cache moves the
 * same K and V; its block table, 4 bytes per P keys, is not counted). */
static inline double attn_bytes(const attn_shape *s)
{
    double e = (double)attn_elem_bytes(s->dtype);
    double kv_rows = s->seqlens_k ? 0.0 : (double)s->B * s->M;
    for (int b = 0; s->seqlens_k && b < s->B; b++) kv_rows += s->seqlens_k[b];
    double q = (double)s->B * s->Hq * s->N * s->d;
    double kv = 2.0 * s->Hkv * kv_rows * s->d;
    return e * (2.0 * q + kv) + 4.0 * s->B * s->Hq * s->N;
}

/* The backward pass: FLOPs counted as 2.5x the forward's (5 matrix products of the forward's size
 * against its 2: S = Q K^T again, dP = dO V^T, dV = P^T dO, dQ = dS K, dK = dS^T Q), as FlashAttention's
 * papers count them; bytes as Q, K, V, O, dO, LSE read once and dQ, dK, dV written once. */
static inline double attn_bwd_flops(const attn_shape *s) { return 2.5 * attn_flops(s); }
static inline double attn_bwd_bytes(const attn_shape *s)
{
    return 2.0 * attn_bytes(s) - 4.0 * s->B * s->Hq * s->N;   /* the forward's inputs and outputs twice, LSE once */
}

static inline size_t attn_q_elems(const attn_shape *s)  { return (size_t)s->B * s->Hq * s->N * s->d; }
static inline size_t attn_kv_elems(const attn_shape *s) { return (size_t)s->B * s->Hkv * s->M * s->d; }
static inline size_t attn_lse_elems(const attn_shape *s) { return (size_t)s->B * s->Hq * s->N; }

#ifdef __cplusplus
}
#endif
#endif
