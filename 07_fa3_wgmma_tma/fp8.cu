/* Step 07g's kernels and host code: the quantize kernels that write the e4m3 copies of Q, K and V and
 * their scales (the step's prepare()), the tile pick, the tensor maps and the launch of 07f's kernel
 * on fp8.cuh's tile. Its own translation unit: rung 07's 16-bit steps are fa3.cu. */
#include <stdio.h>
#include "../common/check_cuda.h"
#include "../common/reduce.cuh"
#include "../common/tensor_map.h"
#include "fa3.h"
#include "fp8.cuh"

/* ---- the quantize kernels ------------------------------------------------------------------
 * The step's prepare() (f8_prepare below): the driver runs them before the attention kernel and
 * times them apart, and the two together (the row's quant_ms and total_ms). Memory-bound: each
 * reads a tensor in float16 (2 bytes an element) and writes it in e4m3 (1 byte), so they are
 * written as copies: every thread's loads issued before any use, 16-byte loads and 128-byte
 * coalesced stores, the arithmetic in registers, no shared memory for Q and K. The values they
 * write are the bytes of fp8_quant.h's host code, operation for operation (the same butterflies in
 * the same order, x / scale by IEEE division, the same conversion), so the CPU tests' model of 07g
 * is the kernel's. mode: F8_BLOCK (a scale per block), F8_AMAX (per-tensor mode, first pass: only
 * the block's amax, into the tensor's slot by atomicMax), F8_TENSOR (second pass: every block
 * takes the tensor's scale). */
enum { F8_BLOCK = 0, F8_AMAX, F8_TENSOR };

/* The block's scale, written at `scale`; 0 in the F8_AMAX pass (nothing more to do). */
static __device__ __forceinline__ float f8_block_scale(float amax, int mode, const unsigned *tensor_amax, unsigned *slot,
                                                       float *scale)
{
    amax = block_max(amax);
    if (mode == F8_AMAX) {
        if (threadIdx.x == 0) atomicMax(slot, __float_as_uint(amax));
        return 0.0f;
    }
    const float s = fp8_e4m3_scale(mode == F8_TENSOR ? __uint_as_float(*tensor_amax) : amax);
    if (threadIdx.x == 0) *scale = s;
    return s;
}

/* Eight halves (one 16-byte load) to floats. */
static __device__ __forceinline__ void f8_unpack8(const uint4 &u, float (&f)[8])
{
    const __half2 *h = reinterpret_cast<const __half2 *>(&u);
#pragma unroll
    for (int k = 0; k < 4; k++) {
        const float2 x = __half22float2(h[k]);
        f[2 * k] = x.x;
        f[2 * k + 1] = x.y;
    }
}

/* Q or K: one block per scale block, ROWS rows (F8_QROWS of Q, the K/V tile's of K) of plane `plane` of
 * x [planes][rows][d] -> out [planes][rows][DK] (q8 or k8 of the workspace layout w).
 *   block  ROWS DK / 64 threads: 64 values each, 8 columns of 8 rows
 *   a row  DK / 8 neighbouring threads, 8 columns (16 bytes of float16) each: a warp reads
 *          256 / DK whole rows, contiguous (coalesced); columns from d up are 0
 *   H D    the row's sign pattern, then hadamard_transform's passes in its order: pairs 1, 2 and 4
 *          apart inside a thread's 8 values (f8_had8), pairs 8 m apart (m = 1, 2, .. DK / 16)
 *          between the thread and the one m lanes away (__shfl_xor_sync, f8_had_cross); then
 *          1 / sqrt(DK). tests/test_fp8_step.c checks the split against hadamard_transform, bit
 *          for bit
 *   scale  the block's amax by block_max; then each thread writes its 8 codes of each row as one
 *          8-byte store (a warp: 256 contiguous bytes). */
