/* Rung 06's plan in device memory (plan_device.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cuda_runtime_api.h>
#include <vector_types.h>
#include "plan_device.h"

const char *plan_planner(const attn_env *env) { return env->planner ? env->planner : planner_default; }

int plan_planner_known(const attn_env *env)
{
    for (int i = 0; planner_names[i]; i++)
        if (!strcmp(planner_names[i], plan_planner(env))) return 1;
    return 0;
}

int plan_slots(const attn_env *env, const plan_kernel *k)
{
    int per_sm = 1;
    if (cudaFuncSetAttribute(k->split, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)k->smem) != cudaSuccess ||
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k->split, k->threads, k->smem) != cudaSuccess ||
        per_sm < 1) {
        (void)cudaGetLastError();             /* not sticky: clear it */
        per_sm = 1;
    }
    return env->sm_count * per_sm;
}

int plan_shape(const attn_shape *s, const attn_env *env, const plan_kernel *k, split_plan *pl, long *kv_blocks)
{
    const int hkv = s->Hkv / k->heads;        /* the KV heads as the kernels see them (pairs) */
    const int n_rg = ((s->Hq / hkv) * s->N + k->rg - 1) / k->rg, n_seqs = s->B * hkv * n_rg;
    int *blocks = malloc(sizeof(int) * (size_t)n_seqs);
    long total = 0;
    for (int i = 0; i < n_seqs; i++) total += blocks[i] = (attn_kv_len(s, i / (hkv * n_rg)) + k->blk - 1) / k->blk;
    const int rc = plan_splits(plan_planner(env), blocks, n_seqs, plan_slots(env, k), pl);
    free(blocks);
    if (kv_blocks) *kv_blocks = total;
    return rc;
}

int plan_max_parts(const split_plan *pl)
{
    int most = 0;
    for (int q = 0; q < pl->n_seqs; q++)
        if (pl->seq_part[q + 1] - pl->seq_part[q] > most) most = pl->seq_part[q + 1] - pl->seq_part[q];
    return most;
}

plan_layout plan_layout_of(const split_plan *pl, const plan_kernel *k)
{
    const int rg = k->rg, d = k->d;
    plan_layout L;
    size_t at = 0;
    L.segs = at;       at += sizeof(int4) * (size_t)pl->n_segs;
    L.cta_info = at;   at += 2 * sizeof(int4) * (size_t)pl->n_ctas;
    L.seq_part = at;   at += sizeof(int) * (size_t)(pl->n_seqs + 1);
    L.split_seqs = at; at += sizeof(int) * (size_t)pl->n_seqs;
    L.seq_count = at;  at += sizeof(int) * (size_t)pl->n_seqs;
    at = (at + 255) & ~(size_t)255;
    L.part_lse = at;   at += sizeof(float) * (size_t)pl->n_parts * rg;
    at = (at + 255) & ~(size_t)255;
    L.part_o = at;     at += sizeof(float) * (size_t)pl->n_parts * rg * d;
    L.total = at;
    return L;
}

size_t plan_workspace(const attn_shape *s, const attn_env *env, const plan_kernel *k)
{
    split_plan pl;
    if (plan_shape(s, env, k, &pl, NULL)) return 0;
    const size_t bytes = plan_layout_of(&pl, k).total;
    plan_free(&pl);
    return bytes;
}

void plan_describe(const attn_shape *s, const attn_env *env, const plan_kernel *k, plan_merge_fn merge, char *buf, size_t n)
{
    split_plan pl;
    long total;
    buf[0] = 0;
    if (plan_shape(s, env, k, &pl, &total)) return;
    const int slots = plan_slots(env, k);
    snprintf(buf, n, "planner=%s;block=%d;merge=%s;slots=%d;ctas=%d;segments=%d;partials=%d;kv_blocks=%ld;makespan=%ld;ideal=%ld",
             plan_planner(env), k->blk, plan_max_parts(&pl) == 0 ? "none" : merge(&pl, env, k), slots, pl.n_ctas, pl.n_segs,
             pl.n_parts, total, pl.makespan, (total + slots - 1) / slots);
    plan_free(&pl);
}

/* The cache: what the plan was made for. */
static plan_device cached;
static struct {
    int valid;
    void *workspace;
    attn_shape shape;
    attn_env env;
    plan_kernel k;
    int *lens;
} key;

