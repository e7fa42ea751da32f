/* The single main() that every rung links.
 *
 *   parse -> pick the variant -> find the device -> for each shape (one, or a sweep file):
 *     refuse what the rung cannot run -> fit in memory -> seeded inputs -> poison O and LSE with NaN
 *     -> run once and check against the float64 reference -> time (events, L2 flushed before every
 *     launch) -> check that the last timed run produced the same bits as the first -> report.
 *
 * Exit codes: 0 ok, 1 a check failed, 2 bad arguments (or a shape too big for the device),
 * 3 the rung refused the shape (unsupported), 4 no CUDA device. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ctype.h>
#include "harness.h"
#include "check_cuda.h"
#include "half.h"

enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2, EXIT_UNSUPPORTED = 3, EXIT_NO_DEVICE = 4 };
enum { ST_OK, ST_FAIL, ST_UNSUPPORTED, ST_SKIPPED, ST_TOO_BIG };

typedef struct driver {
    cli_opts opt;
    const rung *r;
    device_info dev;
    attn_env env;
    int have_device;
    cudaStream_t st;
    cublasHandle_t blas;
    void *flush;              /* written before every timed launch: evicts L2 */
    size_t flush_bytes;
    int header_done;
} driver;

/* ------------------------------------------------------------------ device */

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

static int device_open(driver *D)
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

/* Without a device a rung can still say which shapes it refuses; answer as an H100 would. */
static void nominal_env(attn_env *e)
{
    e->sm_count = 132;
    e->cc_major = 9;
    e->cc_minor = 0;
    e->smem_per_block_optin = 227 * 1024;
    e->smem_per_sm = 228 * 1024;
}

static void device_start(driver *D)
{
    CUDA_CHECK(cudaStreamCreateWithFlags(&D->st, cudaStreamNonBlocking));
    CUBLAS_CHECK(cublasCreate(&D->blas));
    D->flush_bytes = 2 * (D->dev.l2_bytes ? D->dev.l2_bytes : ((size_t)64 << 20));
    CUDA_CHECK(cudaMalloc(&D->flush, D->flush_bytes));
}

/* ------------------------------------------------------------------ one shape */

typedef struct launch_ctx {
    driver *D;
    attn_args a;
    size_t o_bytes, lse_bytes;
} launch_ctx;

static const char *prepare(void *p, cudaStream_t st)
{
    launch_ctx *c = p;
    RUNG_CUDA(cudaMemsetAsync(c->a.o, 0xff, c->o_bytes, st));        /* NaN in f16, bf16 and f32 */
    RUNG_CUDA(cudaMemsetAsync(c->a.lse, 0xff, c->lse_bytes, st));
    return l2_flush(c->D->flush, c->D->flush_bytes, st);
}

static const char *launch(void *p, cudaStream_t st)
{
    launch_ctx *c = p;
    return c->D->r->run(&c->a, st);
}

static double gib(double bytes) { return bytes / (1024.0 * 1024.0 * 1024.0); }

static void emit(driver *D, report_row *row)
{
    if (!D->opt.quiet) {
        if (!D->header_done) report_table_header(stdout);
        D->header_done = 1;
        report_table_row(stdout, row);
    }
    if (D->opt.csv && D->have_device) report_csv_row(D->opt.csv, &D->dev, row);
}

