/* Inline PTX for synchronisation between CTAs (rung 06's merges), each instruction wrapped once:
 *   - an acquire-release atomic add in global memory (sm_70 and newer): the last CTA of a sequence
 *     to finish sees every other CTA's partials (06b's fused merge);
 *   - thread-block clusters (sm_90): a CTA's rank and the cluster's size, the cluster barrier, and
 *     loads from another CTA's shared memory through its cluster address (06c's merge);
 *   - programmatic dependent launch (sm_90): a grid lets its dependent start early, and the
 *     dependent waits for it before reading its results (06a's combine kernel, 08d's three
 *     kernels); pdl_config is the host's launch configuration for it.
 * The cluster and dependent-launch wrappers compile to a trap below sm_90 (cluster) or to nothing
 * (dependent launch: without it the two kernels simply run one after the other); the host launches
 * neither form there. */
#ifndef CTA_SYNC_CUH
#define CTA_SYNC_CUH

#include <stdint.h>
#include "mma.cuh"   /* smem_addr */

/* *p += 1 with acquire-release order at GPU scope; returns the value before. */
static __device__ __forceinline__ int atomic_add_acq_rel(int *p)
{
    int before;
    asm volatile("atom.acq_rel.gpu.global.add.s32 %0, [%1], 1;" : "=r"(before) : "l"(p) : "memory");
    return before;
}

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define CTA_SYNC_SM90(...) asm volatile(__VA_ARGS__)
#else
#define CTA_SYNC_SM90(...) __trap()
#endif

static __device__ __forceinline__ uint32_t cluster_rank(void)
{
    uint32_t r = 0;
    CTA_SYNC_SM90("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return r;
}
static __device__ __forceinline__ int cluster_size(void)
{
    int c = 0;
    CTA_SYNC_SM90("mov.u32 %0, %%cluster_nctarank;" : "=r"(c));
    return c;
}
static __device__ __forceinline__ void cluster_barrier(void)
{
    CTA_SYNC_SM90("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}
static __device__ __forceinline__ uint32_t cluster_addr(const void *p, uint32_t rank)   /* rank's copy of p */
{
    uint32_t r = 0;
    CTA_SYNC_SM90("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(smem_addr(p)), "r"(rank));
    return r;
}
static __device__ __forceinline__ float ld_cluster(uint32_t a)
{
    float v = 0.0f;
    CTA_SYNC_SM90("ld.shared::cluster.f32 %0, [%1];" : "=f"(v) : "r"(a) : "memory");
    return v;
}
static __device__ __forceinline__ float4 ld_cluster4(uint32_t a)
{
    float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    CTA_SYNC_SM90("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];" : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "r"(a)
                  : "memory");
    return v;
}

/* Programmatic dependent launch: the grid's dependent may start now / wait for the grid it depends on. */
static __device__ __forceinline__ void pdl_launch_dependents(void)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;");
#endif
}
static __device__ __forceinline__ void pdl_wait(void)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

/* The host's side: a launch of grid x block on st, a programmatic dependent of the kernel before it
 * in st when pdl (callers pass 0 below sm_90). attr holds the attribute and must outlive the launch. */
static inline cudaLaunchConfig_t pdl_config(dim3 grid, dim3 block, size_t smem, cudaStream_t st, int pdl,
                                            cudaLaunchAttribute *attr)
{
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = grid;
    cfg.blockDim = block;
    cfg.dynamicSmemBytes = smem;
    cfg.stream = st;
    *attr = cudaLaunchAttribute{};
    attr->id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr->val.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = attr;
    cfg.numAttrs = pdl ? 1 : 0;
    return cfg;
}

#endif
