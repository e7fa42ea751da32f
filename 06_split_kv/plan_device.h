/* Rung 06's plan in device memory: the sequences of a decode shape, planned (planner.c) and laid
 * out in the rung's workspace for the kernels to read; cached across launches. Plain C (host only):
 * the kernels are in split_kv.cu. */
#ifndef PLAN_DEVICE_H
#define PLAN_DEVICE_H

#include "../common/attn.h"
#include "planner.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How the kernels are launched, as far as the plan depends on it. */
typedef struct plan_kernel {
    const void *split;     /* the split kernel (its occupancy gives the planner's slots) */
    int threads;           /* per CTA */
    size_t smem;           /* dynamic shared memory per CTA */
    int d;                 /* the tile's head dim D, 64, 128 or 256 (a partial's row is D floats) */
    int rg;                /* packed query rows per sequence (a row group) */
    int blk;               /* keys per KV block, the planner's unit */
    int paged;             /* 1: the kernels read K and V from a paged cache (another instantiation) */
    attn_dtype dtype;      /* the storage type (another instantiation) */
    int pad;               /* 1: the shape's head dim is less than d (the padded instantiation) */
    int heads;             /* KV heads a sequence reads: 1, or 2 (the two-heads tile: a pair of KV
                              heads as one of a GQA group of 2, split_kv.cuh) */
} plan_kernel;

/* Byte offsets in the workspace: the segments {seq, blk_begin, blk_end, part} (int4 each); per
 * CTA two int4, {first segment, end segment, 0, 0} and its first segment; seq_part; the split
 * sequences; a counter per sequence (zeroed); the partial LSEs [n_parts][rg]; the partial O
 * [n_parts][rg][d], float32. */
typedef struct plan_layout {
    size_t segs, cta_info, seq_part, split_seqs, seq_count, part_lse, part_o, total;
} plan_layout;

typedef struct plan_device {
    split_plan plan;       /* the host copy */
    plan_layout at;
    int n_split;           /* sequences with partials */
    int max_parts;         /* the most partials of any one sequence (0: nothing is split) */
    int gen;               /* plans made so far: what a caller derives from the plan, it redoes when this moves */
} plan_device;

/* CTAs of this kernel that run at once on the device: SMs x CTAs per SM. */
int plan_slots(const attn_env *env, const plan_kernel *k);

/* Plans the shape's sequences, (request, KV head, row group), each of ceil(len / blk) blocks;
 * *kv_blocks (if not NULL) gets their sum. Nonzero if the planner fails. */
int plan_shape(const attn_shape *s, const attn_env *env, const plan_kernel *k, split_plan *pl, long *kv_blocks);

/* The most partials any one sequence of the plan has (0: nothing is split). */
int plan_max_parts(const split_plan *pl);

plan_layout plan_layout_of(const split_plan *pl, const plan_kernel *k);

/* The workspace a shape needs (0 if it cannot be planned). */
size_t plan_workspace(const attn_shape *s, const attn_env *env, const plan_kernel *k);

/* For the report: key=value;... facts about the plan (planner, block, how split sequences are
 * merged: merge(plan) or "none", slots, CTAs, segments, partials, KV blocks, makespan, ideal). */
typedef const char *(*plan_merge_fn)(const split_plan *pl, const attn_env *env, const plan_kernel *k);
void plan_describe(const attn_shape *s, const attn_env *env, const plan_kernel *k, plan_merge_fn merge, char *buf, size_t n);

/* The plan for this launch: made and uploaded on a miss (on `stream`, waited for: a warm-up launch,
 * never a timed one), else the cached one; planning inside a timed launch would put host work
 * between the timing events. NULL, or an error message. */
const char *plan_device_get(const attn_args *a, const plan_kernel *k, cudaStream_t stream, const plan_device **out);

/* The planner a launch uses: --planner, or the default; and whether planner.c knows it. */
const char *plan_planner(const attn_env *env);
int plan_planner_known(const attn_env *env);

#ifdef __cplusplus
}
#endif
#endif
