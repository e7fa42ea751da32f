/* Rung 06, the host side: which kernels a shape runs, the plan in device memory (plan_device.c)
 * and the three variants' launches. The kernels are split_kv.cuh's (the lesson: start there),
 * instantiated by kernels.cuh's tables; the variants differ only in where a split sequence is
 * merged, each a merge policy of the split kernel in a file of its own:
 *   06a  combine_kernel.cuh the combine kernel, after the split kernel
 *   06b  fused_merge.cuh    the CTA that writes a sequence's last partial merges them (<= 4)
 *   06c  cluster_merge.cuh  on sm_90 a sequence's CTAs form a thread-block cluster and merge
 *                           through each other's shared memory (rung 06's own variant)
 * Every variant also reads a paged KV cache (--page-size P): the kernels' other K/V loader
 * (paged.cuh), the same launches. */
#include <stdio.h>
#include <string.h>
#include "../common/check_cuda.h"
#include "kernels.cuh"
#include "planner.h"
#include "plan_device.h"

/* ---- The kernels for a shape ---- */

/* A shape's kernels (kernels.cuh) and how the planner sees its split kernel. */
typedef struct sk_variant {
    plan_kernel pk;                             /* 06a's split kernel, as the planner sees it */
    const sk_kernels *k;
} sk_variant;

/* The tile for head dim d: the smallest of 64, 96, 128 and 256 that holds it, for d a multiple of 8
 * (rows of whole 16-byte chunks) from 32 to 256; else 0. The tile of 96 (Phi-3's head dim) is a
 * quarter narrower than 128: with 16 rows its 108 KB of shared memory let two CTAs share an SM
 * (split_kv.cuh: sk_layout, sk_smem). */
static int sk_tile_d(int d)
{
    if (d < 32 || d > 256 || d % 8) return 0;
    return d <= 64 ? 64 : d <= 96 ? 96 : d <= 128 ? 128 : 256;
}

/* The kernels a plan_kernel names: its storage type and tile pick the table, its row group, K/V
 * layout and padding the entry. */
static const sk_kernels *sk_kernels_for(const plan_kernel *pk)
{
    static const sk_tile *const tiles[2][4] = {{&sk_f16_d64, &sk_f16_d96, &sk_f16_d128, &sk_f16_d256},
                                               {&sk_bf16_d64, &sk_bf16_d96, &sk_bf16_d128, &sk_bf16_d256}};
    const int t = pk->d == 64 ? 0 : pk->d == 96 ? 1 : pk->d == 128 ? 2 : 3;
    if (pk->heads == 2) return &tiles[pk->dtype == ATTN_BF16][t]->pair;
    return &tiles[pk->dtype == ATTN_BF16][t]->k[pk->rg == 32][pk->paged][pk->pad];
}

/* The kernels for a shape: 0 if its head dim has no tile. Rows per row group: 16 when the packed
 * rows (g * Nq) fit, else 32; the tile of 256 always 16 (32 rows would be 256 floats of O a lane),
 * so a larger group is several row groups, each reading the KV head again. A paged cache with one
 * query head per KV head at d = 96, an even number of them and N <= 4: the two-heads tile
 * (split_kv.cuh, PAIR), a pair of KV heads a sequence. (In the contiguous cache a head's keys are
 * one stream already, and there the pair's two streams measured slower: 06's NOTES.md.) */
static int sk_pick(const attn_shape *s, const attn_env *env, sk_variant *v)
{
    const int D = sk_tile_d(s->d);
    if (!D) return 0;
    const int paged = s->page_size > 0;
    const int pair = paged && s->d == 96 && s->Hq == s->Hkv && s->Hkv % 2 == 0 && 2 * s->N <= 8;
    const int mt = (s->Hq / s->Hkv) * s->N <= 16 || D == 256 ? 1 : 2;
    v->pk = (plan_kernel){NULL, SK_THREADS, 0, D, 16 * mt, env->kv_block ? env->kv_block : SK_BLOCK_DEFAULT, paged,
                          s->dtype, s->d != D, pair ? 2 : 1};
    v->k = sk_kernels_for(&v->pk);
    v->pk.split = (const void *)v->k->split[SK_LATER];
    v->pk.smem = v->k->smem;
    return 1;
}

