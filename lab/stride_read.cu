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
 *   nhd-pages  as nhd, but the keys in pages of P keys ([page][P][Hkv][d]) in a seeded random
 *              order, as the driver builds them (P = 16 and 64); a CTA reads its slice of the block
 *              table into shared memory first, as the kernel keeps it near
 *   hnd-pages  pages head-major ([page][Hkv][P][d], FlashInfer's "HND"), in the same random order
 *   (P = 256, and P = 64 with the pages in order: how much is the order's, how much the table's)
 *
 * Build and run: nvcc -O3 -arch=sm_90 -o build/bin/stride_read lab/stride_read.cu && build/bin/stride_read */
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); exit(1); } } while (0)

enum { B = 8, HKV = 32, M = 4096, ROW = 192, CHUNKS = ROW / 16, THREADS = 256, INFLIGHT = 8 };

/* One CTA: request b, heads h0 .. h0 + g - 1, keys k0 .. k0 + nk - 1. A key's g rows are one piece of
 * g * 192 bytes; the CTA's pieces are read in 16-byte chunks, INFLIGHT loads a thread before any is
 * used. The sum keeps the loads alive. */
__global__ void read_kernel(const uint4 *k, const uint4 *v, const int *page_of, int P, int layout, int g,
                            unsigned *sink)
{
    int cta = blockIdx.x, groups = HKV / g;
    int b = cta / (groups * g), rest = cta % (groups * g);
    int hg = rest / g, slice = rest % g;
    int nk = M / g, k0 = slice * nk, h0 = hg * g;
    int per_key = g * CHUNKS, total = nk * per_key;
    __shared__ int s_page[M / 16];                /* the CTA's slice of the block table, read once */
    if (layout >= 2)
        for (int i = threadIdx.x; i < nk / P; i += THREADS) s_page[i] = page_of[((size_t)b * M + k0) / P + i];
    __syncthreads();
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
                } else if (layout == 3) {                         /* hnd-pages: [page][Hkv][P][d] */
                    int h = h0 + w / CHUNKS, kk = key - k0;
                    off = (((size_t)s_page[kk / P] * HKV + h) * P + kk % P) * CHUNKS + w % CHUNKS;
                } else {                                          /* nhd: [B][M][Hkv][d], paged or not */
                    size_t t = (size_t)b * M + key;
                    if (layout == 2) t = (size_t)s_page[(key - k0) / P] * P + (key - k0) % P;
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
    /* a random order for pages of 16, 64 and 256 keys, and pages of 64 in order (the table the
     * identity: the paged address arithmetic over the unpaged layout) */
    int npages = B * M / 16, *pages16, *pages64, *pages256, *pages64_seq;
    int *h = (int *)malloc(npages * sizeof(int));
    srand(38);
    for (int P = 16; P <= 256; P *= 4) {
        int np_ = B * M / P;
        for (int i = 0; i < np_; ++i) h[i] = i;
        if (P == 64) {
            CK(cudaMalloc(&pages64_seq, np_ * sizeof(int)));
            CK(cudaMemcpy(pages64_seq, h, np_ * sizeof(int), cudaMemcpyHostToDevice));
        }
        for (int i = np_ - 1; i > 0; --i) { int j = rand() % (i + 1), t = h[i]; h[i] = h[j]; h[j] = t; }
        CK(cudaMalloc(&pages, np_ * sizeof(int)));
        CK(cudaMemcpy(pages, h, np_ * sizeof(int), cudaMemcpyHostToDevice));
        if (P == 16) pages16 = pages; else if (P == 64) pages64 = pages; else pages256 = pages;
    }
    CK(cudaMalloc(&sink, 4096)); CK(cudaMalloc(&flush, 256 << 20));
    cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
    struct { const char *name; int layout, g, P; } pat[] = {
        {"hnd", 0, 1, 0}, {"nhd g=1", 1, 1, 0}, {"nhd g=2", 1, 2, 0}, {"nhd g=4", 1, 4, 0},
        {"nhd g=8", 1, 8, 0}, {"nhd-pages P=64 g=1", 2, 1, 64}, {"nhd-pages P=64 g=2", 2, 2, 64},
        {"nhd-pages P=64 g=4", 2, 4, 64}, {"nhd-pages P=16 g=1", 2, 1, 16}, {"nhd-pages P=16 g=2", 2, 2, 16},
        {"hnd-pages P=64", 3, 1, 64}, {"hnd-pages P=16", 3, 1, 16},
        {"nhd-pages P=256 g=1", 2, 1, 256}, {"hnd-pages P=256", 3, 1, 256},
        {"nhd-pages P=64 in order g=1", 2, 1, -64}, {"hnd-pages P=64 in order", 3, 1, -64}};
    int np = sizeof pat / sizeof pat[0], reps = 5, launches = 50;
    float best[32] = {0}, med[32][8];
    printf("pattern,GB/s (median of %d passes, %d launches each, L2 flushed before each pass)\n", reps, launches);
    for (int rep = 0; rep < reps; ++rep)
        for (int p = 0; p < np; ++p) {              /* patterns interleaved, pass by pass */
            CK(cudaMemset(flush, rep, 256 << 20));
            CK(cudaEventRecord(e0));
            for (int i = 0; i < launches; ++i)
                read_kernel<<<B * HKV, THREADS>>>(k, v, pat[p].P == 16 ? pages16 : pat[p].P == 256 ? pages256 :
                                                  pat[p].P == -64 ? pages64_seq : pages64, pat[p].P ? abs(pat[p].P) : 64,
                                                  pat[p].layout, pat[p].g, sink);
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
