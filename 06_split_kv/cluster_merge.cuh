/* Variant 06c, rung 06's own: the cluster merge (sm_90). Against 06b, one change: when the plan
 * gives every sequence the same C = 2..8 one-segment CTAs, and all of its clusters fit on the GPU
 * at once, each sequence's CTAs are launched as one thread-block cluster and merge their partials
 * through distributed shared memory. No partial goes to global memory, no CTA waits on another's
 * writes through L2, and no counter decides who merges. Other plans run as 06b.
 *
 * In the kernel: each CTA leaves its normalized O (float32, after the warps' scratch) and its
 * rows' LSEs in its own shared memory; after a cluster barrier, CTA q of the C merges the q-th
 * share of the (row, 4 columns) pairs, reading the C CTAs' pieces with ld.shared::cluster, with
 * 06b's arithmetic (merge_pair); a second barrier keeps every CTA's shared memory alive until all
 * have read it. On sm_80 the host never asks for it and the instructions compile to a trap (the
 * cluster wrappers are common/cta_sync.cuh's).
 *
 * Compiled into split_kv.cu's translation unit (it instantiates that file's kernel). */

#define SK_CLUSTER_MAX 8          /* the portable cluster size */
template <typename T, int D, int RG>
struct merge_cluster {
    static __device__ __forceinline__ void put_lse(const sk_params &, const sk_plan &, const sk_out &s, int r, float lse)
    {
        s.s_lse[r] = lse;                     /* its thread has read row r's l of every warp */
    }
    static __device__ __forceinline__ void put_o(const sk_params &, const sk_plan &, const sk_out &s, int r, int c, float4 acc)
    {
        *reinterpret_cast<float4 *>(s.s_o + r * D + c) = acc;
    }
    static __device__ __forceinline__ void finish(const sk_params &p, const sk_plan &, const sk_out &s)
    {
        constexpr int CG = D / 4;
        const int C = cluster_size();
        cluster_barrier();                    /* every CTA's s_o and s_lse are written */
        const int q = (int)cluster_rank();
        for (int e = q * SK_THREADS + threadIdx.x; e < s.n_rows * CG; e += C * SK_THREADS) {
            const int r = e / CG, c = (e % CG) * 4;
            if (c >= s.d) continue;           /* a padded head dim: the columns past d are not O's */
            float l[SK_CLUSTER_MAX];
            float4 x[SK_CLUSTER_MAX];
#pragma unroll
            for (int j = 0; j < SK_CLUSTER_MAX; j++)
                if (j < C) {
                    l[j] = ld_cluster(cluster_addr(s.s_lse + r, j));
                    x[j] = ld_cluster4(cluster_addr(s.s_o + r * D + c, j));
                }
            merge_pair<SK_CLUSTER_MAX>(l, x, C, reinterpret_cast<T *>(p.o) + (s.q_row0 + r) * s.d + c,
                                       c == 0 ? p.lse + s.q_row0 + r : NULL);
        }
        cluster_barrier();                    /* no CTA leaves while others read it */
    }
};

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
    const sk_split_fn k = sk_kernel<merge_cluster>(pk);
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
    RUNG_CUDA(cudaLaunchKernelEx(&cc, sk_kernel<merge_cluster>(&v->pk), *p, *dp, *pp, a->shape.d));
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
    sk_unsupported, sk_workspace, sk_run<sk_cluster_or_fused>, sk_describe<merge_06c>,
};
