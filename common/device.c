/* The driver's device: find it, say what it offers (for the report and for the rungs' env), and
 * set up what every timed launch needs. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include "jobs.h"
#include "check_cuda.h"

/* "NVIDIA H100 80GB HBM3" -> "h100": the prefix of results/<gpu>-*.csv */
static void short_name(const char *name, char *out, size_t n)
{
    char buf[256], *tok, *save = NULL;
    snprintf(buf, sizeof buf, "%s", name);
    out[0] = 0;
    for (tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
        if (!strcmp(tok, "NVIDIA") || !strcmp(tok, "GeForce") || !strcmp(tok, "Tesla")) continue;
        size_t k = strlen(out);
        for (const char *p = tok; *p && k + 1 < n; p++)
            if (isalnum((unsigned char)*p)) out[k++] = (char)tolower((unsigned char)*p);
        out[k] = 0;
        if (strcmp(tok, "RTX") != 0) break;   /* "RTX 4060" -> "rtx4060" */
    }
    if (!out[0]) snprintf(out, n, "gpu");
}

int device_open(driver *D)
{
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
        cudaGetLastError();
        return 0;
    }
    struct cudaDeviceProp p;
    CUDA_CHECK(cudaGetDeviceProperties(&p, 0));
    snprintf(D->dev.name, sizeof D->dev.name, "%s", p.name);
    short_name(p.name, D->dev.short_name, sizeof D->dev.short_name);
    D->dev.sm_count = p.multiProcessorCount;
    D->dev.l2_bytes = (size_t)p.l2CacheSize;
    CUDA_CHECK(cudaDriverGetVersion(&D->dev.driver_version));
    CUDA_CHECK(cudaRuntimeGetVersion(&D->dev.runtime_version));
    D->env.sm_count = p.multiProcessorCount;
    D->env.cc_major = p.major;
    D->env.cc_minor = p.minor;
    D->env.smem_per_block_optin = p.sharedMemPerBlockOptin;
    D->env.smem_per_sm = p.sharedMemPerMultiprocessor;
    return 1;
}

void nominal_env(attn_env *e)
{
    e->sm_count = 132;
    e->cc_major = 9;
    e->cc_minor = 0;
    e->smem_per_block_optin = 227 * 1024;
    e->smem_per_sm = 228 * 1024;
}

void device_start(driver *D)
{
    CUDA_CHECK(cudaStreamCreateWithFlags(&D->st, cudaStreamNonBlocking));
    CUBLAS_CHECK(cublasCreate(&D->blas));
    D->flush_bytes = 2 * (D->dev.l2_bytes ? D->dev.l2_bytes : ((size_t)64 << 20));
    CUDA_CHECK(cudaMalloc(&D->flush, D->flush_bytes));
}