static int sk_unsupported(const attn_shape *s, const attn_env *env, char *why, size_t n)
{
    sk_variant v;
    if (s->N > 16)
        snprintf(why, n, "rung 06 is the decode kernel: N = %d query tokens per request; it takes 1..16 "
                 "(prefill is rung 05's job)", s->N);
    else if (!sk_pick(s, env, &v))
        snprintf(why, n, "rung 06 runs head dims 32 to 256 in steps of 8, float16 or bfloat16 (d = %d)", s->d);
    else if (!plan_planner_known(env)) snprintf(why, n, "unknown planner '%s' (fa, greedy, balanced, auto)", plan_planner(env));
    else if (s->page_size < 0 || s->page_size % ATTN_PAGE_STEP || s->page_size > ATTN_PAGE_MAX)
        snprintf(why, n, "rung 06 reads pages of a multiple of %d keys up to %d (page size %d)", ATTN_PAGE_STEP,
                 ATTN_PAGE_MAX, s->page_size);
    else if (v.pk.smem > env->smem_per_block_optin || env->cc_major < 8)
        snprintf(why, n, "d = %d (a tile of d = %d) needs compute capability 8.0+ and %zu KB of shared memory per block",
                 s->d, v.pk.d, v.pk.smem / 1024);
    else return 0;
    return 1;
}

static size_t sk_workspace(const attn_shape *s, const attn_env *env)
{
    sk_variant v;
    return sk_pick(s, env, &v) ? plan_workspace(s, env, &v.pk) : 0;
}

/* The plan for this launch (made and uploaded once per batch composition); the kernels' arguments. */
static const char *sk_prepare(const attn_args *a, cudaStream_t st, sk_variant *v, const plan_device **pd, sk_params *p,
                              sk_plan *dp, sk_pages *pp)
{
    const attn_shape *s = &a->shape;
    if (!sk_pick(s, &a->env, v)) return "rung 06: unsupported head dim";
    const char *err = plan_device_get(a, &v->pk, st, pd);
    if (err) return err;
    char *ws = (char *)a->workspace;
    const plan_layout *L = &(*pd)->at;
    const int hkv = s->Hkv / v->pk.heads;           /* the two-heads tile: a pair is one KV head of g = 2 */
    *p = (sk_params){a->q, a->k, a->v, a->o, a->lse, a->seqlens_k,
                     s->Hq, hkv, s->N, s->M, s->causal, s->Hq / hkv, (s->Hq / hkv) * s->N, 0, s->d, v->pk.blk,
                     s->scale * LOG2E};
    p->n_rg = (p->rows + v->pk.rg - 1) / v->pk.rg;
    *dp = (sk_plan){(const int4 *)(ws + L->cta_info), (const int4 *)(ws + L->segs), (const int *)(ws + L->seq_part),
                    (const int *)(ws + L->split_seqs), (int *)(ws + L->seq_count), (float *)(ws + L->part_o),
                    (float *)(ws + L->part_lse)};
    *pp = (sk_pages){a->block_table, s->page_size, a->max_pages};
    if (s->page_size && !a->block_table) return "rung 06: a paged shape without a block table";
    return NULL;
}

/* 06a: the split kernel, then the combine kernel for the sequences that were split. */
static const char *sk_split_then_combine(const attn_args *a, cudaStream_t st, const sk_variant *v, const plan_device *pd,
                                         const sk_params *p, const sk_plan *dp, const sk_pages *pp)
{
    ((sk_split_fn)v->pk.split)<<<pd->plan.n_ctas, SK_THREADS, v->pk.smem, st>>>(*p, *dp, *pp);
    RUNG_LAUNCHED(split_kv_kernel);
    if (pd->n_split == 0) return NULL;
    const int whole = pd->max_parts <= 512 / v->pk.d;      /* at most one partial per lane (the tile's D) */
    const dim3 grid(pd->n_split, min(v->pk.rg, p->rows),   /* slices up to the last holding a column < d */
                    whole ? 1 : (a->shape.d + SK_COMB_SLICE - 1) / SK_COMB_SLICE);
    cudaLaunchAttribute attr;   /* programmatic dependent launch: Hopper on */
    cudaLaunchConfig_t cfg = pdl_config(grid, dim3(128), sizeof(float) * pd->max_parts, st, a->env.cc_major >= 9, &attr);
    RUNG_CUDA(cudaLaunchKernelEx(&cfg, whole ? v->k->combine_row : v->k->combine, *p, *dp));
    RUNG_LAUNCHED(combine_kernel);
    return NULL;
}