static void extra_text(driver *D, const attn_shape *s, const report_row *row, char *out, size_t n)
{
    size_t k = 0;
    out[0] = 0;
    if (row->checked)
        k += snprintf(out + k, n - k, "checked=%s%ld/%ld;", row->c.sampled ? "sample:" : "all:",
                      row->c.rows_checked, row->c.rows_total);
    if (row->timed)
        k += snprintf(out + k, n - k, "runs=%d;warmups=%d;flush=%s;", row->t.runs, row->t.warmups,
                      l2_flush_name());
    if (D->opt.input_mode == INPUT_OUTLIER && k < n) k += snprintf(out + k, n - k, "inputs=outlier;");
    if (D->r->describe && k < n) {
        D->r->describe(s, &D->env, out + k, n - k);
        k = strlen(out);
        if (k && k < n - 1 && out[k - 1] != ';') out[k++] = ';', out[k] = 0;
    }
    if (s->seqlens_k && k < n) {
        long sum = 0;
        int mx = 0;
        for (int b = 0; b < s->B; b++) { sum += s->seqlens_k[b]; if (s->seqlens_k[b] > mx) mx = s->seqlens_k[b]; }
        k += snprintf(out + k, n - k, "seqlens_sum=%ld;seqlens_max=%d;", sum, mx);
    }
}

/* --read-floor: one kernel that reads this shape's K and V and nothing else, timed exactly as a
 * rung is (same flush, same events). Its GB/s column counts the shape's fewest bytes, as the rungs'
 * does, so a rung's time over this one is how far it is from the floor for those bytes. */
typedef struct floor_ctx { driver *D; const void *k, *v; size_t kv_bytes; } floor_ctx;

static const char *floor_prepare(void *p, cudaStream_t st)
{
    floor_ctx *c = p;
    return l2_flush(c->D->flush, c->D->flush_bytes, st);
}

static const char *floor_launch(void *p, cudaStream_t st)
{
    floor_ctx *c = p;
    return read_floor_launch(c->k, c->kv_bytes, c->v, c->kv_bytes, st);
}

static int run_floor(driver *D, const attn_shape *s, double *first_ms_out)
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
        emit(D, &row);
        return ST_UNSUPPORTED;
    }
    floor_ctx c = {D, NULL, NULL, attn_kv_elems(s) * attn_elem_bytes(s->dtype)};
    size_t freeb, totalb;
    CUDA_CHECK(cudaMemGetInfo(&freeb, &totalb));
    if (2 * c.kv_bytes + ((size_t)64 << 20) > freeb) {
        snprintf(status, sizeof status, "unsupported: K and V need %.2f GiB", gib(2.0 * c.kv_bytes));
        emit(D, &row);
        return ST_TOO_BIG;
    }
    CUDA_CHECK(cudaMalloc((void **)&c.k, c.kv_bytes));
    CUDA_CHECK(cudaMalloc((void **)&c.v, c.kv_bytes));
    CUDA_CHECK(cudaMemset((void *)c.k, 0x11, c.kv_bytes));
    CUDA_CHECK(cudaMemset((void *)c.v, 0x22, c.kv_bytes));
    bench_job job = {floor_prepare, floor_launch, &c};
    double first = 0.0;
    const char *err = bench_once(&job, D->st, &first);
    if (!err) err = bench_time(&job, D->st, D->opt.warmups, D->opt.runs, first, &row.t);
    if (err) {
        snprintf(status, sizeof status, "FAIL: %s", err);
    } else {
        snprintf(status, sizeof status, "ok");
        row.timed = 1;
        snprintf(extra, sizeof extra, "runs=%d;warmups=%d;flush=%s;bytes_read=%zu;", row.t.runs, row.t.warmups,
                 l2_flush_name(), 2 * c.kv_bytes);
    }
    emit(D, &row);
    cudaFree((void *)c.k);
    cudaFree((void *)c.v);
    *first_ms_out = first;
    return err ? ST_FAIL : ST_OK;
}

