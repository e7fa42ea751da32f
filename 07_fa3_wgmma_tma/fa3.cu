/* Rung 07, the 16-bit steps 07a-07f (lazy_rescale.cuh includes the steps before it in order), and
 * the host code that picks a tile, builds the tensor maps and launches. 07g is fp8.cu. */
#include <stdio.h>
#include "../common/check_cuda.h"
#include "../common/tensor_map.h"
#include "fa3.h"
#include "lazy_rescale.cuh"

enum { F3_07A, F3_07B, F3_07C, F3_07D, F3_07E, F3_07F };
/* The kernel of a step for a tile T: 07a's own, or 07b's skeleton with the step's loop and schedule. */
template <class T>
static f3_kernel_fn f3_kernel_of(int var)
{
    switch (var) {
    case F3_07A: return fa3_kernel<T>;
    case F3_07B: return fa3_ws_kernel<T, f3_loop_ws<T>, f3_grid<T> >;
    case F3_07C: return fa3_ws_kernel<T, f3_loop_pp<T>, f3_grid<T> >;
    case F3_07D: return fa3_ws_kernel<T, f3_loop_ov<T, f3_rescale_always>, f3_grid<T> >;
    case F3_07E: return fa3_ws_kernel<T, f3_loop_ov<T, f3_rescale_always>, f3_persistent<T> >;
    default:     return fa3_ws_kernel<T, f3_loop_ov<T, f3_lazy, f3_exp_turn<T> >, f3_persistent<T> >;
    }
}

template <int DK, bool WIDE, int CW>
static void f3_fill(f3_variant *v, int var, int bf16)
{
    typedef f3_tile<DK, WIDE, CW, false> H;
    typedef f3_tile<DK, WIDE, CW, true> B;
    *v = (f3_variant){bf16 ? f3_kernel_of<B>(var) : f3_kernel_of<H>(var), H::smem, H::BR, H::BC,
                      128 * (var == F3_07A ? H::CW : H::CW + 1), H::DK, var >= F3_07E};
}
/* The rows rule of the tile table: three consumers unless 192-row blocks cover more than 5% more
 * rows than 128-row ones (N = 512 and 1024: 12.5% more), where the third consumer's empty rows cost
 * more than it brings (NOTES.md, "The tile table"). */
int f3_three_consumers(int n)
{
    const int rows3 = (n + 191) / 192 * 192, rows2 = (n + 127) / 128 * 128;
    return 20 * rows3 <= 21 * rows2;
}
/* The tile of a shape: d rounded up to the next DK of the table. At d = 128 the wide 176-key tile
 * when not causal and a row sees at least 16 of them (below that its partial last tile and longer
 * fill cost more than it saves); at d = 64 and 96 three consumers by the rows rule. */
static int f3_pick(const attn_shape *s, int var, f3_variant *v)
{
    const int d = s->d, bf16 = s->dtype == ATTN_BF16, three = f3_three_consumers(s->N);
    const int wide = !s->causal && s->M >= 16 * f3_tile<128, true, 2, false>::BC;
    if (d % 8 || d < 8 || d > 256) return 0;
    if (d <= 64) { if (three) f3_fill<64, false, 3>(v, var, bf16); else f3_fill<64, false, 2>(v, var, bf16); }
    else if (d <= 96) { if (three) f3_fill<96, false, 3>(v, var, bf16); else f3_fill<96, false, 2>(v, var, bf16); }
    else if (d <= 128) { if (wide) f3_fill<128, true, 2>(v, var, bf16); else f3_fill<128, false, 2>(v, var, bf16); }
    else if (d <= 192) f3_fill<192, false, 2>(v, var, bf16);
    else f3_fill<256, false, 2>(v, var, bf16);
    return 1;
}

static int f3_unsupported(const attn_shape *s, const attn_env *env, char *why, size_t n)
{
    f3_variant v;
    if (env->cc_major != 9) snprintf(why, n, "rung 07 needs a Hopper GPU (sm_90: wgmma, TMA); this one is sm_%d%d",
                                      env->cc_major, env->cc_minor);
    else if (!f3_pick(s, F3_07A, &v))
        snprintf(why, n, "rung 07 takes head dims that are multiples of 8 up to 256 (TMA rows of 16-byte multiples; d = %d)", s->d);
    else if (attn_refuse_paged(s, why, n)) return 1;
    else if (s->seqlens_k) snprintf(why, n, "rung 07 takes one KV length for every request (varlen decode is rung 06's job)");
    else if (v.smem > env->smem_per_block_optin) snprintf(why, n, "needs %zu KB of shared memory per block", v.smem / 1024);
    else return 0;
    return 1;
}
/* O, m and l live in registers; 07e on: the causal schedule's two counters (persistent.cuh). */
static size_t f3_workspace(const attn_shape *, const attn_env *) { return 0; }
static size_t f3_workspace_07e(const attn_shape *, const attn_env *) { return 2 * sizeof(int); }
/* 07e's L2 sections: the query heads whose K and V (together) fit in 32 MB of L2 (the H100's is 50
 * MB), rounded down to a power of two KV heads, times the query heads per KV head. */
static int f3_section(const attn_shape *s)
{
    const double kv_head = 2.0 * s->M * s->d * 2.0;
    int kv = 1;
    while (kv * 2 <= s->Hkv * s->B && (kv * 2) * kv_head <= 32.0 * 1024 * 1024) kv *= 2;
    return kv * (s->Hq / s->Hkv);
}

