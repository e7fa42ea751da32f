/* Timing with CUDA events: warm up, then time each launch alone, with whatever must not be timed
 * (poisoning outputs, flushing L2) done before it on the same stream. Median, min and max. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <cuda_profiler_api.h>
#include "harness.h"
#include "check_cuda.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

const char *bench_once(const bench_job *job, cudaStream_t st, double *ms)
{
    cudaEvent_t e0, e1;
    const char *err;
    if (job->prepare && (err = job->prepare(job->ctx, st))) return err;
    RUNG_CUDA(cudaEventCreate(&e0));
    RUNG_CUDA(cudaEventCreate(&e1));
    RUNG_CUDA(cudaEventRecord(e0, st));
    err = job->launch(job->ctx, st);
    if (!err) {
        float t;
        RUNG_CUDA(cudaEventRecord(e1, st));
        RUNG_CUDA(cudaEventSynchronize(e1));
        RUNG_CUDA(cudaEventElapsedTime(&t, e0, e1));
        *ms = t;
    }
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    return err;
}

const char *bench_profiled(const bench_job *job, cudaStream_t st)
{
    const char *err;
    if (job->prepare && (err = job->prepare(job->ctx, st))) return err;
    RUNG_CUDA(cudaStreamSynchronize(st));        /* the flush stays outside the profiled range */
    RUNG_CUDA(cudaProfilerStart());
    err = job->launch(job->ctx, st);
    cudaError_t e = cudaStreamSynchronize(st);
    RUNG_CUDA(cudaProfilerStop());
    if (!err && e != cudaSuccess) err = rung_error(__FILE__, __LINE__, "profiled launch", cudaGetErrorString(e));
    return err;
}

int bench_warm_more(int w, int warmups, int warm_ms, double spent)
{
    if (w >= BENCH_WARMUPS_MAX) return 0;
    /* warm_ms keeps the warm-ups going until the GPU has run long enough to settle at its sustained
     * clock (on an H200, the power cap), so that a row's median does not depend on what ran just
     * before it; 0 leaves the count alone in charge, as it always was */
    return (w < warmups && spent < 1000.0) || spent < warm_ms;
}

const char *bench_time(const bench_job *job, cudaStream_t st, int warmups, int warm_ms, int runs,
                       double first_ms, bench_result *out)
{
    const char *err;
    double spent = first_ms, ms;
    int w = 0;
    /* The caller's first launch was the first warm-up. */
    for (w = 1; bench_warm_more(w, warmups, warm_ms, spent); w++) {
        if ((err = bench_once(job, st, &ms))) return err;
        spent += ms;
    }
    if (runs <= 0) {
        double t = first_ms > 1e-3 ? first_ms : 1e-3;
        runs = (int)(200.0 / t);                 /* about 0.2 s of timed launches... */
        if (runs > 200) runs = 200;
        if (runs < 20) runs = 20;                /* ...but at least 20 */
        if (t > 150.0) runs = (int)(3000.0 / t); /* slow launches: about 3 s in all... */
        if (runs < 3) runs = 3;                  /* ...never fewer than 3 */
    }
    double *times = malloc(sizeof(double) * runs);
    for (int r = 0; r < runs; r++) {
        if ((err = bench_once(job, st, &times[r]))) { free(times); return err; }
    }
    qsort(times, runs, sizeof(double), cmp_double);
    out->ms_min = times[0];
    out->ms_max = times[runs - 1];
    out->ms_median = runs % 2 ? times[runs / 2] : 0.5 * (times[runs / 2 - 1] + times[runs / 2]);
    out->runs = runs;
    out->warmups = w;
    out->warm_ms = warm_ms;
    free(times);
    return NULL;
}

/* ---- ceilings ---- */

typedef struct copy_ctx { void *dst; const void *src; size_t bytes; } copy_ctx;

static const char *copy_launch(void *p, cudaStream_t st)
{
    copy_ctx *c = p;
    RUNG_CUDA(cudaMemcpyAsync(c->dst, c->src, c->bytes, cudaMemcpyDeviceToDevice, st));
    return NULL;
}

const char *measure_copy_gbps(cudaStream_t st, double *gbps, double *ms_out)
{
    copy_ctx c;
    c.bytes = (size_t)1 << 30;
    RUNG_CUDA(cudaMalloc(&c.dst, c.bytes));
    RUNG_CUDA(cudaMalloc((void **)&c.src, c.bytes));
    RUNG_CUDA(cudaMemsetAsync((void *)c.src, 0x3c, c.bytes, st));
    bench_job job = {NULL, copy_launch, &c};
    bench_result r;
    double first;
    const char *err = bench_once(&job, st, &first);
    if (!err) err = bench_time(&job, st, 3, 0, 20, first, &r);
    cudaFree(c.dst);
    cudaFree((void *)c.src);
    if (err) return err;
    *ms_out = r.ms_median;
    *gbps = 2.0 * (double)c.bytes / (r.ms_median * 1e-3) * 1e-9;   /* read + written */
    return NULL;
}

typedef struct gemm_ctx { cublasHandle_t h; int n; void *a, *b, *c; } gemm_ctx;

static const char *gemm_launch(void *p, cudaStream_t st)
{
    gemm_ctx *g = p;
    float one = 1.0f, zero = 0.0f;
    cublasStatus_t s;
    if ((s = cublasSetStream(g->h, st)) != CUBLAS_STATUS_SUCCESS)
        return rung_error(__FILE__, __LINE__, "cublasSetStream", cublas_status_name(s));
    s = cublasGemmEx(g->h, CUBLAS_OP_N, CUBLAS_OP_N, g->n, g->n, g->n, &one, g->a, CUDA_R_16F, g->n,
                     g->b, CUDA_R_16F, g->n, &zero, g->c, CUDA_R_16F, g->n, CUBLAS_COMPUTE_32F,
                     CUBLAS_GEMM_DEFAULT);
    if (s != CUBLAS_STATUS_SUCCESS) return rung_error(__FILE__, __LINE__, "cublasGemmEx", cublas_status_name(s));
    return NULL;
}

const char *measure_gemm_tflops(cublasHandle_t h, cudaStream_t st, int n, double *tflops, double *ms_out)
{
    gemm_ctx g = {h, n, NULL, NULL, NULL};
    size_t elems = (size_t)n * n;
    uint16_t *host = malloc(elems * 2);
    RUNG_CUDA(cudaMalloc(&g.a, elems * 2));
    RUNG_CUDA(cudaMalloc(&g.b, elems * 2));
    RUNG_CUDA(cudaMalloc(&g.c, elems * 2));
    /* random operands: a product of zeros runs faster than real data */
    fill_normal(host, elems, ATTN_F16, 99, 21, 1.0);
    RUNG_CUDA(cudaMemcpy(g.a, host, elems * 2, cudaMemcpyHostToDevice));
    fill_normal(host, elems, ATTN_F16, 99, 22, 1.0);
    RUNG_CUDA(cudaMemcpy(g.b, host, elems * 2, cudaMemcpyHostToDevice));
    free(host);
    bench_job job = {NULL, gemm_launch, &g};
    bench_result r;
    double first;
    const char *err = bench_once(&job, st, &first);
    if (!err) err = bench_time(&job, st, 3, 0, 20, first, &r);
    cudaFree(g.a);
    cudaFree(g.b);
    cudaFree(g.c);
    if (err) return err;
    *ms_out = r.ms_median;
    *tflops = 2.0 * n * (double)n * n / (r.ms_median * 1e-3) * 1e-12;
    return NULL;
}
