/* The driver's device: find it, say what it offers (for the report and for the rungs' env), and
 * set up what every timed launch needs. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include "jobs.h"
#include "check_cuda.h"
#include "device_env.h"

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
    if (!device_count(NULL, 0)) return 0;
    struct cudaDeviceProp p;
    CUDA_CHECK(cudaGetDeviceProperties(&p, 0));
    snprintf(D->dev.name, sizeof D->dev.name, "%s", p.name);
    short_name(p.name, D->dev.short_name, sizeof D->dev.short_name);
    D->dev.sm_count = p.multiProcessorCount;
    D->dev.l2_bytes = (size_t)p.l2CacheSize;
    CUDA_CHECK(cudaDriverGetVersion(&D->dev.driver_version));
    CUDA_CHECK(cudaRuntimeGetVersion(&D->dev.runtime_version));
    CUDA_CHECK(device_env(0, &D->env));   /* what the rungs read, as the C API reads it (device_env.c) */
    return 1;
}

void device_start(driver *D)
{
    CUDA_CHECK(cudaStreamCreateWithFlags(&D->st, cudaStreamNonBlocking));
    CUBLAS_CHECK(cublasCreate(&D->blas));
    D->flush_bytes = 2 * (D->dev.l2_bytes ? D->dev.l2_bytes : ((size_t)64 << 20));
    CUDA_CHECK(cudaMalloc(&D->flush, D->flush_bytes));
}
