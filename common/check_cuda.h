/* Error checks for CUDA and cuBLAS calls.
 *
 * Host tools (driver, benchmarks) use CUDA_CHECK / CUBLAS_CHECK: print file, line, call and
 * message, then exit non-zero. Rungs must not exit: they use RUNG_CUDA / RUNG_CUBLAS /
 * RUNG_LAUNCHED, which return a message from run() so the driver can report FAIL and go on. */
#ifndef CHECK_CUDA_H
#define CHECK_CUDA_H

#include <stdio.h>
#include <stdlib.h>
#include <cuda_runtime_api.h>
#include <cublas_v2.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Formats "file:line: call: message" into a per-thread buffer and returns it. */
const char *rung_error(const char *file, int line, const char *call, const char *msg);
const char *cublas_status_name(cublasStatus_t s);

#ifdef __cplusplus
}
#endif

#define CUDA_CHECK(call)                                                                    \
    do {                                                                                    \
        cudaError_t e_ = (call);                                                            \
        if (e_ != cudaSuccess) {                                                            \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,                   \
                    cudaGetErrorString(e_));                                                \
            exit(2);                                                                        \
        }                                                                                   \
    } while (0)

#define CUBLAS_CHECK(call)                                                                  \
    do {                                                                                    \
        cublasStatus_t s_ = (call);                                                         \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                                  \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,                   \
                    cublas_status_name(s_));                                                \
            exit(2);                                                                        \
        }                                                                                   \
    } while (0)

#define RUNG_CUDA(call)                                                                     \
    do {                                                                                    \
        cudaError_t e_ = (call);                                                            \
        if (e_ != cudaSuccess)                                                              \
            return rung_error(__FILE__, __LINE__, #call, cudaGetErrorString(e_));           \
    } while (0)

#define RUNG_CUBLAS(call)                                                                   \
    do {                                                                                    \
        cublasStatus_t s_ = (call);                                                         \
        if (s_ != CUBLAS_STATUS_SUCCESS)                                                    \
            return rung_error(__FILE__, __LINE__, #call, cublas_status_name(s_));           \
    } while (0)

/* After every <<<...>>>: a bad launch configuration is reported here, naming the kernel. */
#define RUNG_LAUNCHED(kernel)                                                               \
    do {                                                                                    \
        cudaError_t e_ = cudaGetLastError();                                                \
        if (e_ != cudaSuccess)                                                              \
            return rung_error(__FILE__, __LINE__, "launch of " #kernel, cudaGetErrorString(e_)); \
    } while (0)

#endif