template <int DK, int ROWS>
__global__ void __launch_bounds__(ROWS * DK / 64) f8_quant_rows(const __half *x, int rows, int d, int nblk, int hadamard,
                                                                int mode, uint8_t *out, float *scales, unsigned *amax,
                                                                f8_ws_layout w)
{
    constexpr int L = DK / 8, THREADS = ROWS * DK / 64, RP = THREADS / L, PASSES = ROWS / RP;
    static_assert(PASSES == 8 && L <= 32, "8 rows of 8 values a thread; a row within a warp");
    const int plane = blockIdx.x / nblk, blk = blockIdx.x % nblk, r0 = blk * ROWS;
    const int li = threadIdx.x % L, c0 = 8 * li, rsub = threadIdx.x / L;
    const uint4 *src = reinterpret_cast<const uint4 *>(x + (size_t)plane * rows * d);
    uint4 raw[PASSES];
#pragma unroll
    for (int p = 0; p < PASSES; p++) {
        const int r = r0 + p * RP + rsub;
        raw[p] = r < rows && c0 < d ? __ldg(src + ((size_t)r * d + c0) / 8) : make_uint4(0, 0, 0, 0);
    }
    float sg[8];
#pragma unroll
    for (int i = 0; i < 8; i++) sg[i] = hadamard_sign(F8_SEED, c0 + i);
    const float rs = 1.0f / sqrtf((float)DK);
    float v[PASSES][8], am = 0.0f;
#pragma unroll
    for (int p = 0; p < PASSES; p++) {
        float(&e)[8] = v[p];
        f8_unpack8(raw[p], e);
        if (hadamard) {
            f8_had8(e, sg);
#pragma unroll
            for (int m = 1; m < L; m *= 2) {
                float o[8];
#pragma unroll
                for (int i = 0; i < 8; i++) o[i] = __shfl_xor_sync(FULL_MASK, e[i], m);
                f8_had_cross(e, o, li & m);
            }
#pragma unroll
            for (int i = 0; i < 8; i++) e[i] *= rs;
        }
#pragma unroll
        for (int i = 0; i < 8; i++) am = fmaxf(am, fabsf(e[i]));
    }
    const float s = f8_block_scale(am, mode, amax, amax, scales + (size_t)plane * nblk + blk);
    if (mode == F8_AMAX) return;
#pragma unroll
    for (int p = 0; p < PASSES; p++) {
        const int r = r0 + p * RP + rsub;
        if (r >= rows) continue;
        const float(&e)[8] = v[p];
        uint2 c;
        c.x = (uint32_t)fp8_e4m3x2_encode(e[0] / s, e[1] / s) | (uint32_t)fp8_e4m3x2_encode(e[2] / s, e[3] / s) << 16;
        c.y = (uint32_t)fp8_e4m3x2_encode(e[4] / s, e[5] / s) | (uint32_t)fp8_e4m3x2_encode(e[6] / s, e[7] / s) << 16;
        *reinterpret_cast<uint2 *>(out + f8_row_at(w, plane, rows, r, c0)) = c;
    }
}

/* V's block: 256 threads, one K/V tile of BC keys (f8_bc: 128 or 192). */
enum { F8_VT_THREADS = 256 };

/* Bytes of V's shared tile: bc keys of DK / 8 + 1 chunks of 16 bytes (the extra chunk staggers
 * the rows over the banks). */
static constexpr size_t f8_vt_smem(int dk, int bc) { return (size_t)bc * (dk / 8 + 1) * 16; }

/* V: keys [k0, k0 + BC) of plane `plane` of v [planes][M][d] -> rows n = 0 .. DK - 1 of the
 * transposed out [planes][DK][nk BC] (vt8 of the workspace layout w), bytes k0 .. k0 + BC - 1: byte
 * p holds key k0 + f8_vt_key(p); keys from M up and columns from d up are 0. The tile's scale also
 * goes into the head's vmax (atomicMax; an all-zero tile's scale of 1 is left out).
 *   load   the tile as it lies, 16-byte loads, coalesced (all of a thread's issued first), into
 *          shared memory as float16, rows of DK + 8 halves; the amax on the way
 *   write  a warp takes 8 columns n and writes 8 rows of the transposed tile, each BC contiguous
 *          bytes (a lane a 4-byte word, words q = lane, lane + 32, ...: at BC = 192 the second
 *          pass has half the lanes): word q of a row is slots 4q .. 4q + 3, which hold keys kb,
 *          kb + 1, kb + 8, kb + 9 (kb = f8_vt_word_key(q)), so the lane reads those four keys' 16
 *          bytes at the warp's columns and has all 8 words. */