static tensor_map_cache maps;   /* Q, K, V, O, rebuilt when the buffers or the shape change */
static const char *f3_run(const attn_args *a, cudaStream_t st, int var)
{
    const attn_shape *s = &a->shape;
    f3_variant v;
    if (!f3_pick(s, var, &v)) return "rung 07: unsupported head dim";
    const intptr_t key[] = {(intptr_t)a->q, (intptr_t)a->k, (intptr_t)a->v, (intptr_t)a->o, s->B, s->Hq, s->Hkv,
                            s->N, s->M, s->d, s->dtype, v.br, v.bc};
    const char *err;
    if (!tensor_map_cache_hit(&maps, key, sizeof key) &&
        ((err = tensor_map_3d(&maps.m[0], a->q, s->dtype, s->d, s->N, s->B * s->Hq, v.br)) ||
         (err = tensor_map_3d(&maps.m[1], a->k, s->dtype, s->d, s->M, s->B * s->Hkv, v.bc)) ||
         (err = tensor_map_3d(&maps.m[2], a->v, s->dtype, s->d, s->M, s->B * s->Hkv, v.bc)) ||
         (err = tensor_map_3d(&maps.m[3], a->o, s->dtype, s->d, s->N, s->B * s->Hq, v.br)))) {
        maps.valid = 0;
        return err;
    }
    return f3_launch(a, st, v, maps.m);
}
/* 07a-07d: one block per work tile; 07e on: one per SM, and the workspace's counters zeroed once. */
const char *f3_launch(const attn_args *a, cudaStream_t st, const f3_variant &v, const CUtensorMap *m)
{
    const attn_shape *s = &a->shape;
    RUNG_CUDA(cudaFuncSetAttribute(v.kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)v.smem));
    const int n_mblocks = (s->N + v.br - 1) / v.br, n_bh = s->B * s->Hq;
    const f3_params p = {a->o, a->lse, s->Hq, s->Hkv, s->N, s->M, s->causal, s->d, s->scale * LOG2E,
                         n_mblocks, n_bh, n_mblocks * n_bh, f3_section(s), (int *)a->workspace};
    dim3 grid(n_mblocks, n_bh);
    if (v.persistent) {
        static const void *zeroed;             /* the two counters start at 0, and each launch leaves them so */
        if (a->workspace != zeroed) {
            RUNG_CUDA(cudaMemsetAsync(a->workspace, 0, 2 * sizeof(int), st));
            zeroed = a->workspace;
        }
        grid = dim3(p.tiles < a->env.sm_count ? p.tiles : a->env.sm_count);
    }
    v.kernel<<<grid, v.threads, v.smem, st>>>(m[0], m[1], m[2], m[3], p);
    RUNG_LAUNCHED(fa3_kernel);
    return NULL;
}
template <int VAR>
static const char *f3_run_step(const attn_args *a, cudaStream_t st) { return f3_run(a, st, VAR); }
/* The tile a shape ran in, for the CSV's extra field. */
static void f3_describe(const attn_shape *s, const attn_env *, char *buf, size_t len)
{
    f3_variant v;
    if (f3_pick(s, F3_07A, &v)) snprintf(buf, len, "tile=%dx%d;dk=%d", v.br, v.bc, v.dk);
    else if (len) buf[0] = '\0';
}

static const rung rung_07a = {
    "07a", "fa3: TMA + wgmma", "Hopper: K/V tiles by TMA on mbarriers, S = Q K^T and O += P V on wgmma "
    "(P from registers); two warpgroups, no overlap of the products yet",
    f3_unsupported, f3_workspace, f3_run_step<F3_07A>, f3_describe, NULL,
};
static const rung rung_07b = {
    "07b", "fa3: warp-specialized", "07a + a producer warpgroup issues the TMA copies into rings of full/empty "
    "mbarriers (K and V apart); two consumer warpgroups compute; setmaxnreg gives the registers to the consumers",
    f3_unsupported, f3_workspace, f3_run_step<F3_07B>, f3_describe, NULL,
};
static const rung rung_07c = {
    "07c", "fa3: ping-pong", "07b + the two consumer warpgroups take turns on the tensor cores (named barriers): "
    "one's softmax runs under the other's P V and Q K^T",
    f3_unsupported, f3_workspace, f3_run_step<F3_07C>, f3_describe, NULL,
};
static const rung rung_07d = {
    "07d", "fa3: ping-pong + intra-warpgroup overlap", "07c + inside each consumer, the softmax of tile j runs "
    "while the tensor cores do P V of tile j - 1 (FlashAttention-3's kernel; the wait pinned after the softmax "
    "in the machine code)",
    f3_unsupported, f3_workspace, f3_run_step<F3_07D>, f3_describe, NULL,
};
static const rung rung_07e = {
    "07e", "fa3: persistent", "07d + one block per SM walks the work tiles (longest first when causal, heads in "
    "L2-sized sections); Q and K of the next tile load under this one; O leaves through shared memory by TMA",
    f3_unsupported, f3_workspace_07e, f3_run_step<F3_07E>, f3_describe, NULL,
};
static const rung rung_07f = {
    "07f", "fa3: the softmax's schedule", "07e + O rescaled only when a row's max has grown by more than 2^8 "
    "(FlashAttention-4's lazy rescale); with two consumers, the turn around the exponentials (cuDNN's order)",
    f3_unsupported, f3_workspace_07e, f3_run_step<F3_07F>, f3_describe, NULL,
};

extern "C" const rung *const rung_variants[] = {&rung_07a, &rung_07b, &rung_07c, &rung_07d, &rung_07e,
                                                 &rung_07f, NULL};
