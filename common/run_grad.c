/* One shape through a backward rung (rung 08; the binary defines rung_grad_own, attn.h), the
 * backward's run_shape.c:
 *
 *   refuse what the rung cannot run -> fit in memory -> seeded Q, K, V (make_inputs) and dO
 *   (make_grad_input), or --load's q, k, v, do.npy -> the forward's O and LSE by forward_plain,
 *   untimed, once, checked against the reference like any forward (a wrong O would be blamed on the
 *   backward) -> poison dQ, dK, dV with NaN -> run once and check the three gradients against
 *   common/ref_bwd.c -> time (events, L2 flushed before every launch; O, LSE and dO are inputs and
 *   stay) -> same bits as the first run (dQ left out for the variants rung_grad_own.atomic_dq names)
 *   -> report, FLOPs counted as 2.5x the forward's.
 * The rung zeroes its own workspace (the float32 dQ accumulator) inside run(): that is timed, as
 * FlashAttention's backward pays for it too. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "jobs.h"
#include "check_cuda.h"
#include "half.h"

typedef struct grad_ctx {
    driver *D;
    attn_args a;
    attn_grads g;
    size_t q_bytes, kv_bytes;
} grad_ctx;

static const char *grad_prepare(void *p, cudaStream_t st)
{
    grad_ctx *c = p;
    RUNG_CUDA(cudaMemsetAsync(c->g.dq, 0xff, c->q_bytes, st));    /* NaN in f16 and bf16 */
    RUNG_CUDA(cudaMemsetAsync(c->g.dk, 0xff, c->kv_bytes, st));
    RUNG_CUDA(cudaMemsetAsync(c->g.dv, 0xff, c->kv_bytes, st));
    return driver_flush_l2(c->D, st);
}

static const char *grad_launch(void *p, cudaStream_t st)
{
    grad_ctx *c = p;
    return c->D->r->run(&c->a, st);
}

static int dq_is_atomic(const driver *D)
{
    for (int i = 0; D->grad->atomic_dq && D->grad->atomic_dq[i]; i++)
        if (!strcmp(D->grad->atomic_dq[i], D->r->id)) return 1;
    return 0;
}

/* --save DIR: dq.npy, dk.npy, dv.npy (float16, or bfloat16 widened to float32, as o.npy is saved),
 * one set (npy.c), all or none; a failure is said once and makes the run exit 2 (driver.c). */
static void save_grads(driver *D, const attn_shape *s, uint16_t *const g[3])
{
    char err[1200];
    if (D->save_failed) return;
    if (npy_save_grads(D->opt.save, s, g, err, sizeof err)) {
        fflush(stdout);
        fprintf(stderr, "error: --save %s\n", err);
        D->save_failed = 1;
    }
}

