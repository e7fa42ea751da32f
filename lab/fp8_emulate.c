/* 07g's accuracy experiment on the CPU: FlashAttention-3's outlier inputs (--inputs sparse-outlier,
 * common/inputs.c, the driver's seed 1234), B = 1, Hq = Hkv = 4, M = N, not causal, the shapes of
 * lab/fp8_run.sh's `accuracy` step, through tests/test_fp8_step.c's model of 07g's arithmetic (the
 * quantize path of fp8_quant.h: DK padding, H D, a scale per 64 Q rows and per K/V tile of K and V;
 * S descaled per tile; 07f's lazy rescale; P times r_j rounded to e4m3; O in units of vmax) against
 * common/ref.c's float64 reference on the float16 inputs. It tells an error inherent to the method
 * (the model shows it) from a kernel defect (only the GPU shows it): compare its rmse with
 * results/h100-fp8-accuracy.csv's. Prints method,d,N,rmse,rel_l2 as that CSV; no GPU needed.
 *
 *   make build/bin/cpu_tests && nvcc -O2 -Xcompiler -fopenmp -o build/fp8_emulate lab/fp8_emulate.c \
 *       build/obj/common/{inputs,ref,errors,check,cli,npy,pages,report,tensor_map,timing}.o -lcublas -lm \
 *   && build/fp8_emulate [N ...]          (default N = 1024; 4096 takes minutes on two cores) */
#include "../tests/test_fp8_step.c"
#include <stdarg.h>

void test_fail(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s:%d: ", file, line);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

int main(int argc, char **argv)
{
    static const int dims[3] = {64, 128, 256};
    static const char *names[3] = {"fp8-tensor", "fp8-block", "fp8-block-hadamard"};
    printf("method,d,N,rmse,rel_l2\n");
    for (int a = 1; a < (argc > 1 ? argc : 2); a++) {
        const int n = argc > 1 ? atoi(argv[a]) : 1024;
        for (int di = 0; di < 3; di++) {
            attn_shape s = shape_of(1, 4, 4, n, n, dims[di], 0);
            for (int m = 0; m < 3; m++) {
                double rel, le, lr, rmse;
                model_errors_q(&s, INPUT_SPARSE_OUTLIER, 1234, PLANT_NONE, m == 0, m == 2, &rel, &le, &lr, &rmse);
                printf("%s,%d,%d,%.4g,%.4g\n", names[m], dims[di], n, rmse, rel);
                fflush(stdout);
            }
        }
    }
    return 0;
}