static int same_key(const attn_args *a, const plan_kernel *k)
{
    const attn_shape *s = &a->shape, *c = &key.shape;
    if (!key.valid || key.workspace != a->workspace || strcmp(plan_planner(&key.env), plan_planner(&a->env)) ||
        key.env.sm_count != a->env.sm_count || key.k.split != k->split || key.k.threads != k->threads ||
        key.k.smem != k->smem || key.k.d != k->d || key.k.rg != k->rg || key.k.blk != k->blk ||
        key.k.paged != k->paged || key.k.dtype != k->dtype || key.k.pad != k->pad || key.k.heads != k->heads ||
        c->B != s->B || c->Hq != s->Hq || c->Hkv != s->Hkv || c->N != s->N || c->M != s->M || c->d != s->d)
        return 0;
    for (int b = 0; b < s->B; b++)
        if (key.lens[b] != attn_kv_len(s, b)) return 0;
    return 1;
}

#define UPLOAD(call) do { if ((call) != cudaSuccess) { err = "rung 06: uploading the plan failed"; goto done; } } while (0)

const char *plan_device_get(const attn_args *a, const plan_kernel *k, cudaStream_t stream, const plan_device **out)
{
    const attn_shape *s = &a->shape;
    *out = &cached;
    if (same_key(a, k)) return NULL;
    if (key.valid) { plan_free(&cached.plan); free(key.lens); key.valid = 0; }
    split_plan *pl = &cached.plan;
    if (plan_shape(s, &a->env, k, pl, NULL)) return "rung 06: the planner failed";
    cached.at = plan_layout_of(pl, k);
    if (cached.at.total > a->workspace_bytes) { plan_free(pl); return "rung 06: workspace smaller than the plan"; }
    const char *err = NULL;
    int4 *seg = malloc(sizeof(int4) * (size_t)(pl->n_segs + 2 * pl->n_ctas)), *cta = seg + pl->n_segs;
    int *split = malloc(sizeof(int) * (size_t)pl->n_seqs);
    for (int i = 0; i < pl->n_segs; i++)
        seg[i] = (int4){pl->segs[i].seq, pl->segs[i].blk_begin, pl->segs[i].blk_end, pl->segs[i].part};
    for (int c = 0; c < pl->n_ctas; c++) {
        cta[2 * c] = (int4){pl->cta_seg[c], pl->cta_seg[c + 1], 0, 0};
        cta[2 * c + 1] = pl->cta_seg[c] < pl->n_segs ? seg[pl->cta_seg[c]] : (int4){0, 0, 0, -1};
    }
    cached.n_split = 0;
    for (int q = 0; q < pl->n_seqs; q++)
        if (pl->seq_part[q + 1] > pl->seq_part[q]) split[cached.n_split++] = q;
    cached.max_parts = plan_max_parts(pl);
    char *ws = a->workspace;
    const plan_layout *L = &cached.at;
    UPLOAD(cudaMemcpyAsync(ws + L->segs, seg, sizeof(int4) * (size_t)pl->n_segs, cudaMemcpyHostToDevice, stream));
    UPLOAD(cudaMemcpyAsync(ws + L->cta_info, cta, 2 * sizeof(int4) * (size_t)pl->n_ctas, cudaMemcpyHostToDevice, stream));
    UPLOAD(cudaMemcpyAsync(ws + L->seq_part, pl->seq_part, sizeof(int) * (size_t)(pl->n_seqs + 1), cudaMemcpyHostToDevice, stream));
    UPLOAD(cudaMemcpyAsync(ws + L->split_seqs, split, sizeof(int) * (size_t)pl->n_seqs, cudaMemcpyHostToDevice, stream));
    UPLOAD(cudaMemsetAsync(ws + L->seq_count, 0, sizeof(int) * (size_t)pl->n_seqs, stream));   /* 06b keeps them 0 */
    UPLOAD(cudaStreamSynchronize(stream));    /* before the host arrays go */
    key.lens = malloc(sizeof(int) * (size_t)s->B);
    for (int b = 0; b < s->B; b++) key.lens[b] = attn_kv_len(s, b);
    key.shape = *s;
    key.env = a->env;
    key.k = *k;
    key.workspace = a->workspace;
    key.valid = 1;
    cached.gen++;
done:
    free(seg);
    free(split);
    if (err) plan_free(pl);
    return err;
}
