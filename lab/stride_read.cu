/* Lab, not course: how fast HBM serves rung 06's multi-head decode reads in each KV layout.
 *
 * Issue 38's paged lines at d = 96, Hkv = 32 run 4-7% slower than their contiguous twins while
 * the loader's instructions are the same (at P = 64 a 64-key tile lies in one page). The reading in
 * 06's NOTES.md: in a page (key-major, "NHD": [page][P][Hkv][d]) one head's 192-byte rows lie
 * Hkv * 192 bytes apart, while the contiguous cache ([B][Hkv][M][d], "HND") gives a head its keys
 * as one stream. This program reads the same bytes (B = 8, Hkv = 32, M = 4096, d = 96, bfloat16,
 * K and V: 403 MB) with the same grid (256 CTAs of 256 threads, 8 loads of 16 bytes in flight a
 * thread) in several patterns, and prints GB/s for each; only the pattern changes:
 *
 *   hnd        a CTA reads one head's M keys: one contiguous stream (the contiguous cache)
 *   nhd g=G    a CTA reads G neighbouring heads' rows, G * 192 contiguous bytes a key, every
 *              Hkv * 192 bytes (G = 1 is today's paged read; G = 2 the two-heads tile of NOTES.md);
 *              with G > 1 a CTA takes M / G of the keys, so every pattern has 256 CTAs
 *   nhd-pages  as nhd g=1, but the 64-key pages in a seeded random order (what the driver builds)
 *
 * Build and run: nvcc -O3 -arch=sm_90 -o build/bin/stride_read lab/stride_read.cu && build/bin/stride_read */
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); exit(1); } } while (0)

enum { B = 8, HKV = 32, M = 4096, ROW = 192, CHUNKS = ROW / 16, PAGE = 64, THREADS = 256, INFLIGHT = 8 };

/* One CTA: request b, heads h0 .. h0 + g - 1, keys k0 .. k0 + nk - 1. A key's g rows are one piece of
 * g * 192 bytes; the CTA's pieces are read in 16-byte chunks, INFLIGHT loads a thread before any is
 * used. The sum keeps the loads alive. */
__global__ void read_kernel(const uint4 *k, const uint4 *v, const int *page_of, int layout, int g,
                            unsigned *sink)
{
    int cta = blockIdx.x, groups = HKV / g;
    int b = cta / (groups * g), rest = cta % (groups * g);
    int hg = rest / g, slice = rest % g;
    int nk = M / g, k0 = slice * nk, h0 = hg * g;
    int per_key = g * CHUNKS, total = nk * per_key;
    unsigned acc = 0;
    for (int base = 0; base < total; base += THREADS * INFLIGHT) {
        uint4 r[2 * INFLIGHT];
#pragma unroll
        for (int i = 0; i < INFLIGHT; ++i) {
            int c = base + i * THREADS + threadIdx.x;
            r[2 * i] = r[2 * i + 1] = make_uint4(0, 0, 0, 0);
            if (c < total) {
                int key = k0 + c / per_key, w = c % per_key;      /* w: chunk within the piece */
                size_t off;
                if (layout == 0) {                                /* hnd: [B][Hkv][M][d] */
                    int h = h0 + w / CHUNKS;
                    off = (((size_t)b * HKV + h) * M + key) * CHUNKS + w % CHUNKS;
                } else {                                          /* nhd: [B][M][Hkv][d], paged or not */
                    size_t t = (size_t)b * M + key;
                    if (layout == 2) t = (size_t)page_of[t / PAGE] * PAGE + t % PAGE;
                    off = (t * HKV + h0) * CHUNKS + w;
                }
                r[2 * i] = __ldg(k + off);
                r[2 * i + 1] = __ldg(v + off);
            }
        }
#pragma unroll
        for (int i = 0; i < 2 * INFLIGHT; ++i) acc ^= r[i].x ^ r[i].y ^ r[i].z ^ r[i].w;
    }
    if (acc == 0x12345678u) sink[cta] = acc;
}

int main(void)
{
    size_t n = (size_t)B * M * HKV * CHUNKS, bytes = n * 16;
    uint4 *k, *v; int *pages; unsigned *sink; char *flush;
    CK(cudaMalloc(&k, bytes)); CK(cudaMalloc(&v, bytes));
    CK(cudaMemset(k, 1, bytes)); CK(cudaMemset(v, 2, bytes));
    int npages = B * M / PAGE;
    int *h = (int *)malloc(npages * sizeof(int));
    for (int i = 0; i < npages; ++i) h[i] = i;
    srand(38);
    for (int i = npages - 1; i > 0; --i) { int j = rand() % (i + 1), t = h[i]; h[i] = h[j]; h[j] = t; }
    CK(cudaMalloc(&pages, npages * sizeof(int)));
    CK(cudaMemcpy(pages, h, npages * sizeof(int), cudaMemcpyHostToDevice));
    CK(cudaMalloc(&sink, 4096)); CK(cudaMalloc(&flush, 256 << 20));
    cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
    struct { const char *name; int layout, g; } pat[] = {
        {"hnd", 0, 1}, {"nhd g=1", 1, 1}, {"nhd g=2", 1, 2}, {"nhd g=4", 1, 4},
        {"nhd g=8", 1, 8}, {"nhd-pages g=1", 2, 1}};
    int np = sizeof pat / sizeof pat[0], reps = 5, launches = 50;
    float best[16] = {0}, med[16][8];
    printf("pattern,GB/s (median of %d passes, %d launches each, L2 flushed before each pass)\n", reps, launches);
    for (int rep = 0; rep < reps; ++rep)
        for (int p = 0; p < np; ++p) {              /* patterns interleaved, pass by pass */
            CK(cudaMemset(flush, rep, 256 << 20));
            CK(cudaEventRecord(e0));
            for (int i = 0; i < launches; ++i)
                read_kernel<<<B * HKV, THREADS>>>(k, v, pages, pat[p].layout, pat[p].g, sink);
            CK(cudaGetLastError());
            CK(cudaEventRecord(e1)); CK(cudaEventSynchronize(e1));
            float ms; CK(cudaEventElapsedTime(&ms, e0, e1));
            med[p][rep] = 2.0f * bytes / (ms / launches * 1e-3f) / 1e9f;
        }
    for (int p = 0; p < np; ++p) {
        for (int i = 0; i < reps; ++i)                 /* sort the passes */
            for (int j = i + 1; j < reps; ++j)
                if (med[p][j] < med[p][i]) { float t = med[p][i]; med[p][i] = med[p][j]; med[p][j] = t; }
        best[p] = med[p][reps / 2];
        printf("%s,%.0f\n", pat[p].name, best[p]);
    }
    for (int p = 1; p < np; ++p) printf("%s over hnd: %.3f of the bandwidth\n", pat[p].name, best[p] / best[0]);
    return 0;
}