template <int DK, int BC>
__global__ void __launch_bounds__(F8_VT_THREADS) f8_quant_vt(const __half *v, int M, int d, int nk, int mode, uint8_t *out,
                                                             float *scales, unsigned *vmax, unsigned *amax, f8_ws_layout w)
{
    extern __shared__ uint4 f8_vsm[];
    constexpr int CPR = DK / 8 + 1, CH = DK / 8, ITER = BC * CH / F8_VT_THREADS;
    static_assert(BC * CH % F8_VT_THREADS == 0 && BC % 32 == 0, "whole passes of 16-byte loads; whole 32-key steps");
    const int plane = blockIdx.x / nk, j = blockIdx.x % nk, k0 = j * BC, nr = min(BC, M - k0), dc = d / 8;
    const uint4 *src = reinterpret_cast<const uint4 *>(v + ((size_t)plane * M + k0) * d);
    uint4 raw[ITER];
#pragma unroll
    for (int it = 0; it < ITER; it++) {
        const int e = it * F8_VT_THREADS + threadIdx.x, key = e / CH, ch = e % CH;
        raw[it] = key < nr && ch < dc ? __ldg(src + (size_t)key * dc + ch) : make_uint4(0, 0, 0, 0);
    }
    float am = 0.0f;
#pragma unroll
    for (int it = 0; it < ITER; it++) {
        const int e = it * F8_VT_THREADS + threadIdx.x;
        f8_vsm[(e / CH) * CPR + e % CH] = raw[it];
        float f[8];
        f8_unpack8(raw[it], f);
#pragma unroll
        for (int i = 0; i < 8; i++) am = fmaxf(am, fabsf(f[i]));
    }
    __syncthreads();   /* the tile is in; block_max's own barriers follow */
    const float block_amax = block_max(am);
    const float s = f8_block_scale(block_amax, mode, amax + 2, amax + 2, scales + (size_t)plane * nk + j);
    if (mode == F8_AMAX) return;
    if (threadIdx.x == 0 && (block_amax > 0.0f || mode == F8_TENSOR)) atomicMax(vmax + plane, __float_as_uint(s));
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
#pragma unroll
    for (int q = lane; q < BC / 4; q += 32) {
        const int kb = f8_vt_word_key(q);
#pragma unroll
        for (int nc = warp; nc < CH; nc += F8_VT_THREADS / 32) {
            float a[8], b[8], c[8], e[8];
            f8_unpack8(f8_vsm[kb * CPR + nc], a);
            f8_unpack8(f8_vsm[(kb + 1) * CPR + nc], b);
            f8_unpack8(f8_vsm[(kb + 8) * CPR + nc], c);
            f8_unpack8(f8_vsm[(kb + 9) * CPR + nc], e);
#pragma unroll
            for (int i = 0; i < 8; i++) {
                const uint32_t word = (uint32_t)fp8_e4m3x2_encode(a[i] / s, b[i] / s) |
                                      (uint32_t)fp8_e4m3x2_encode(c[i] / s, e[i] / s) << 16;
                *reinterpret_cast<uint32_t *>(out + f8_vt_at(w, plane, 8 * nc + i, k0 + 4 * q)) = word;
            }
        }
    }
}

/* ---- host ----------------------------------------------------------------------------------- */

