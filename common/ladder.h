/* The ladder as a library: one rung's variants called from another program (the Python package,
 * python/ladder/, through ctypes; or C), with device pointers the caller owns, on the caller's
 * stream. The Makefile builds it into build/lib/libladder_NN.so, one per rung, from the objects
 * the rung's binary links; only the ladder_* functions below are exported (common/ladder.map).
 *
 * The problem is attn.h's: Q [B,Hq,N,d], K and V [B,Hkv,M,d], O [B,Hq,N,d], LSE [B,Hq,N] float32,
 * contiguous; Hq % Hkv == 0 (GQA by head count); causal masks aligned bottom-right.
 *
 * Every call returns
 *    0   done (enqueued on the stream: nothing is waited for),
 *    1   refused: the shape, the dtype, the variant or an argument, with the reason in why[]
 *        (the rung's own unsupported() sentence where the rung refuses), before any work on the
 *        GPU and before a device pointer is read,
 *   -1   a CUDA error, or no CUDA device, with the reason in why[].
 * why may be NULL (n = 0): the reason is then dropped. */
#ifndef LADDER_H
#define LADDER_H

#include <stddef.h>
#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { LADDER_F16 = 0, LADDER_BF16 = 1, LADDER_E4M3 = 2 };   /* attn_dtype's values */

typedef struct ladder_shape {
    int B, Hq, Hkv, N, M, d;
    int dtype;       /* LADDER_F16, LADDER_BF16 (LADDER_E4M3: float16 tensors, an FP8 step, 07g) */
    int causal;      /* 1: bottom-right aligned causal mask */
    float scale;     /* softmax scale; 0: 1/sqrt(d) */
} ladder_shape;

/* The workspace a call needs beyond its inputs and outputs, in *bytes (0 for most rungs), after the
 * refusals the call itself would make. A caller that passes its own workspace to ladder_forward or
 * ladder_backward sizes it with this; one that passes NULL lets the library keep one per device. */
int ladder_workspace(const ladder_shape *s, const char *variant, size_t *bytes, char *why, size_t n);

/* O and LSE from Q, K, V, by variant (NULL: the rung's own, the last of its --list) on stream. With
 * LADDER_E4M3, Q, K and V must hold no infinity (float8 e4m3 has none; the driver refuses such
 * inputs, but this call reads no input on the host and does not check).
 * workspace: NULL (the library's own, grown as needed and ordered between streams by an event), or
 * workspace_bytes >= ladder_workspace's bytes of device memory the caller owns, 256-byte aligned. */
int ladder_forward(const ladder_shape *s, const void *q, const void *k, const void *v, void *o, float *lse,
                   const char *variant, void *workspace, size_t workspace_bytes, cudaStream_t stream,
                   char *why, size_t n);

/* dQ, dK, dV from Q, K, V, the forward's O and LSE, and dO (a backward rung: 08); the rest as
 * ladder_forward. */
int ladder_backward(const ladder_shape *s, const void *q, const void *k, const void *v, const void *o,
                    const float *lse, const void *dout, void *dq, void *dk, void *dv, const char *variant,
                    void *workspace, size_t workspace_bytes, cudaStream_t stream, char *why, size_t n);

/* The variants, one line each, "id<TAB>name<TAB>summary\n" in --list order (the binary's --list
 * prints the same). Returns the length of the whole text, as snprintf does: out holds it all when
 * that is below n. */
int ladder_variants(char *out, size_t n);

/* "forward" or "backward": which of ladder_forward and ladder_backward this rung runs. */
const char *ladder_pass(void);

/* The number of CUDA devices, and a sentence in out: the current device (name, sm_XY, SMs), or why
 * there is none. Touches no device memory. */
int ladder_probe(char *out, size_t n);

#ifdef __cplusplus
}
#endif
#endif
