/* --read-floor: one kernel that reads this shape's K and V and nothing else (read_floor_kernel.cu),
 * timed exactly as a rung is (same flush, same events). Its GB/s column counts the shape's fewest
 * bytes, as the rungs' does, so a rung's time over this one is how far it is from the floor for
 * those bytes. */
#include <stdio.h>
#include <string.h>
#include "jobs.h"
#include "check_cuda.h"

typedef struct floor_ctx { driver *D; const void *k, *v; size_t kv_bytes; } floor_ctx;

static const char *floor_prepare(void *p, cudaStream_t st)
{
    floor_ctx *c = p;
    return driver_flush_l2(c->D, st);
}

static const char *floor_launch(void *p, cudaStream_t st)
{
    floor_ctx *c = p;
    return read_floor_launch(c->k, c->kv_bytes, c->v, c->kv_bytes, st);
}

int run_floor(driver *D, const attn_shape *s, double *first_ms_out)
{
    char status[256], extra[256];
    report_row row;
    memset(&row, 0, sizeof row);
    row.rung = "floor-read";
    row.shape = *s;
    row.status = status;
    row.extra = extra;
    row.bytes_only = 1;
    extra[0] = 0;
    *first_ms_out = 0.0;
    if (s->seqlens_k) {
        snprintf(status, sizeof status, "unsupported: --read-floor reads whole K and V; equal lengths only");
        report_emit(&D->out, &row);
        return ST_UNSUPPORTED;
    }
    floor_ctx c = {D, NULL, NULL, attn_kv_elems(s) * attn_elem_bytes(s->dtype)};
    size_t freeb, totalb;
    CUDA_CHECK(cudaMemGetInfo(&freeb, &totalb));
    if (2 * c.kv_bytes + ((size_t)64 << 20) > freeb) {
        snprintf(status, sizeof status, "unsupported: K and V need %.2f GiB", gib(2.0 * c.kv_bytes));
        report_emit(&D->out, &row);
        return ST_TOO_BIG;
    }
    CUDA_CHECK(cudaMalloc((void **)&c.k, c.kv_bytes));
    CUDA_CHECK(cudaMalloc((void **)&c.v, c.kv_bytes));
    CUDA_CHECK(cudaMemset((void *)c.k, 0x11, c.kv_bytes));
    CUDA_CHECK(cudaMemset((void *)c.v, 0x22, c.kv_bytes));
    bench_job job = {floor_prepare, floor_launch, &c};
    double first = 0.0;
    const char *err = bench_once(&job, D->st, &first);
    if (!err) err = bench_time(&job, D->st, D->opt.warmups, D->opt.warm_ms, D->opt.runs, first, &row.t);
    if (err) {
        snprintf(status, sizeof status, "FAIL: %s", err);
    } else {
        snprintf(status, sizeof status, "ok");
        row.timed = 1;
        int k = snprintf(extra, sizeof extra, "runs=%d;warmups=%d;", row.t.runs, row.t.warmups);
        if (row.t.warm_ms) k += snprintf(extra + k, sizeof extra - k, "warm_ms=%d;", row.t.warm_ms);
        snprintf(extra + k, sizeof extra - k, "flush=%s;bytes_read=%zu;", l2_flush_name(D->opt.flush), 2 * c.kv_bytes);
    }
    report_emit(&D->out, &row);
    cudaFree((void *)c.k);
    cudaFree((void *)c.v);
    *first_ms_out = first;
    return err ? ST_FAIL : ST_OK;
}