template <int DK, int BC>
static const char *f8_quantize(const attn_args *a, cudaStream_t st, const f8_ws_layout &w)
{
    const attn_shape *s = &a->shape;
    const int bh = s->B * s->Hq, bkv = s->B * s->Hkv, had = !a->env.fp8_no_hadamard;
    unsigned char *ws = static_cast<unsigned char *>(a->workspace);
    unsigned *amax = reinterpret_cast<unsigned *>(ws + w.amax), *vmax = reinterpret_cast<unsigned *>(ws + w.vmax);
    const size_t smv = f8_vt_smem(DK, BC);
    RUNG_CUDA(cudaFuncSetAttribute(f8_quant_vt<DK, BC>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smv));
    RUNG_CUDA(cudaMemsetAsync(ws + w.amax, 0, w.qs - w.amax, st));   /* amax and vmax accumulate */
    const __half *q = static_cast<const __half *>(a->q), *k = static_cast<const __half *>(a->k),
                 *v = static_cast<const __half *>(a->v);
    for (int pass = a->env.fp8_per_tensor ? 0 : 1; pass < 2; pass++) {
        const int mode = !a->env.fp8_per_tensor ? F8_BLOCK : pass == 0 ? F8_AMAX : F8_TENSOR;
        f8_quant_rows<DK, F8_QROWS><<<w.nq * bh, F8_QROWS * DK / 64, 0, st>>>(
            q, s->N, s->d, w.nq, had, mode, ws + w.q8, reinterpret_cast<float *>(ws + w.qs), amax, w);
        RUNG_LAUNCHED(f8_quant_rows);
        f8_quant_rows<DK, BC><<<w.nk * bkv, BC * DK / 64, 0, st>>>(
            k, s->M, s->d, w.nk, had, mode, ws + w.k8, reinterpret_cast<float *>(ws + w.ks), amax + 1, w);
        RUNG_LAUNCHED(f8_quant_rows);
        f8_quant_vt<DK, BC><<<w.nk * bkv, F8_VT_THREADS, smv, st>>>(v, s->M, s->d, w.nk, mode, ws + w.vt8,
                                                                reinterpret_cast<float *>(ws + w.vs), vmax, amax, w);
        RUNG_LAUNCHED(f8_quant_vt);
    }
    return NULL;
}

/* 07f's kernel on an FP8 tile. */
template <class T>
static void f8_fill(f3_variant *v)
{
    *v = (f3_variant){fa3_ws_kernel<T, f3_loop_ov<T, f3_lazy, f3_exp_turn<T> >, f3_persistent<T> >, T::smem, T::BR, T::BC,
                      128 * (T::CW + 1), T::DK, 1};
}

/* The tile of a shape: DK = f8_dk(d); its K/V tile f8_bc(d, M), which the quantize kernels' K and V
 * scales follow; three consumers at DK = 64 by the 16-bit table's rule. */
static int f8_pick(const attn_shape *s, f3_variant *v)
{
    const int dk = f8_dk(s->d), bc = f8_bc(s->d, s->M);
    if (s->d % 8 || s->d < 8 || s->d > 256) return 0;
    if (dk == 64) {
        if (f3_three_consumers(s->N)) f8_fill<f8_tile<64, F8_BC, 3> >(v);
        else f8_fill<f8_tile<64, F8_BC, 2> >(v);
    }
    else if (dk == 128) {
        if (bc == F8_BC_WIDE) f8_fill<f8_tile<128, F8_BC_WIDE, 2> >(v);
        else f8_fill<f8_tile<128, F8_BC, 2> >(v);
    }
    else f8_fill<f8_tile<256, F8_BC, 2> >(v);
    return 1;
}

static int f8_unsupported(const attn_shape *s, const attn_env *env, char *why, size_t n)
{
    f3_variant v;
    if (env->cc_major != 9) snprintf(why, n, "rung 07 needs a Hopper GPU (sm_90: wgmma, TMA); this one is sm_%d%d",
                                      env->cc_major, env->cc_minor);
    else if (!f8_pick(s, &v))
        snprintf(why, n, "07g takes head dims that are multiples of 8 up to 256 (d = %d)", s->d);
    else if (attn_refuse_paged(s, why, n)) return 1;
    else if (s->seqlens_k) snprintf(why, n, "rung 07 takes one KV length for every request (varlen decode is rung 06's job)");
    else if (v.smem > env->smem_per_block_optin || f8_vt_smem(f8_dk(s->d), v.bc) > env->smem_per_block_optin)
        snprintf(why, n, "needs %zu KB of shared memory per block", v.smem / 1024);
    else return 0;
    return 1;
}