/* A variant's run(): the plan and the arguments, then its launches. */
typedef const char *(*sk_launch_fn)(const attn_args *, cudaStream_t, const sk_variant *, const plan_device *,
                                     const sk_params *, const sk_plan *, const sk_pages *);
template <sk_launch_fn LAUNCH>
static const char *sk_run(const attn_args *a, cudaStream_t st)
{
    sk_variant v;
    const plan_device *pd;
    sk_params p;
    sk_plan dp;
    sk_pages pp;
    const char *err = sk_prepare(a, st, &v, &pd, &p, &dp, &pp);
    return err ? err : LAUNCH(a, st, &v, pd, &p, &dp, &pp);
}

/* For the report: the plan a variant's launch uses and how it merges (plan_describe). */
template <plan_merge_fn MERGE>
static void sk_describe(const attn_shape *s, const attn_env *env, char *buf, size_t n)
{
    sk_variant v;
    buf[0] = 0;
    if (sk_pick(s, env, &v)) plan_describe(s, env, &v.pk, MERGE, buf, n);
}

static const char *merge_06a(const split_plan *, const attn_env *, const plan_kernel *) { return "kernel"; }

static const rung rung_06a = {
    "06a", "split-KV + combine kernel",
    "decode: GQA rows packed per KV head; KV split across CTAs by a planner; partials merged by LSE "
    "in a second kernel",
    sk_unsupported, sk_workspace, sk_run<sk_split_then_combine>, sk_describe<merge_06a>, NULL,
};

/* ---- 06b: the fused merge (fused_merge.cuh) ---- */

/* Launches 06b's fused kernel when every split sequence has at most SK_FUSE_MAX partials, else
 * 06a's launches. The kernel's shared-memory size is set once per plan. */
static const char *sk_fused_or_combine(const attn_args *a, cudaStream_t st, const sk_variant *v, const plan_device *pd,
                                       const sk_params *p, const sk_plan *dp, const sk_pages *pp)
{
    if (pd->max_parts == 0 || pd->max_parts > SK_FUSE_MAX) return sk_split_then_combine(a, st, v, pd, p, dp, pp);
    const sk_split_fn k = v->k->split[SK_FUSED];
    static int gen = -1;
    if (gen != pd->gen) {
        RUNG_CUDA(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)v->pk.smem));
        gen = pd->gen;
    }
    k<<<pd->plan.n_ctas, SK_THREADS, v->pk.smem, st>>>(*p, *dp, *pp);
    RUNG_LAUNCHED(split_kv_kernel);
    return NULL;
}

static const char *merge_06b(const split_plan *pl, const attn_env *, const plan_kernel *)
{
    return plan_max_parts(pl) <= SK_FUSE_MAX ? "fused" : "kernel";
}

static const rung rung_06b = {
    "06b", "split-KV + fused merge",
    "06a + a sequence split into <= 4 partials is merged by the CTA that writes its last partial "
    "(no second kernel); more partials: the combine kernel",
    sk_unsupported, sk_workspace, sk_run<sk_fused_or_combine>, sk_describe<merge_06b>, NULL,
};

/* ---- 06c: the cluster merge (cluster_merge.cuh) ---- */

/* The split kernel's launch in clusters of C (the occupancy query asks about the same one). */
static void sk_cluster_config(cudaLaunchConfig_t *cc, cudaLaunchAttribute *ca, int n_ctas, int C, size_t smem, cudaStream_t st)
{
    *cc = cudaLaunchConfig_t{};
    cc->gridDim = dim3(n_ctas);
    cc->blockDim = dim3(SK_THREADS);
    cc->dynamicSmemBytes = smem;
    cc->stream = st;
    *ca = cudaLaunchAttribute{};
    ca->id = cudaLaunchAttributeClusterDimension;
    ca->val.clusterDim.x = C; ca->val.clusterDim.y = 1; ca->val.clusterDim.z = 1;
    cc->attrs = ca;
    cc->numAttrs = 1;
}

