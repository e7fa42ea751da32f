/* One shape through the rung:
 *
 *   refuse what the rung cannot run -> fit in memory -> seeded inputs (a paged shape: K and V
 *   scattered into page pools, common/pages.c) -> poison O and LSE with NaN
 *   -> run once and check against the float64 reference -> time (events, L2 flushed before every
 *   launch; a rung's prepare() runs before the flush, untimed, and is then timed alone and with
 *   the rung, for the extra field) -> check that the last timed run produced the same bits as the
 *   first -> report.
 * --no-time and --profile launch once more instead of timing (--profile: under cudaProfilerStart). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "jobs.h"
#include "check_cuda.h"
#include "half.h"

typedef struct launch_ctx {
    driver *D;
    attn_args a;
    size_t o_bytes, lse_bytes;
} launch_ctx;

static const char *poison(const launch_ctx *c, cudaStream_t st)
{
    RUNG_CUDA(cudaMemsetAsync(c->a.o, 0xff, c->o_bytes, st));        /* NaN in f16, bf16 and f32 */
    RUNG_CUDA(cudaMemsetAsync(c->a.lse, 0xff, c->lse_bytes, st));
    return NULL;
}

/* The row's job, the attention kernel: untimed, poison O and LSE, the rung's prepare() if it has
 * one (07g's quantize kernels), flush L2; timed, run(). */
static const char *prepare(void *p, cudaStream_t st)
{
    launch_ctx *c = p;
    const char *err;
    if ((err = poison(c, st))) return err;
    if (c->D->r->prepare && (err = c->D->r->prepare(&c->a, st))) return err;
    return driver_flush_l2(c->D, st);
}

static const char *launch(void *p, cudaStream_t st)
{
    launch_ctx *c = p;
    return c->D->r->run(&c->a, st);
}

/* A rung with prepare(): that alone (untimed, flush L2; timed, prepare()), and the two together
 * (untimed, poison and flush; timed, prepare() then run()), what a user of the step waits for. */
static const char *flush_only(void *p, cudaStream_t st)
{
    const launch_ctx *c = p;
    return driver_flush_l2(c->D, st);
}

static const char *launch_prep(void *p, cudaStream_t st)
{
    launch_ctx *c = p;
    return c->D->r->prepare(&c->a, st);
}

static const char *poison_flush(void *p, cudaStream_t st)
{
    const launch_ctx *c = p;
    const char *err = poison(c, st);
    return err ? err : driver_flush_l2(c->D, st);
}

static const char *launch_both(void *p, cudaStream_t st)
{
    launch_ctx *c = p;
    const char *err = c->D->r->prepare(&c->a, st);
    return err ? err : c->D->r->run(&c->a, st);
}

/* prepare() alone, then with run(), each as the row's job was timed: a first launch (a warm-up),
 * the same warm-ups and the same number of timed launches as the row's (runs), medians. */
static const char *time_prepare(driver *D, launch_ctx *c, int runs, bench_result *prep, bench_result *both)
{
    const bench_job jobs[2] = {{flush_only, launch_prep, c}, {poison_flush, launch_both, c}};
    bench_result *out[2] = {prep, both};
    for (int i = 0; i < 2; i++) {
        double first;
        const char *err = bench_once(&jobs[i], D->st, &first);
        if (!err) err = bench_time(&jobs[i], D->st, D->opt.warmups, D->opt.warm_ms, runs, first, out[i]);
        if (err) return err;
    }
    return NULL;
}

/* --save DIR: O as float16 (bfloat16 widened to float32, which numpy reads; e4m3's O is float16),
 * LSE as float32, the two written as one set (npy.c), all or none. A failure is said once, in one
 * line, and makes the run exit 2 (driver.c); after it, no more saves are tried. */
static void save_outputs(driver *D, const attn_shape *s, const uint16_t *ho, const float *hl)
{
    char err[1200];
    if (D->save_failed) return;
    if (npy_save_outputs(D->opt.save, s, ho, hl, err, sizeof err)) {
        fflush(stdout);
        fprintf(stderr, "error: --save %s\n", err);
        D->save_failed = 1;
    }
}