static size_t f8_workspace(const attn_shape *s, const attn_env *env)
{
    (void)env;
    return f8_ws_of(s->B, s->Hq, s->Hkv, s->N, s->M, s->d).total;
}

/* The tensor maps of the quantized tensors (in the workspace) and of O, as f3_run's. */
static tensor_map_cache f8_maps;

/* The rung's prepare(): the quantize kernels, which the driver runs before every f8_run, outside
 * the attention kernel's timed region, and times on their own (attn.h). */
static const char *f8_prepare(const attn_args *a, cudaStream_t st)
{
    const attn_shape *s = &a->shape;
    const f8_ws_layout w = f8_ws_of(s->B, s->Hq, s->Hkv, s->N, s->M, s->d);
    if (w.dk == 64) return f8_quantize<64, F8_BC>(a, st, w);
    if (w.dk == 128) return w.bc == F8_BC_WIDE ? f8_quantize<128, F8_BC_WIDE>(a, st, w) : f8_quantize<128, F8_BC>(a, st, w);
    return f8_quantize<256, F8_BC>(a, st, w);
}

/* The attention kernel on the workspace's e4m3 Q, K, V and scales, which f8_prepare wrote. */
static const char *f8_run(const attn_args *a, cudaStream_t st)
{
    const attn_shape *s = &a->shape;
    f3_variant v;
    const char *err;
    if (!f8_pick(s, &v)) return "07g: unsupported head dim";
    const f8_ws_layout w = f8_ws_of(s->B, s->Hq, s->Hkv, s->N, s->M, s->d);
    unsigned char *ws = static_cast<unsigned char *>(a->workspace);
    const int rowb = w.dk < 128 ? w.dk : 128, vrowb = f8_v_rowb(w.bc);
    if (w.bc != v.bc) return "07g: the kernel's K/V tile is not the quantize kernels' (f8_bc)";
    const intptr_t key[] = {(intptr_t)a->workspace, (intptr_t)a->o, s->B, s->Hq, s->Hkv, s->N, s->M, s->d};
    if (!tensor_map_cache_hit(&f8_maps, key, sizeof key) &&
        ((err = tensor_map_3d_u8(&f8_maps.m[0], ws + w.q8, w.dk, s->N, s->B * s->Hq, rowb, v.br)) ||
         (err = tensor_map_3d_u8(&f8_maps.m[1], ws + w.k8, w.dk, s->M, s->B * s->Hkv, rowb, v.bc)) ||
         (err = tensor_map_3d_u8(&f8_maps.m[2], ws + w.vt8, w.nk * w.bc, w.dk, s->B * s->Hkv, vrowb, w.dk)) ||
         (err = tensor_map_3d(&f8_maps.m[3], a->o, ATTN_F16, s->d, s->N, s->B * s->Hq, v.br)))) {
        f8_maps.valid = 0;
        return err;
    }
    return f3_launch(a, st, v, f8_maps.m);
}

static void f8_describe(const attn_shape *s, const attn_env *env, char *buf, size_t len)
{
    f3_variant v;
    if (f8_pick(s, &v))
        snprintf(buf, len, "tile=%dx%d;dk=%d;fp8=%s;hadamard=%d;", v.br, v.bc, v.dk, env->fp8_per_tensor ? "tensor" : "block",
                 !env->fp8_no_hadamard);
    else if (len) buf[0] = '\0';
}

static const rung rung_07g = {
    "07g", "fa3: FP8",
    "07f + Q, K, V in float8 e4m3 on FP8 wgmma (k32), quantized by the step: a scale per block of "
    "rows, Q and K through a random Hadamard map; P's bytes and V's keys in one permuted order",
    f8_unsupported, f8_workspace, f8_run, f8_describe, f8_prepare,
};

/* The FP8 step (attn.h): the rung's own for --dtype e4m3; 07f stays rung 07's own. */
extern "C" const rung *const rung_fp8_variants[] = {&rung_07g, NULL};
