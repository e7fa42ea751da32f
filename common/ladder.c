/* The C API (ladder.h): a rung's variants behind ladder_forward and ladder_backward. Nothing here
 * decides what a rung runs: the shape is checked by shape_validate (cli.c), the variant found and
 * listed by variants.c, the device read by device_env.c, and the refusal is the rung's own
 * (attn_unsupported, attn.h), as the driver asks them.
 *
 * What the library keeps, per device, behind one lock: a cuBLAS handle (rung 00 calls cuBLAS; made
 * on the first call that runs) and, for callers that pass no workspace, one workspace grown as
 * needed. A call on another stream could reuse that workspace while the last call's kernels still
 * read it, so each use is ordered after the one before by an event: free on one stream, a wait
 * across two. A caller that passes its own workspace (the Python package passes PyTorch's memory,
 * ordered on PyTorch's stream by its allocator) meets neither. */
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "check_cuda.h"
#include "device_env.h"
#include "harness.h"
#include "ladder.h"
#include "variants.h"

enum { LADDER_MAX_DEVICES = 64 };

typedef struct device_slot {
    cublasHandle_t blas;
    void *ws;              /* the library's own workspace, ws_bytes long */
    size_t ws_bytes;
    cudaEvent_t ws_done;   /* recorded after the last call that used ws */
} device_slot;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static device_slot slots[LADDER_MAX_DEVICES];

/* One call, checked: the shape as attn.h has it, the device's env, the variant and the device. */
typedef struct call {
    attn_shape shape;
    attn_env env;
    const rung *r;
    int fp8;
    int dev;
} call;