/* The cluster size for this plan, or 0. Every sequence must have the same number C (2..8) of
 * one-segment CTAs, consecutive from a multiple of C, so that each cluster of C consecutive CTAs
 * is exactly one sequence's partials: fa's and greedy's plans of a uniform batch are like that.
 * And all the clusters must be resident at once: a cluster's CTAs share a GPC (a group of SMs),
 * so SMs left over in a GPC cannot take one, and fewer than SMs / C clusters of C may fit. At
 * B = 32, M = 4096 (32 clusters of 4) one waited for a second wave and the launch took 39.0 us
 * against 30.9 without clusters (results/lab/h100-ab06-cluster.csv). sm_80, and any error of the
 * occupancy query: 0. */
static int sk_cluster_for(const split_plan *pl, const attn_env *env, const plan_kernel *pk)
{
    if (env->cc_major < 9 || pl->n_ctas < 1 || pl->n_segs != pl->n_ctas) return 0;
    const int C = pl->seq_part[pl->segs[0].seq + 1] - pl->seq_part[pl->segs[0].seq];
    if (C < 2 || C > SK_CLUSTER_MAX || pl->n_ctas % C) return 0;
    for (int c = 0; c < pl->n_ctas; c++) {
        const int q = pl->segs[c].seq;
        if (pl->cta_seg[c] != c || pl->seq_part[q + 1] - pl->seq_part[q] != C || q != pl->segs[c - c % C].seq) return 0;
    }
    const sk_split_fn k = sk_kernels_for(pk)->split[SK_CLUSTER];
    cudaLaunchConfig_t cc;
    cudaLaunchAttribute ca;
    sk_cluster_config(&cc, &ca, pl->n_ctas, C, pk->smem, 0);
    int resident = 0;
    if (cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)pk->smem) != cudaSuccess ||
        cudaOccupancyMaxActiveClusters(&resident, k, &cc) != cudaSuccess) {
        (void)cudaGetLastError();             /* not sticky: clear it */
        return 0;
    }
    return pl->n_ctas / C <= resident ? C : 0;
}

/* Launches 06c's cluster kernel when the plan allows it, else 06b's launches. */
static const char *sk_cluster_or_fused(const attn_args *a, cudaStream_t st, const sk_variant *v, const plan_device *pd,
                                       const sk_params *p, const sk_plan *dp, const sk_pages *pp)
{
    static int gen = -1, C;                  /* the cluster size, decided once per plan */
    if (gen != pd->gen) {
        C = sk_cluster_for(&pd->plan, &a->env, &v->pk);
        gen = pd->gen;
    }
    if (!C) return sk_fused_or_combine(a, st, v, pd, p, dp, pp);
    cudaLaunchConfig_t cc;
    cudaLaunchAttribute ca;
    sk_cluster_config(&cc, &ca, pd->plan.n_ctas, C, v->pk.smem, st);
    RUNG_CUDA(cudaLaunchKernelEx(&cc, v->k->split[SK_CLUSTER], *p, *dp, *pp));
    RUNG_LAUNCHED(split_kv_kernel);
    return NULL;
}

static const char *merge_06c(const split_plan *pl, const attn_env *env, const plan_kernel *k)
{
    return sk_cluster_for(pl, env, k) ? "cluster" : merge_06b(pl, env, k);
}

static const rung rung_06c = {
    "06c", "split-KV + cluster merge",
    "06b + on sm_90, when every request has the same 2..8 CTAs and all fit at once, a request's CTAs "
    "form a thread-block cluster and merge through distributed shared memory (rung 06)",
    sk_unsupported, sk_workspace, sk_run<sk_cluster_or_fused>, sk_describe<merge_06c>, NULL,
};

extern "C" const rung *const rung_variants[] = {&rung_06a, &rung_06b, &rung_06c, NULL};

/* What rung 06 adds to the command line (common/attn.h): its default shape is a decode step (one
 * query token per request, 8 requests, GQA 8:1 over 16384 keys, d = 128), since the driver's
 * default N = 1024 is prefill, which this rung refuses; --planner and --kv-block choose the split. */
extern "C" const rung_cli rung_cli_own = {
    8, 8, 1, 1, 16384, 128, planner_names, planner_default, SK_BLOCK_DEFAULT,
    "--b 32 --hq 8 --hkv 1 --n 1 --m 16384 --d 128 --seqlen-dist uniform",
};
