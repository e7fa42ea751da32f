/* --ceilings: the two rates every rung is measured against, with the same clock as the rungs: a
 * device-to-device copy (the memory ceiling) and a large cuBLAS GEMM (the tensor-core ceiling). */
#include <stdio.h>
#include "jobs.h"

int run_ceilings(driver *D)
{
    double gbps, tflops, ms_copy, ms_gemm;
    const char *err = measure_copy_gbps(D->st, &gbps, &ms_copy);
    if (err) { fprintf(stderr, "copy ceiling: %s\n", err); return EXIT_FAIL; }
    printf("ceiling: device-to-device copy of 1 GiB: %.0f GB/s (read + written; %.3f ms)\n", gbps, ms_copy);
    err = measure_gemm_tflops(D->blas, D->st, 8192, &tflops, &ms_gemm);
    if (err) { fprintf(stderr, "GEMM ceiling: %s\n", err); return EXIT_FAIL; }
    printf("ceiling: cuBLAS float16 GEMM 8192^3, float32 accumulate: %.1f TFLOP/s (%.3f ms)\n", tflops, ms_gemm);
    char why[1200];
    if (D->opt.csv) {
        if (report_csv_ceiling(D->opt.csv, &D->dev, "ceiling-copy", ms_copy, 0, gbps, "bytes=2147483648", why, sizeof why) ||
            report_csv_ceiling(D->opt.csv, &D->dev, "ceiling-gemm", ms_gemm, tflops, 0, "m=n=k=8192", why, sizeof why)) {
            fprintf(stderr, "error: %s\n", why);
            return EXIT_USAGE;
        }
    }
    return EXIT_OK;
}