/* Runs one shape; returns ST_*. `loaded` holds user inputs (--load) or NULL for seeded ones. */
static int run_shape(driver *D, const attn_shape *s_in, int input_mode, uint16_t *const loaded[3],
                     double *first_ms_out)
{
    attn_shape s = *s_in;
    char why[512] = "", status[700], extra[1024];
    report_row row;
    memset(&row, 0, sizeof row);
    row.rung = D->r->id;
    row.shape = s;
    row.status = status;
    row.extra = extra;
    extra[0] = 0;
    *first_ms_out = 0.0;
    D->opt.input_mode = input_mode;
    if (D->opt.read_floor) return D->have_device ? run_floor(D, &s, first_ms_out) : ST_OK;

    if (D->r->unsupported(&s, &D->env, why, sizeof why)) {
        snprintf(status, sizeof status, "unsupported: %s", why);
        emit(D, &row);
        return ST_UNSUPPORTED;
    }
    row.workspace_bytes = D->r->workspace_bytes(&s, &D->env);
    if (!D->have_device) return ST_OK;

    size_t qb = attn_q_elems(&s) * 2, kvb = attn_kv_elems(&s) * 2, lseb = attn_lse_elems(&s) * 4;
    size_t need = 2 * qb + 2 * kvb + lseb + (s.seqlens_k ? sizeof(int) * s.B : 0);
    size_t freeb, totalb;
    CUDA_CHECK(cudaMemGetInfo(&freeb, &totalb));
    if (need + ((size_t)64 << 20) > freeb) {
        snprintf(status, sizeof status, "unsupported: Q, K, V, O and LSE need %.2f GiB, %.2f GiB free",
                 gib((double)need), gib((double)freeb));
        if (D->opt.sweep) emit(D, &row);   /* a sweep records it; a single shape is a usage error */
        else fprintf(stderr, "error: the shape needs %.2f GiB of device memory for Q, K, V, O and LSE; "
                             "%.2f GiB free\n", gib((double)need), gib((double)freeb));
        return ST_TOO_BIG;
    }
    if (row.workspace_bytes + need + ((size_t)64 << 20) > freeb) {
        snprintf(status, sizeof status, "unsupported: workspace needs %.2f GiB, %.2f GiB free after the inputs",
                 gib((double)row.workspace_bytes), gib((double)(freeb - need)));
        emit(D, &row);
        return ST_UNSUPPORTED;
    }

    /* inputs */
    uint16_t *hq, *hk, *hv;
    if (loaded) {
        hq = loaded[0]; hk = loaded[1]; hv = loaded[2];
    } else {
        hq = malloc(qb); hk = malloc(kvb); hv = malloc(kvb);
        if (!hq || !hk || !hv) { fprintf(stderr, "host memory: cannot hold the inputs\n"); exit(EXIT_USAGE); }
        make_inputs(&s, D->opt.seed, input_mode, hq, hk, hv);
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
    int *dseq = NULL;
    CUDA_CHECK(cudaMalloc(&dq, qb));
    CUDA_CHECK(cudaMalloc(&dk, kvb));
    CUDA_CHECK(cudaMalloc(&dv, kvb));
    CUDA_CHECK(cudaMalloc(&dout, qb));
    CUDA_CHECK(cudaMalloc((void **)&dlse, lseb));
    if (row.workspace_bytes) CUDA_CHECK(cudaMalloc(&dws, row.workspace_bytes));
    if (s.seqlens_k) {
        CUDA_CHECK(cudaMalloc((void **)&dseq, sizeof(int) * s.B));
        CUDA_CHECK(cudaMemcpy(dseq, s.seqlens_k, sizeof(int) * s.B, cudaMemcpyHostToDevice));
    }
    CUDA_CHECK(cudaMemcpy(dq, hq, qb, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dk, hk, kvb, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dv, hv, kvb, cudaMemcpyHostToDevice));
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
        snprintf(status, sizeof status, "FAIL: %s", err);
        result = ST_FAIL;
        /* a sticky error (illegal address) leaves the context unusable: report and stop */
        emit(D, &row);
        if (cudaDeviceSynchronize() != cudaSuccess) exit(EXIT_FAIL);
        goto done;
    }
    *first_ms_out = first_ms;
    CUDA_CHECK(cudaMemcpy(ho, dout, qb, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(hl, dlse, lseb, cudaMemcpyDeviceToHost));
    if (D->opt.check) {
        check_output(&s, hq, hk, hv, ho, hl, D->opt.check_budget, D->opt.seed, &row.c);
        row.checked = 1;
    }
    if (D->opt.no_time) {
        double again;
        err = bench_once(&job, D->st, &again);
    } else {
        err = bench_time(&job, D->st, D->opt.warmups, D->opt.runs, first_ms, &row.t);
    }
    if (err) {
        snprintf(status, sizeof status, "FAIL: %s", err);
        result = ST_FAIL;
        emit(D, &row);
        if (cudaDeviceSynchronize() != cudaSuccess) exit(EXIT_FAIL);
        goto done;
    }
    row.timed = !D->opt.no_time;
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
    extra_text(D, &s, &row, extra, sizeof extra);
    emit(D, &row);

    if (D->opt.save) {
        char path[1024];
        int od[4] = {s.B, s.Hq, s.N, s.d}, ld[3] = {s.B, s.Hq, s.N};
        snprintf(path, sizeof path, "%s/o.npy", D->opt.save);
        int bad = 0;
        if (s.dtype == ATTN_F16) {
            bad |= npy_save_f16(path, ho, od, 4);
        } else {
            float *of = malloc(sizeof(float) * attn_q_elems(&s));
            for (size_t i = 0; i < attn_q_elems(&s); i++) of[i] = elem_to_f32(s.dtype, ho[i]);
            bad |= npy_save_f32(path, of, od, 4);
            free(of);
        }
        snprintf(path, sizeof path, "%s/lse.npy", D->opt.save);
        bad |= npy_save_f32(path, hl, ld, 3);
        if (bad) fprintf(stderr, "--save %s: could not write o.npy / lse.npy\n", D->opt.save);
    }

done:
    cudaFree(dq); cudaFree(dk); cudaFree(dv); cudaFree(dout); cudaFree(dlse);
    if (dws) cudaFree(dws);
    if (dseq) cudaFree(dseq);
    if (!loaded) { free(hq); free(hk); free(hv); }
    free(ho); free(ho2); free(hl); free(hl2);
    return result;
}

/* ------------------------------------------------------------------ sweeps */

typedef struct sweep_item {
    attn_shape s;
    int input_mode;
    int *seqlens;
    double flops;
    int order;
} sweep_item;

static int by_flops(const void *a, const void *b)
{
    const sweep_item *x = a, *y = b;
    if (x->flops != y->flops) return x->flops < y->flops ? -1 : 1;
    return x->order - y->order;
}

/* Reads and validates every line of the sweep file (no GPU needed); sorted smallest first, so that
 * the too-slow rule of run_sweep can stop before the largest shapes. NULL on error (printed). */
static sweep_item *sweep_read(driver *D, int *count)
{
    FILE *f = fopen(D->opt.sweep, "r");
    if (!f) {
        fprintf(stderr, "error: --sweep %s: cannot open\n", D->opt.sweep);
        return NULL;
    }
    sweep_item *items = NULL;
    int n = 0, cap = 0, lineno = 0;
    static char line[SWEEP_LINE_MAX + 1];
    char err[512];
    while (fgets(line, sizeof line, f)) {
        lineno++;
        if (!strchr(line, '\n') && !feof(f)) {
            fprintf(stderr, "error: %s:%d: line longer than %d characters\n", D->opt.sweep, lineno, SWEEP_LINE_MAX - 1);
            fclose(f);
            free(items);
            return NULL;
        }
        sweep_item it;
        memset(&it, 0, sizeof it);
        int k = sweep_line(line, &D->opt, &it.s, &it.input_mode, &it.seqlens, err, sizeof err);
        if (k < 0) {
            fprintf(stderr, "error: %s:%d: %s\n", D->opt.sweep, lineno, err);
            fclose(f);
            free(items);
            return NULL;
        }
        if (k == 0) continue;
        it.flops = attn_flops(&it.s);
        it.order = n;
        if (n == cap) items = realloc(items, sizeof(sweep_item) * (cap = cap ? 2 * cap : 64));
        items[n++] = it;
    }
    fclose(f);
    qsort(items, n, sizeof(sweep_item), by_flops);
    *count = n;
    return items;
}

static int run_sweep(driver *D)
{
    int n;
    sweep_item *items = sweep_read(D, &n);
    if (!items) return EXIT_USAGE;

    int failed = 0;
    double slow_flops = INFINITY, slow_s = 0.0;
    char slow_at[128] = "";
    for (int i = 0; i < n; i++) {
        attn_shape *s = &items[i].s;
        if (!D->opt.quiet)
            fprintf(stderr, "[%s %d/%d] B=%d Hq=%d Hkv=%d N=%d M=%d d=%d causal=%d\n", D->r->id, i + 1, n,
                    s->B, s->Hq, s->Hkv, s->N, s->M, s->d, s->causal);
        if (items[i].flops >= slow_flops) {
            char status[300];
            report_row row;
            memset(&row, 0, sizeof row);
            row.rung = D->r->id;
            row.shape = *s;
            snprintf(status, sizeof status, "skipped: too slow (one run took %.1f s at %s)", slow_s, slow_at);
            row.status = status;
            row.extra = "";
            emit(D, &row);
            continue;
        }
        double first_ms;
        int st = run_shape(D, s, items[i].input_mode, NULL, &first_ms);
        if (st == ST_FAIL) failed++;
        if (first_ms > D->opt.too_slow_s * 1000.0 && items[i].flops < slow_flops) {
            slow_flops = items[i].flops;
            slow_s = first_ms * 1e-3;
            snprintf(slow_at, sizeof slow_at, "B=%d N=%d M=%d d=%d causal=%d", s->B, s->N, s->M, s->d, s->causal);
        }
        free(items[i].seqlens);
    }
    free(items);
    return failed ? EXIT_FAIL : EXIT_OK;
}

/* ------------------------------------------------------------------ ceilings */

static int run_ceilings(driver *D)
{
    double gbps, tflops, ms_copy, ms_gemm;
    const char *err = measure_copy_gbps(D->st, &gbps, &ms_copy);
    if (err) { fprintf(stderr, "copy ceiling: %s\n", err); return EXIT_FAIL; }
    printf("ceiling: device-to-device copy of 1 GiB: %.0f GB/s (read + written; %.3f ms)\n", gbps, ms_copy);
    err = measure_gemm_tflops(D->blas, D->st, 8192, &tflops, &ms_gemm);
    if (err) { fprintf(stderr, "GEMM ceiling: %s\n", err); return EXIT_FAIL; }
    printf("ceiling: cuBLAS float16 GEMM 8192^3, float32 accumulate: %.1f TFLOP/s (%.3f ms)\n", tflops, ms_gemm);
    if (D->opt.csv) {
        if (report_csv_ceiling(D->opt.csv, &D->dev, "ceiling-copy", ms_copy, 0, gbps, "bytes=2147483648") ||
            report_csv_ceiling(D->opt.csv, &D->dev, "ceiling-gemm", ms_gemm, tflops, 0, "m=n=k=8192"))
            return EXIT_USAGE;
    }
    return EXIT_OK;
}

/* ------------------------------------------------------------------ main */

static const rung *pick_variant(const char *id)
{
    if (!id) return rung_variants[0];
    for (int i = 0; rung_variants[i]; i++)
        if (!strcmp(rung_variants[i]->id, id)) return rung_variants[i];
    return NULL;
}

static int load_inputs(driver *D, uint16_t *in[3])
{
    char path[1024], err[512];
    int dq[4], dk[4], dv[4];
    const char *names[3] = {"q.npy", "k.npy", "v.npy"};
    int *dims[3] = {dq, dk, dv};
    for (int t = 0; t < 3; t++) {
        snprintf(path, sizeof path, "%s/%s", D->opt.load, names[t]);
        if (npy_load4(path, D->opt.shape.dtype, &in[t], dims[t], err, sizeof err)) {
            fprintf(stderr, "--load: %s\n", err);
            return -1;
        }
    }
    if (dq[0] != dk[0] || dq[3] != dk[3] || memcmp(dk, dv, sizeof dk)) {
        fprintf(stderr, "--load: shapes disagree: q [%d,%d,%d,%d], k [%d,%d,%d,%d], v [%d,%d,%d,%d]; "
                "need q [B,Hq,N,d], k and v [B,Hkv,M,d]\n", dq[0], dq[1], dq[2], dq[3],
                dk[0], dk[1], dk[2], dk[3], dv[0], dv[1], dv[2], dv[3]);
        return -1;
    }
    attn_shape *s = &D->opt.shape;
    s->B = dq[0]; s->Hq = dq[1]; s->N = dq[2]; s->d = dq[3]; s->Hkv = dk[1]; s->M = dk[2];
    if (!D->opt.have_scale) s->scale = 1.0f / sqrtf((float)s->d);
    if (D->opt.seqlens || D->opt.seqlen_dist[0]) {
        fprintf(stderr, "--load: per-request lengths are not read from .npy files; drop --seqlens/--seqlen-dist\n");
        return -1;
    }
    if (shape_validate(s, err, sizeof err)) {
        fprintf(stderr, "--load: %s\n", err);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    driver D;
    memset(&D, 0, sizeof D);
    cli_defaults(&D.opt);
    char err[1024];
    int rc = cli_parse(argc, argv, &D.opt, err, sizeof err);
    if (rc > 0) { printf("%s\n", err); return EXIT_OK; }
    if (rc < 0) { fprintf(stderr, "error: %s\n", err); return EXIT_USAGE; }

    if (D.opt.list) {
        for (int i = 0; rung_variants[i]; i++)
            printf("%s\t%s\t%s\n", rung_variants[i]->id, rung_variants[i]->name, rung_variants[i]->summary);
        return EXIT_OK;
    }
    D.r = pick_variant(D.opt.variant);
    if (!D.r) {
        fprintf(stderr, "error: --variant %s: this rung has", D.opt.variant);
        for (int i = 0; rung_variants[i]; i++) fprintf(stderr, " %s", rung_variants[i]->id);
        fprintf(stderr, "\n");
        return EXIT_USAGE;
    }
    D.have_device = device_open(&D);
    if (D.opt.probe) {
        if (D.have_device) printf("%s %d %s\n", D.dev.short_name, D.dev.sm_count, D.dev.name);
        else printf("none\n");
        return EXIT_OK;
    }
    if (!D.have_device) nominal_env(&D.env);
    D.env.planner = D.opt.planner;

    uint16_t *loaded[3] = {NULL, NULL, NULL};
    if (D.opt.load && load_inputs(&D, loaded)) return EXIT_USAGE;

    if (!D.have_device) {
        /* Still answer what needs no GPU: does the rung refuse this shape? */
        if (D.opt.sweep) {
            int n;
            sweep_item *items = sweep_read(&D, &n);
            if (!items) return EXIT_USAGE;
            free(items);
        } else if (!D.opt.ceilings) {
            char why[512];
            if (D.r->unsupported(&D.opt.shape, &D.env, why, sizeof why)) {
                printf("unsupported: %s\n", why);
                return EXIT_UNSUPPORTED;
            }
        }
        fprintf(stderr, "no CUDA device found: this machine can build and run the CPU tests, not the rungs\n");
        return EXIT_NO_DEVICE;
    }
    device_start(&D);

    if (D.opt.ceilings) return run_ceilings(&D);
    if (D.opt.sweep) return run_sweep(&D);

    double first_ms;
    int st = run_shape(&D, &D.opt.shape, D.opt.input_mode, D.opt.load ? loaded : NULL, &first_ms);
    switch (st) {
    case ST_OK: return EXIT_OK;
    case ST_UNSUPPORTED: return EXIT_UNSUPPORTED;
    case ST_TOO_BIG: return EXIT_USAGE;
    default: return EXIT_FAIL;
    }
}
