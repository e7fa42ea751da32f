/* Inside the driver: the state its files share. main() (driver.c) parses, picks the variant, finds
 * the device, then hands over to one of the jobs below; each job has a file of its own. Not part
 * of the rung interface: a rung sees attn.h only. */
#ifndef DRIVER_H
#define DRIVER_H

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
    int header_done;
} driver;

static inline double gib(double bytes) { return bytes / (1024.0 * 1024.0 * 1024.0); }


/* device.c: 1 and D->dev, D->env filled if there is a CUDA device, else 0. */
int device_open(driver *D);
/* Without a device a rung can still say which shapes it refuses; answer as an H100 would. */
void nominal_env(attn_env *e);
/* The stream, the cuBLAS handle and the L2 flush buffer. */
void device_start(driver *D);

/* run_shape.c: one shape, checked, timed and reported; returns ST_*. `loaded` holds user inputs
 * (--load) or NULL for seeded ones. first_ms_out: the first launch's time (0 if none ran). */
int run_shape(driver *D, const run_case *c, uint16_t *const loaded[3], double *first_ms_out);
/* run_shape.c: the start of one shape's job (run_shape, run_grad): the row (rung, shape, status and
 * extra buffers, the line's label), the rung's refusal (reported: ST_UNSUPPORTED) and its workspace;
 * ST_OK with no device (nothing to run), else -1: go on. */
int shape_begin(driver *D, const run_case *rc, report_row *row, char *status, size_t status_len, char *extra,
                size_t extra_len);
/* run_shape.c: a launch failed: the row reported FAIL with err; exits if the context is lost. */
void report_failure(driver *D, report_row *row, char *status, size_t n, const char *err);
/* run_shape.c: what follows the first, checked launch: --profile's launch under the profiler,
 * --no-time's second launch, or the timed runs into row->t. NULL or an error. */
const char *after_first(driver *D, const bench_job *job, double first_ms, report_row *row);
/* run_shape.c: every row goes out here, to the table (unless --quiet) and the CSV (--csv). */
void emit(driver *D, report_row *row);

/* run_grad.c: one shape through a backward rung (D->grad set): the forward's O and LSE made
 * untimed, dQ, dK, dV checked against common/ref_bwd.c, timed, reported; ST_*. `loaded` holds
 * --load's q, k, v, dO or NULL. */
int run_grad(driver *D, const run_case *c, uint16_t *const loaded[4], double *first_ms_out);

/* read_floor.c: --read-floor, the floor for this shape's K and V instead of the rung; ST_*. */
int run_floor(driver *D, const attn_shape *s, double *first_ms_out);

/* sweep.c: one shape, through the rung, or with --read-floor the floor of its K and V; ST_*
 * (main's single shape, and each of a sweep's). */
int run_one(driver *D, const run_case *c, uint16_t *const loaded[4], double *first_ms_out);
/* sweep.c: --sweep. sweep_check reads and validates the file alone (no GPU): 0, or -1 (printed). */
int sweep_check(driver *D);
int run_sweep(driver *D);      /* EXIT_* */

/* ceilings.c: --ceilings, the copy and GEMM ceilings; EXIT_*. */
int run_ceilings(driver *D);

#endif
