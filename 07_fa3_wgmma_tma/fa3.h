/* Rung 07's host side, shared by fa3.cu (07a-07f) and fp8.cu (07g): a variant is a kernel and its
 * launch shape, and one function launches any of them on its tensor maps. */
#ifndef FA3_H
#define FA3_H

#include "tma_wgmma.cuh"

typedef void (*f3_kernel_fn)(const CUtensorMap, const CUtensorMap, const CUtensorMap, const CUtensorMap, f3_params);
typedef struct f3_variant {
    f3_kernel_fn kernel;
    size_t smem;
    int br, bc, threads, dk;
    int persistent;                    /* 07e's schedule: one block per SM, the workspace's counters */
} f3_variant;
/* Three consumer warpgroups (192 rows) for n rows: the rows rule (fa3.cu). */
int f3_three_consumers(int n);
/* The variant's kernel on the tensor maps m (Q, K, V, O) and the shape of a; NULL or an error. */
const char *f3_launch(const attn_args *a, cudaStream_t st, const f3_variant &v, const CUtensorMap *m);

#endif