int run_shape(driver *D, const run_case *rc, uint16_t *const loaded[3], double *first_ms_out)
{
    attn_shape s = rc->shape;
    char status[700], extra[1024];
    report_row row;
    *first_ms_out = 0.0;
    int begun = shape_begin(D, rc, &row, status, sizeof status, extra, sizeof extra);
    if (begun >= 0) return begun;

    /* A paged KV cache: the block table (seeded), and on the device the page pools instead of K and V
     * (common/pages.c); the host keeps K and V contiguous for the reference. */
    page_table pt;
    memset(&pt, 0, sizeof pt);
    if (s.page_size && pages_build(&s, D->opt.seed, &pt)) {
        fprintf(stderr, "error: page size %d: cannot build the block table\n", s.page_size);
        exit(EXIT_USAGE);
    }
    size_t qb = attn_q_elems(&s) * 2, kvb = attn_kv_elems(&s) * 2, lseb = attn_lse_elems(&s) * 4;
    size_t kv_dev = s.page_size ? pages_pool_elems(&s, &pt) * 2 : kvb;   /* bytes of K (or V) on the device */
    size_t btb = s.page_size ? sizeof(int) * (size_t)s.B * pt.max_pages : 0;
    size_t need = 2 * qb + 2 * kv_dev + lseb + (s.seqlens_k ? sizeof(int) * s.B : 0) + btb;
    size_t freeb, totalb;
    CUDA_CHECK(cudaMemGetInfo(&freeb, &totalb));
    if (need + ((size_t)64 << 20) > freeb) {
        pages_free(&pt);
        snprintf(status, sizeof status, "unsupported: Q, K, V, O and LSE need %.2f GiB, %.2f GiB free",
                 gib((double)need), gib((double)freeb));
        if (D->opt.sweep) report_emit(&D->out, &row);   /* a sweep records it; a single shape is a usage error */
        else fprintf(stderr, "error: the shape needs %.2f GiB of device memory for Q, K, V, O and LSE; "
                             "%.2f GiB free\n", gib((double)need), gib((double)freeb));
        return ST_TOO_BIG;
    }
    if (row.workspace_bytes + need + ((size_t)64 << 20) > freeb) {
        pages_free(&pt);
        snprintf(status, sizeof status, "unsupported: workspace needs %.2f GiB, %.2f GiB free after the inputs",
                 gib((double)row.workspace_bytes), gib((double)(freeb - need)));
        report_emit(&D->out, &row);
        return ST_UNSUPPORTED;
    }

    /* inputs */
    uint16_t *hq, *hk, *hv;
    if (loaded) {
        hq = loaded[0]; hk = loaded[1]; hv = loaded[2];
    } else {
        hq = malloc(qb); hk = malloc(kvb); hv = malloc(kvb);
        if (!hq || !hk || !hv) { fprintf(stderr, "host memory: cannot hold the inputs\n"); exit(EXIT_USAGE); }
        make_inputs(&s, D->opt.seed, rc->input_mode, hq, hk, hv);
    }
    /* float8 e4m3 has no infinity: in an FP8 step one makes its block's scale infinite, and rows
     * that the reference keeps come out NaN (07's NOTES.md, "07g on every line of the matrix").
     * Refused with the reason, before any device work. A NaN alone stays where it is, as in 16 bits. */
    if (D->r_fp8 && inputs_infinite(&s, hq, hk, hv)) {
        pages_free(&pt);
        if (!loaded) { free(hq); free(hk); free(hv); }
        snprintf(status, sizeof status, "unsupported: Q, K or V holds an infinity, and float8 e4m3 has none: "
                 "%s's block scale would be infinite", D->r->id);
        report_emit(&D->out, &row);
        return ST_UNSUPPORTED;
    }
    uint16_t *ho = malloc(qb), *ho2 = malloc(qb);
    float *hl = malloc(lseb), *hl2 = malloc(lseb);

    launch_ctx c;
    memset(&c, 0, sizeof c);
    c.D = D;
    c.o_bytes = qb;
    c.lse_bytes = lseb;
    c.a.shape = s;
    c.a.env = D->env;
    c.a.blas = D->blas;
    void *dq, *dk, *dv, *dout, *dws = NULL;
    float *dlse;
    int *dseq = NULL, *dbt = NULL;
    CUDA_CHECK(cudaMalloc(&dq, qb));
    CUDA_CHECK(cudaMalloc(&dk, kv_dev));
    CUDA_CHECK(cudaMalloc(&dv, kv_dev));
    CUDA_CHECK(cudaMalloc(&dout, qb));
    CUDA_CHECK(cudaMalloc((void **)&dlse, lseb));
    if (row.workspace_bytes) CUDA_CHECK(cudaMalloc(&dws, row.workspace_bytes));
    if (s.seqlens_k) {
        CUDA_CHECK(cudaMalloc((void **)&dseq, sizeof(int) * s.B));
        CUDA_CHECK(cudaMemcpy(dseq, s.seqlens_k, sizeof(int) * s.B, cudaMemcpyHostToDevice));
    }
    CUDA_CHECK(cudaMemcpy(dq, hq, qb, cudaMemcpyHostToDevice));
    if (s.page_size) {
        /* not timed: the pools are filled once, as a serving engine's cache is before a decode step */
        uint16_t *pool = malloc(kv_dev);
        if (!pool) { fprintf(stderr, "host memory: cannot hold a page pool\n"); exit(EXIT_USAGE); }
        pages_scatter(&s, &pt, hk, pool);
        CUDA_CHECK(cudaMemcpy(dk, pool, kv_dev, cudaMemcpyHostToDevice));
        pages_scatter(&s, &pt, hv, pool);
        CUDA_CHECK(cudaMemcpy(dv, pool, kv_dev, cudaMemcpyHostToDevice));
        free(pool);
        CUDA_CHECK(cudaMalloc((void **)&dbt, btb));
        CUDA_CHECK(cudaMemcpy(dbt, pt.table, btb, cudaMemcpyHostToDevice));
        c.a.block_table = dbt;
        c.a.max_pages = pt.max_pages;
        c.a.num_pages = pt.num_pages;
    } else {
        CUDA_CHECK(cudaMemcpy(dk, hk, kvb, cudaMemcpyHostToDevice));
        CUDA_CHECK(cudaMemcpy(dv, hv, kvb, cudaMemcpyHostToDevice));
    }
    c.a.q = dq; c.a.k = dk; c.a.v = dv; c.a.o = dout; c.a.lse = dlse;
    c.a.workspace = dws;
    c.a.workspace_bytes = row.workspace_bytes;
    c.a.seqlens_k = dseq;

    bench_job job = {prepare, launch, &c};
    int result = ST_OK;
    double first_ms = 0.0;
    const char *err = bench_once(&job, D->st, &first_ms);
    if (!err) {
        cudaError_t e = cudaStreamSynchronize(D->st);
        if (e != cudaSuccess) err = rung_error(__FILE__, __LINE__, "first launch", cudaGetErrorString(e));
    }
    if (err) {
        report_failure(D, &row, status, sizeof status, err);
        result = ST_FAIL;
        goto done;
    }
    *first_ms_out = first_ms;
    CUDA_CHECK(cudaMemcpy(ho, dout, qb, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(hl, dlse, lseb, cudaMemcpyDeviceToHost));
    if (D->opt.check) {
        check_output(&s, hq, hk, hv, ho, hl, D->opt.check_budget, D->opt.seed, &row.c);
        row.checked = 1;
    }
    /* the profiled range holds every kernel of a launch: with prepare(), its kernels too */
    const bench_job both = {poison_flush, launch_both, &c};
    err = after_first(D, D->opt.profile && D->r->prepare ? &both : &job, first_ms, &row);
    if (!err && D->r->prepare && !D->opt.profile && !D->opt.no_time) {
        err = time_prepare(D, &c, row.t.runs, &row.t_prep, &row.t_total);
        row.timed_prep = !err;
    }
    if (err) {
        report_failure(D, &row, status, sizeof status, err);
        result = ST_FAIL;
        goto done;
    }
    row.timed = !D->opt.no_time && !D->opt.profile;
    /* Same inputs, same bits: a difference between the first and the last launch is a race. */
    CUDA_CHECK(cudaMemcpy(ho2, dout, qb, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(hl2, dlse, lseb, cudaMemcpyDeviceToHost));
    int same = memcmp(ho, ho2, qb) == 0 && memcmp(hl, hl2, lseb) == 0;

    if (row.checked && !row.c.pass) {
        snprintf(status, sizeof status, "FAIL: %s", row.c.why);
        result = ST_FAIL;
    } else if (!same) {
        snprintf(status, sizeof status, "FAIL: output changed between launches on the same inputs (a race?)");
        result = ST_FAIL;
    } else {
        snprintf(status, sizeof status, "ok");
    }
    report_extra(&row, rc, l2_flush_name(D->opt.flush), D->r, &D->env, extra, sizeof extra);
    report_emit(&D->out, &row);

    if (D->opt.save) save_outputs(D, &s, ho, hl);

done:
    cudaFree(dq); cudaFree(dk); cudaFree(dv); cudaFree(dout); cudaFree(dlse);
    if (dws) cudaFree(dws);
    if (dseq) cudaFree(dseq);
    if (dbt) cudaFree(dbt);
    pages_free(&pt);
    if (!loaded) { free(hq); free(hk); free(hv); }
    free(ho); free(ho2); free(hl); free(hl2);
    return result;
}
