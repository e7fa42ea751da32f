/* The read floor: one kernel that only reads, as fast as the GPU can, the bytes it is given. Timed
 * on a shape's K and V (--read-floor, read_floor.c) it is the floor a memory-bound rung is measured
 * against; on the flush buffer alone it is the flush's read-back (l2flush.cu). */
#include "check_cuda.h"
extern "C" {
#include "harness.h"
}

/* a then b as one index space, four independent 16-byte loads in flight per thread per step;
 * 8 blocks of 256 threads per SM (full occupancy), so every SM keeps as many loads in flight as it
 * can. The sum is stored (into a) only if it equals a constant, which it almost never does: the
 * loads cannot be optimised away, and in practice nothing is written. */
__global__ void __launch_bounds__(256) read_floor_kernel(const uint4 *a, size_t na, const uint4 *b, size_t nb,
                                                         unsigned int *sink)
{
    const size_t n = na + nb, stride = (size_t)gridDim.x * blockDim.x;
    unsigned int acc = 0;
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    for (; i + 3 * stride < n; i += 4 * stride) {
        uint4 v[4];
#pragma unroll
        for (int u = 0; u < 4; u++) {
            const size_t j = i + u * stride;
            v[u] = j < na ? a[j] : b[j - na];
        }
#pragma unroll
        for (int u = 0; u < 4; u++) acc += v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
    }
    for (; i < n; i += stride) {
        const uint4 v = i < na ? a[i] : b[i - na];
        acc += v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == 0x9e3779b9u) *sink = acc;
}

const char *read_floor_launch(const void *a, size_t a_bytes, const void *b, size_t b_bytes, cudaStream_t st)
{
    static int sms = 0;
    if (!sms) {
        int dev = 0;
        RUNG_CUDA(cudaGetDevice(&dev));
        RUNG_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    }
    read_floor_kernel<<<sms * 8, 256, 0, st>>>((const uint4 *)a, a_bytes / sizeof(uint4), (const uint4 *)b,
                                                b_bytes / sizeof(uint4), (unsigned int *)a);
    RUNG_LAUNCHED(read_floor_kernel);
    return NULL;
}