int run_grad(driver *D, const run_case *rc, uint16_t *const loaded[4], double *first_ms_out)
{
    attn_shape s = rc->shape;
    char status[700], extra[1024];
    report_row row;
    *first_ms_out = 0.0;
    int begun = shape_begin(D, rc, &row, status, sizeof status, extra, sizeof extra);
    row.backward = 1;
    if (begun >= 0) return begun;

    const size_t qb = attn_q_elems(&s) * 2, kvb = attn_kv_elems(&s) * 2, lseb = attn_lse_elems(&s) * 4;
    /* Q, O, dO, dQ; K, V, dK, dV; LSE; the KV lengths */
    const size_t need = 4 * qb + 4 * kvb + lseb + (s.seqlens_k ? sizeof(int) * s.B : 0);
    size_t freeb, totalb;
    CUDA_CHECK(cudaMemGetInfo(&freeb, &totalb));
    if (need + row.workspace_bytes + ((size_t)64 << 20) > freeb) {
        snprintf(status, sizeof status, "unsupported: Q K V O dO dQ dK dV LSE and the workspace need %.2f GiB; %.2f GiB free",
                 gib((double)(need + row.workspace_bytes)), gib((double)freeb));
        if (D->opt.sweep) report_emit(&D->out, &row);
        else fprintf(stderr, "error: %s\n", status + strlen("unsupported: "));
        return ST_TOO_BIG;
    }

    uint16_t *hq, *hk, *hv, *hg;
    if (loaded) {
        hq = loaded[0]; hk = loaded[1]; hv = loaded[2]; hg = loaded[3];
    } else {
        hq = malloc(qb); hk = malloc(kvb); hv = malloc(kvb); hg = malloc(qb);
        if (!hq || !hk || !hv || !hg) { fprintf(stderr, "host memory: cannot hold the inputs\n"); exit(EXIT_USAGE); }
        make_inputs(&s, D->opt.seed, rc->input_mode, hq, hk, hv);
        make_grad_input(&s, D->opt.seed, hg);
    }
    uint16_t *ho = malloc(qb), *h1[3] = {malloc(qb), malloc(kvb), malloc(kvb)}, *h2[3] = {malloc(qb), malloc(kvb), malloc(kvb)};
    float *hl = malloc(lseb);

    grad_ctx c;
    memset(&c, 0, sizeof c);
    c.D = D;
    c.q_bytes = qb;
    c.kv_bytes = kvb;
    c.a.shape = s;
    c.a.env = D->env;
    c.a.blas = D->blas;
    c.a.grad = &c.g;
    void *dq_, *dk_, *dv_, *dout, *dgo, *dgq, *dgk, *dgv, *dws = NULL;
    float *dlse;
    int *dseq = NULL;
    CUDA_CHECK(cudaMalloc(&dq_, qb));
    CUDA_CHECK(cudaMalloc(&dk_, kvb));
    CUDA_CHECK(cudaMalloc(&dv_, kvb));
    CUDA_CHECK(cudaMalloc(&dout, qb));
    CUDA_CHECK(cudaMalloc((void **)&dlse, lseb));
    CUDA_CHECK(cudaMalloc(&dgo, qb));
    CUDA_CHECK(cudaMalloc(&dgq, qb));
    CUDA_CHECK(cudaMalloc(&dgk, kvb));
    CUDA_CHECK(cudaMalloc(&dgv, kvb));
    if (row.workspace_bytes) CUDA_CHECK(cudaMalloc(&dws, row.workspace_bytes));
    if (s.seqlens_k) {
        CUDA_CHECK(cudaMalloc((void **)&dseq, sizeof(int) * s.B));
        CUDA_CHECK(cudaMemcpy(dseq, s.seqlens_k, sizeof(int) * s.B, cudaMemcpyHostToDevice));
    }
    CUDA_CHECK(cudaMemcpy(dq_, hq, qb, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dk_, hk, kvb, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dv_, hv, kvb, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dgo, hg, qb, cudaMemcpyHostToDevice));
    c.a.q = dq_; c.a.k = dk_; c.a.v = dv_; c.a.o = dout; c.a.lse = dlse;
    c.a.seqlens_k = dseq;
    c.a.workspace = dws;
    c.a.workspace_bytes = row.workspace_bytes;
    c.g.dout = dgo; c.g.dq = dgq; c.g.dk = dgk; c.g.dv = dgv;

    int result = ST_OK;
    const char *err;
    double first_ms = 0.0;
    /* the forward, untimed; its O and LSE are checked as a forward rung's would be */
    CUDA_CHECK(cudaMemsetAsync(dout, 0xff, qb, D->st));
    CUDA_CHECK(cudaMemsetAsync(dlse, 0xff, lseb, D->st));
    err = forward_plain(&s, dq_, dk_, dv_, dout, dlse, dseq, D->st);
    if (!err) {
        cudaError_t e = cudaStreamSynchronize(D->st);
        if (e != cudaSuccess) err = rung_error(__FILE__, __LINE__, "the harness's forward", cudaGetErrorString(e));
    }
    if (err) goto failed;
    check_result fwd;
    memset(&fwd, 0, sizeof fwd);
    if (D->opt.check) {
        CUDA_CHECK(cudaMemcpy(ho, dout, qb, cudaMemcpyDeviceToHost));
        CUDA_CHECK(cudaMemcpy(hl, dlse, lseb, cudaMemcpyDeviceToHost));
        check_output(&s, hq, hk, hv, ho, hl, D->opt.check_budget, D->opt.seed, &fwd);
        if (!fwd.pass) {
            snprintf(status, sizeof status, "FAIL: the harness's forward (common/forward_plain.cu), not the rung: %s", fwd.why);
            report_emit(&D->out, &row);
            result = ST_FAIL;
            goto done;
        }
    }

    bench_job job = {grad_prepare, grad_launch, &c};
    err = bench_once(&job, D->st, &first_ms);
    if (!err) {
        cudaError_t e = cudaStreamSynchronize(D->st);
        if (e != cudaSuccess) err = rung_error(__FILE__, __LINE__, "first launch", cudaGetErrorString(e));
    }
    if (err) goto failed;
    *first_ms_out = first_ms;
    void *dev[3] = {dgq, dgk, dgv};
    size_t bytes[3] = {qb, kvb, kvb};
    for (int w = 0; w < 3; w++) CUDA_CHECK(cudaMemcpy(h1[w], dev[w], bytes[w], cudaMemcpyDeviceToHost));
    double rel[3] = {0, 0, 0};
    if (D->opt.check) {
        check_grads(&s, hq, hk, hv, hg, h1[0], h1[1], h1[2], D->opt.check_budget, D->opt.seed, &row.c, rel);
        row.c.lse_err = fwd.lse_err;    /* the LSE the backward read: the harness forward's */
        row.checked = 1;
    }
    err = after_first(D, &job, first_ms, &row);
    if (err) goto failed;
    row.timed = !D->opt.no_time && !D->opt.profile;
    for (int w = 0; w < 3; w++) CUDA_CHECK(cudaMemcpy(h2[w], dev[w], bytes[w], cudaMemcpyDeviceToHost));
    const int atomic = dq_is_atomic(D);
    const int same = (atomic || !memcmp(h1[0], h2[0], qb)) && !memcmp(h1[1], h2[1], kvb) && !memcmp(h1[2], h2[2], kvb);

    if (row.checked && !row.c.pass) {
        snprintf(status, sizeof status, "FAIL: %s", row.c.why);
        result = ST_FAIL;
    } else if (!same) {
        snprintf(status, sizeof status, "FAIL: %s changed between launches on the same inputs (a race?)",
                 atomic ? "dK or dV" : "a gradient");
        result = ST_FAIL;
    } else {
        snprintf(status, sizeof status, "ok");
    }
    report_extra(&row, rc, l2_flush_name(D->opt.flush), D->r, &D->env, extra, sizeof extra);
    {
        size_t k = strlen(extra);
        if (row.checked)
            snprintf(extra + k, sizeof extra - k, "pass=backward;rel_dq=%.3e;rel_dk=%.3e;rel_dv=%.3e;fwd=forward_plain;%s",
                     rel[0], rel[1], rel[2], atomic ? "same_bits=dk,dv;" : "same_bits=dq,dk,dv;");
        else
            snprintf(extra + k, sizeof extra - k, "pass=backward;fwd=forward_plain;");
    }
    report_emit(&D->out, &row);
    if (D->opt.save) save_grads(D, &s, h1);
    goto done;

failed:
    report_failure(D, &row, status, sizeof status, err);
    result = ST_FAIL;
done:
    cudaFree(dq_); cudaFree(dk_); cudaFree(dv_); cudaFree(dout); cudaFree(dlse);
    cudaFree(dgo); cudaFree(dgq); cudaFree(dgk); cudaFree(dgv);
    if (dws) cudaFree(dws);
    if (dseq) cudaFree(dseq);
    if (!loaded) { free(hq); free(hk); free(hv); free(hg); }
    free(ho); free(hl);
    for (int w = 0; w < 3; w++) { free(h1[w]); free(h2[w]); }
    return result;
}