/* The reason into why[] (when there is room), and the return code. */
static int refuse(char *why, size_t n, int rc, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int refuse(char *why, size_t n, int rc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (why && n) vsnprintf(why, n, fmt, ap);
    va_end(ap);
    return rc;
}

/* Everything that can refuse, before any work on the GPU: the shape (shape_validate), the
 * variant, the pass, then the rung's own refusal, asked with the device's env (the device's
 * attributes are read first, since a rung's answer may depend on them: rung 07 runs on sm_90
 * alone). Without a device, the rung still answers as the driver's does (nominal_env), and the
 * call then ends with -1: no device. */
static int begin(const ladder_shape *ls, const char *variant, int backward, call *c, char *why, size_t n)
{
    char msg[1024];
    if (why && n) why[0] = 0;
    if (!ls) return refuse(why, n, 1, "no shape (the ladder_shape pointer is NULL)");
    memset(c, 0, sizeof *c);
    c->shape = (attn_shape){ls->B, ls->Hq, ls->Hkv, ls->N, ls->M, ls->d, ls->causal != 0, ls->scale,
                            (attn_dtype)ls->dtype, NULL, 0};
    if (ls->dtype < LADDER_F16 || ls->dtype > LADDER_E4M3)
        return refuse(why, n, 1, "dtype %d: expected %d (float16), %d (bfloat16) or %d (e4m3)", ls->dtype,
                      LADDER_F16, LADDER_BF16, LADDER_E4M3);
    if (ls->scale < 0.0f || (ls->scale != 0.0f && !isnormal(ls->scale)))   /* as --scale; 0: 1/sqrt(d) */
        return refuse(why, n, 1, "scale %g: expected a normal float > 0 (0: 1/sqrt(d))", (double)ls->scale);
    if (ls->scale == 0.0f && ls->d > 0) c->shape.scale = 1.0f / sqrtf((float)ls->d);
    if (shape_validate(&c->shape, msg, sizeof msg)) return refuse(why, n, 1, "%s", msg);
    c->r = variant_pick(variant, c->shape.dtype, &c->fp8);
    if (!c->r) {
        char ids[512];
        variant_ids(ids, sizeof ids);
        return refuse(why, n, 1, "variant '%.64s': expected one of %s", variant, ids);
    }
    if (backward != (variant_grad() != NULL))
        return refuse(why, n, 1, "%s is a %s pass: call ladder_%s", c->r->id, backward ? "forward" : "backward",
                      backward ? "forward" : "backward");
    char none[256];
    int have = device_count(none, sizeof none);
    if (have) {
        cudaError_t e = cudaGetDevice(&c->dev);
        if (e == cudaSuccess) e = device_env(c->dev, &c->env);
        if (e != cudaSuccess) return refuse(why, n, -1, "reading the device: %s", cudaGetErrorString(e));
        if (c->dev >= LADDER_MAX_DEVICES) return refuse(why, n, -1, "device %d: the library keeps %d", c->dev, LADDER_MAX_DEVICES);
    } else {
        nominal_env(&c->env);
    }
    if (attn_unsupported(c->r, c->fp8, &c->shape, &c->env, msg, sizeof msg))
        return refuse(why, n, 1, "%s: %s", c->r->id, msg);
    if (!have) return refuse(why, n, -1, "%s: this machine can check shapes, not run them", none);
    return 0;
}

/* The first NULL among the pointers a call reads or writes, named, or NULL. */
static const char *first_null(const void *const *p, const char *const *names, int count)
{
    for (int i = 0; i < count; i++)
        if (!p[i]) return names[i];
    return NULL;
}

/* The workspace: the caller's (checked against the rung's need), or the library's own. */
static int workspace_for(const call *c, void *given, size_t given_bytes, size_t need, void **ws, int *own,
                         char *why, size_t n)
{
    *ws = given;
    *own = 0;
    if (need == 0) return 0;
    if (given) {
        if ((uintptr_t)given % 256)
            return refuse(why, n, 1, "workspace at %p: expected 256-byte alignment, as cudaMalloc and PyTorch's "
                          "allocator give (the rungs read it in 16-byte vectors)", given);
        if (given_bytes >= need) return 0;
        return refuse(why, n, 1, "workspace: %zu bytes given, %s needs %zu (ladder_workspace)", given_bytes,
                      c->r->id, need);
    }
    device_slot *d = &slots[c->dev];
    cudaError_t e = cudaSuccess;
    if (d->ws_bytes < need) {
        /* cudaFree waits for the device: no kernel still reads the old workspace */
        if (d->ws) e = cudaFree(d->ws);
        d->ws = NULL;
        d->ws_bytes = 0;
        if (e == cudaSuccess) e = cudaMalloc(&d->ws, need);
        if (e == cudaSuccess) d->ws_bytes = need;
    }
    if (e == cudaSuccess && !d->ws_done) e = cudaEventCreateWithFlags(&d->ws_done, cudaEventDisableTiming);
    if (e != cudaSuccess) return refuse(why, n, -1, "workspace of %zu bytes: %s", need, cudaGetErrorString(e));
    *ws = d->ws;
    *own = 1;
    return 0;
}

/* Launch the checked call: the rung's prepare() (07g's quantize kernels) and run() on stream. */
static int launch(const call *c, attn_args *a, void *given, size_t given_bytes, cudaStream_t st, char *why,
                  size_t n)
{
    int own, rc;
    size_t need = c->r->workspace_bytes(&c->shape, &c->env);
    pthread_mutex_lock(&lock);
    device_slot *d = &slots[c->dev];
    if ((rc = workspace_for(c, given, given_bytes, need, &a->workspace, &own, why, n))) goto out;
    if (!d->blas) {
        cublasStatus_t b = cublasCreate(&d->blas);
        if (b != CUBLAS_STATUS_SUCCESS) {
            d->blas = NULL;
            rc = refuse(why, n, -1, "cublasCreate: %s", cublas_status_name(b));
            goto out;
        }
    }
    a->shape = c->shape;
    a->env = c->env;
    a->workspace_bytes = own ? d->ws_bytes : given_bytes;
    a->blas = d->blas;
    const char *err = NULL;
    cudaError_t e = own ? cudaStreamWaitEvent(st, d->ws_done, 0) : cudaSuccess;
    if (e != cudaSuccess) err = cudaGetErrorString(e);
    if (!err && c->r->prepare) err = c->r->prepare(a, st);
    if (!err) err = c->r->run(a, st);
    if (!err && own && (e = cudaEventRecord(d->ws_done, st)) != cudaSuccess) err = cudaGetErrorString(e);
    rc = err ? refuse(why, n, -1, "%s: %s", c->r->id, err) : 0;
out:
    pthread_mutex_unlock(&lock);
    return rc;
}

int ladder_workspace(const ladder_shape *s, const char *variant, size_t *bytes, char *why, size_t n)
{
    call c;
    int rc = begin(s, variant, variant_grad() != NULL, &c, why, n);
    if (bytes) *bytes = rc ? 0 : c.r->workspace_bytes(&c.shape, &c.env);
    return rc;
}

int ladder_forward(const ladder_shape *s, const void *q, const void *k, const void *v, void *o, float *lse,
                   const char *variant, void *workspace, size_t workspace_bytes, cudaStream_t stream,
                   char *why, size_t n)
{
    call c;
    int rc = begin(s, variant, 0, &c, why, n);
    if (rc) return rc;
    const void *p[5] = {q, k, v, o, lse};
    static const char *const names[5] = {"q", "k", "v", "o", "lse"};
    const char *missing = first_null(p, names, 5);
    if (missing) return refuse(why, n, 1, "%s: a NULL device pointer", missing);
    attn_args a;
    memset(&a, 0, sizeof a);
    a.q = q; a.k = k; a.v = v; a.o = o; a.lse = lse;
    return launch(&c, &a, workspace, workspace_bytes, stream, why, n);
}

int ladder_backward(const ladder_shape *s, const void *q, const void *k, const void *v, const void *o,
                    const float *lse, const void *dout, void *dq, void *dk, void *dv, const char *variant,
                    void *workspace, size_t workspace_bytes, cudaStream_t stream, char *why, size_t n)
{
    call c;
    int rc = begin(s, variant, 1, &c, why, n);
    if (rc) return rc;
    const void *p[9] = {q, k, v, o, lse, dout, dq, dk, dv};
    static const char *const names[9] = {"q", "k", "v", "o", "lse", "dout", "dq", "dk", "dv"};
    const char *missing = first_null(p, names, 9);
    if (missing) return refuse(why, n, 1, "%s: a NULL device pointer", missing);
    attn_grads g = {dout, dq, dk, dv};
    attn_args a;
    memset(&a, 0, sizeof a);
    a.q = q; a.k = k; a.v = v; a.o = (void *)o; a.lse = (float *)lse;   /* inputs here (attn.h) */
    a.grad = &g;
    return launch(&c, &a, workspace, workspace_bytes, stream, why, n);
}

int ladder_variants(char *out, size_t n)
{
    const rung *r;
    size_t k = 0;
    if (out && n) out[0] = 0;
    for (int i = 0; (r = variant_at(i, NULL)); i++) {
        int w = snprintf(k < n ? out + k : NULL, k < n ? n - k : 0, "%s\t%s\t%s\n", r->id, r->name, r->summary);
        k += (size_t)(w > 0 ? w : 0);
    }
    return (int)k;
}

const char *ladder_pass(void)
{
    return variant_grad() ? "backward" : "forward";
}

int ladder_probe(char *out, size_t n)
{
    char none[256];
    int count = device_count(none, sizeof none), dev = 0;
    struct cudaDeviceProp p;
    if (!count) {
        if (out && n) snprintf(out, n, "%s", none);
        return 0;
    }
    cudaError_t e = cudaGetDevice(&dev);
    if (e == cudaSuccess) e = cudaGetDeviceProperties(&p, dev);
    if (out && n) {
        if (e != cudaSuccess) snprintf(out, n, "%d CUDA device(s); reading device %d: %s", count, dev, cudaGetErrorString(e));
        else snprintf(out, n, "CUDA device %d of %d: %s, sm_%d%d, %d SMs", dev, count, p.name, p.major, p.minor,
                      p.multiProcessorCount);
    }
    return count;
}
