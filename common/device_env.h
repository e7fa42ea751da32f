/* What a rung may ask of the machine (attn_env, attn.h), read from a CUDA device one way for the
 * driver (common/device.c) and the C API (common/ladder.c). */
#ifndef DEVICE_ENV_H
#define DEVICE_ENV_H

#include <stddef.h>
#include "attn.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The number of CUDA devices; 0 with the reason in why[] (may be NULL) when there is none or the
 * runtime cannot start (no driver), the runtime's error then cleared. */
int device_count(char *why, size_t n);
/* e's device fields (SMs, compute capability, shared memory) from device dev; the rest untouched.
 * cudaSuccess or the runtime's error. */
cudaError_t device_env(int dev, attn_env *e);
/* Without a device a rung can still say which shapes it refuses: answer as an H100 would. */
void nominal_env(attn_env *e);

#ifdef __cplusplus
}
#endif
#endif
