/* What main() (driver.c) hands the driver's state (driver_state.h) to: the device, then one job,
 * each in a file of its own. A job calls down (driver_state.c, the harness), never back into
 * main(); sweep.c alone runs the others, one shape at a time. Not part of the rung interface. */
#ifndef JOBS_H
#define JOBS_H

#include <stdint.h>
#include "driver_state.h"

/* device.c: 1 and D->dev, D->env filled if there is a CUDA device, else 0 (then nominal_env,
 * device_env.h). */
int device_open(driver *D);
/* The stream, the cuBLAS handle and the L2 flush buffer. */
void device_start(driver *D);

/* run_shape.c: one shape, checked, timed and reported; returns ST_*. `loaded` holds user inputs
 * (--load) or NULL for seeded ones. first_ms_out: the first launch's time (0 if none ran). */
int run_shape(driver *D, const run_case *c, uint16_t *const loaded[3], double *first_ms_out);

/* run_grad.c: one shape through a backward rung (D->grad set): the forward's O and LSE made
 * untimed, dQ, dK, dV checked against common/ref_bwd.c, timed, reported; ST_*. `loaded` holds
 * --load's q, k, v, dO or NULL. */
int run_grad(driver *D, const run_case *c, uint16_t *const loaded[4], double *first_ms_out);

/* read_floor.c: --read-floor, the floor for this shape's K and V instead of the rung; ST_*. */
int run_floor(driver *D, const attn_shape *s, double *first_ms_out);

/* sweep.c: one shape, through the rung, or with --read-floor the floor of its K and V; ST_*
 * (main's single shape, and each of a sweep's). */
int run_one(driver *D, const run_case *c, uint16_t *const loaded[4], double *first_ms_out);
/* sweep.c: --sweep. sweep_check reads and validates the file alone (no GPU; main() calls it before
 * the device is opened): 0, or -1 (printed). */
int sweep_check(driver *D);
int run_sweep(driver *D);      /* EXIT_* */

/* ceilings.c: --ceilings, the copy and GEMM ceilings; EXIT_*. */
int run_ceilings(driver *D);

#endif
