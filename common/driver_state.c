/* The steps every job of the driver takes with its state (driver_state.h): the L2 flush before a
 * timed launch, the start of a shape's job (the rung's refusal, its workspace), what follows the
 * first launch, and a failed launch's row. run_shape.c and run_grad.c share them; read_floor.c
 * the flush. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "driver_state.h"

const char *driver_flush_l2(const driver *D, cudaStream_t st)
{
    return l2_flush(D->flush, D->flush_bytes, D->opt.flush, st);
}

int shape_begin(driver *D, const run_case *rc, report_row *row, char *status, size_t status_len, char *extra,
                size_t extra_len)
{
    char why[512] = "";
    memset(row, 0, sizeof *row);
    row->rung = D->r->id;
    row->shape = rc->shape;
    row->status = status;
    row->extra = extra;
    report_label(rc, extra, extra_len);   /* a row that does not run to the end still names its line */
    if (attn_unsupported(D->r, D->r_fp8, &rc->shape, &D->env, why, sizeof why)) {
        snprintf(status, status_len, "unsupported: %s", why);
        report_emit(&D->out, row);
        return ST_UNSUPPORTED;
    }
    row->workspace_bytes = D->r->workspace_bytes(&rc->shape, &D->env);
    return D->have_device ? -1 : ST_OK;
}

/* A sticky error (illegal address) leaves the context unusable, so then stop. */
void report_failure(driver *D, report_row *row, char *status, size_t n, const char *err)
{
    snprintf(status, n, "FAIL: %s", err);
    report_emit(&D->out, row);
    if (cudaDeviceSynchronize() != cudaSuccess) exit(EXIT_FAIL);
}

const char *after_first(driver *D, const bench_job *job, double first_ms, report_row *row)
{
    if (D->opt.profile) return bench_profiled(job, D->st);
    if (D->opt.no_time) {
        double again;
        return bench_once(job, D->st, &again);
    }
    return bench_time(job, D->st, D->opt.warmups, D->opt.warm_ms, D->opt.runs, first_ms, &row->t);
}
