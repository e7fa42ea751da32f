/* Inside the driver: the state its jobs share, and the steps every job takes with it
 * (driver_state.c). main() (driver.c) fills the state, then hands it to one job (jobs.h); a job
 * calls down into this unit and the harness, never back into main() or another job's file
 * (tests/common_graph.sh checks it). Not part of the rung interface: a rung sees attn.h only. */
#ifndef DRIVER_STATE_H
#define DRIVER_STATE_H

#include <stdint.h>
#include "harness.h"

/* Exit codes: 0 ok, 1 a check failed, 2 bad arguments (or a shape too big for the device),
 * 3 the rung refused the shape (unsupported), 4 no CUDA device. */
enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2, EXIT_UNSUPPORTED = 3, EXIT_NO_DEVICE = 4 };
/* What one shape came to; main() and the sweep turn it into an exit code. */
enum { ST_OK, ST_FAIL, ST_UNSUPPORTED, ST_SKIPPED, ST_TOO_BIG };

typedef struct driver {
    cli_opts opt;
    const rung *r;
    const rung_grad *grad;    /* the binary's rung_grad_own (a backward rung, 08), or NULL */
    int r_fp8;                /* r is one of the rung's FP8 steps (rung_fp8_variants[], attn.h) */
    device_info dev;
    attn_env env;
    int have_device;
    cudaStream_t st;
    cublasHandle_t blas;
    void *flush;              /* written before every timed launch: evicts L2 */
    size_t flush_bytes;
    report_out out;           /* where every row goes (report_emit): the table, the CSV */
    int save_failed;          /* a --save could not be written (said once): the run exits 2 */
} driver;

static inline double gib(double bytes) { return bytes / (1024.0 * 1024.0 * 1024.0); }

/* The L2 flush before a timed launch, with the driver's buffer and --flush mode; NULL or an error. */
const char *driver_flush_l2(const driver *D, cudaStream_t st);
/* The start of one shape's job (run_shape.c, run_grad.c): the row (rung, shape, status and extra
 * buffers, the line's label), the rung's refusal (reported: ST_UNSUPPORTED) and its workspace;
 * ST_OK with no device (nothing to run), else -1: go on. */
int shape_begin(driver *D, const run_case *rc, report_row *row, char *status, size_t status_len, char *extra,
                size_t extra_len);
/* A launch failed: the row reported FAIL with err; exits if the context is lost. */
void report_failure(driver *D, report_row *row, char *status, size_t n, const char *err);
/* What follows the first, checked launch: --profile's launch under the profiler, --no-time's second
 * launch, or the timed runs into row->t. NULL or an error. */
const char *after_first(driver *D, const bench_job *job, double first_ms, report_row *row);

#endif
