/* A CUDA device's attn_env (device_env.h). Attributes one by one rather than
 * cudaGetDeviceProperties, which reads every property and costs milliseconds: the C API asks on
 * every call that meets a device it has not seen. */
#include <stdio.h>
#include "device_env.h"

int device_count(char *why, size_t n)
{
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
        cudaGetLastError();   /* not sticky: clear it, so that the next call is not blamed */
        if (why && n)
            snprintf(why, n, "no CUDA device found (%s)", e != cudaSuccess ? cudaGetErrorString(e) : "none listed");
        return 0;
    }
    return count;
}

cudaError_t device_env(int dev, attn_env *e)
{
    int sm, major, minor, optin, per_sm;
    cudaError_t err;
    if ((err = cudaDeviceGetAttribute(&sm, cudaDevAttrMultiProcessorCount, dev)) != cudaSuccess ||
        (err = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev)) != cudaSuccess ||
        (err = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev)) != cudaSuccess ||
        (err = cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev)) != cudaSuccess ||
        (err = cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev)) != cudaSuccess)
        return err;
    e->sm_count = sm;
    e->cc_major = major;
    e->cc_minor = minor;
    e->smem_per_block_optin = (size_t)optin;
    e->smem_per_sm = (size_t)per_sm;
    return cudaSuccess;
}

void nominal_env(attn_env *e)
{
    e->sm_count = 132;
    e->cc_major = 9;
    e->cc_minor = 0;
    e->smem_per_block_optin = 227 * 1024;
    e->smem_per_sm = 228 * 1024;
}
