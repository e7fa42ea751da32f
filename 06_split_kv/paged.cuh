/* Rung 06's K/V loaders: the policy the split kernel is templated on (its Loader parameter) to
 * bring a 64-key tile of K and V into a pipeline stage. kv_contiguous reads the [B, Hkv, M, d]
 * layout; kv_paged reads a paged KV cache (--page-size P; the layout in common/attn.h, the block
 * table and the pools built by common/pages.c). A loader is a struct (the segment's addresses) and
 * five functions, which the kernel calls per segment:
 *   begin  before the kernel reads the request's length (kv_paged: the first reads of the block
 *          table, whose latency then overlaps the length's);
 *   at     the segment's K and V in this KV head;
 *   start  after Q's load is issued (kv_paged: the first tiles' slices into shared memory);
 *   load   tile j into a stage, with rows past the segment's n_keys zero-filled;
 *   ask    the int of a later tile that a thread keeps in the loader's shared memory (SLICE ints
 *          a stage; kv_paged: an entry of the tile's slice of the table; kv_contiguous has none).
 * Any storage type T (only bytes move) and, with PAD, rows of d < D elements: a thread whose chunk
 * column lies past d copies nothing and zero-fills its chunks, as load_tile's PAD does.
 *
 * The paged layout: key t of request b, KV head h, is at pool + ((table[b][t / P] * P + t % P) *
 * Hkv + h) * d. The split kernel loads 64-key tiles that start at a multiple of 64 keys (its KV
 * blocks are multiples of 64), so a tile starts at position pos0 = key0 % P of its first page, a
 * multiple of 16, and spans at most SK_PAGE_SLICE = 4 pages (P = 16). Each tile's slice of the
 * block table (the physical pages of its keys) is fetched a tile ahead into shared memory, one
 * entry per thread of the first SK_PAGE_SLICE, so the table's latency hides behind a tile of math.
 * Two ways to load a tile (load_kv_paged):
 *   in one page (pos0 + 64 <= P: every tile when P is a multiple of 64): one base address, and
 *     each thread's rows a constant step apart -- Hkv * d elements per key, not d as in the
 *     contiguous [B,Hkv,M,d] layout;
 *   across pages (P = 16, 32, and the tiles of P = 48, 80, ... that straddle a page): each row
 *     finds its page in the slice. A thread's rows are R = 128 / (D / 8) apart (4 in the tile of
 *     D = 256, 8 at 128, 16 at 64), R <= 16 <= P, so its position in the page wraps at most once a
 *     row. The tile of 96 (rows padded to 104 elements, no swizzle) has a loader of its own,
 *     load_kv_paged_pitched: 12 chunks a row do not divide 128 threads.
 * The two-heads tile (split_kv.cuh, PAIR) reads a paged cache through kv_paged at D = 192: in a page
 * KV heads 2h and 2h + 1 of a key are one row of 192 elements at (2h) * d, keys Hkv * d apart, which
 * is kv_paged's view of Hkv / 2 heads of 192. */
#ifndef SK_PAGED_CUH
#define SK_PAGED_CUH

#include "split_kv.cuh"

#define SK_PAGE_SLICE (SK_TILE / ATTN_PAGE_STEP)   /* pages one 64-key tile may span */

/* K and V contiguous, [B, Hkv, M, d]: a tile is two load_tile calls (common/tiles.cuh). The
 * functions that only read the struct take it by value (so do kv_paged's). */
template <typename T, int D, bool PAD>
struct kv_contiguous {
    static constexpr int SLICE = 0;
    const T *k, *v;           /* the segment's first key of this KV head */

    static __device__ __forceinline__ void begin(kv_contiguous &, const sk_params &, const sk_pages &, int, int, int) {}
    static __device__ __forceinline__ void at(kv_contiguous &kv, const sk_params &p, const sk_pages &, int b, int kvh, int k_lo, int dg)
    {
        kv.k = (const T *)p.k + (((size_t)b * p.Hkv + kvh) * p.M + k_lo) * dg;
        kv.v = (const T *)p.v + (((size_t)b * p.Hkv + kvh) * p.M + k_lo) * dg;
    }
    static __device__ __forceinline__ void start(const kv_contiguous, int *, int) {}
    static __device__ __forceinline__ void load(const kv_contiguous kv, T *st, const int *, int j, int, int n_keys, int d)
    {
        const int dg = PAD ? d : D;   /* the row length in memory */
        sk_load_tile<D, SK_TILE, PAD>(st, kv.k + (size_t)j * SK_TILE * dg, n_keys - j * SK_TILE, d);
        sk_load_tile<D, SK_TILE, PAD>(st + SK_TILE * sk_layout<D>::PITCH, kv.v + (size_t)j * SK_TILE * dg, n_keys - j * SK_TILE, d);
    }
    static __device__ __forceinline__ int ask(const kv_contiguous, int) { return 0; }   /* SLICE = 0: never asked */
};

/* Entry e of the slice of a tile that starts at key0: the physical page of logical page
 * key0 / P + e of the request whose table row is bt; past the table row, 0. Past the request's
 * pages the table holds -1, which load_kv_paged reads as page 0 (sk_page_ok): such entries serve
 * only rows past the request's last key, which are never read (cp.async src-size 0), so any page
 * of the pool gives a harmless address. (Guarding with the request's own page count instead would
 * make this load wait for its length, seqlens_k, first; and clamping here, right after the load,
 * would make the thread wait for the load.) */
static __device__ __forceinline__ int sk_page_entry(const int *bt, int max_pages, int key0, int P, int e)
{
    const int lp = key0 / P + e;
    return lp < max_pages ? __ldg(bt + lp) : 0;
}
static __device__ __forceinline__ int sk_page_ok(int page) { return max(page, 0); }

/* The XOR that gives step k's destination its swizzle, for steps R rows apart (load_kv_paged). */
template <int R>
static __device__ __forceinline__ uint32_t sk_flip(int k) { return R == 4 && (k & 1) ? 64u : 0u; }

/* The K and V tiles of the 64 keys that start at position pos0 of the tile's first page (0 <= pos0
 * < P, pos0 % 16 == 0), into a stage of swizzled shared memory (K at st, V at st + SK_TILE * D), as
 * two calls of load_tile (common/tiles.cuh) would: the same thread -> (row, 16-byte chunk) map and
 * swizzle, rows >= valid_rows (and with PAD the chunks at columns >= d) zero-filled and not read.
 * `slice` holds the physical pages of the tile's keys; k_head and v_head are the pools plus this KV
 * head's offset (h * d); keys are row_stride = Hkv * d elements apart within a page. K and V share
 * the page layout, so each row's address is worked out once for both. */
template <int D, bool PAD, typename T>
static __device__ __forceinline__ void load_kv_paged(T *st, const T *k_head, const T *v_head,
                                                     size_t row_stride, int4 slice, int P, int pos0, int valid_rows, int d)
{
    constexpr int CPR = D / 8;                 /* chunks per row */
    constexpr int R = SK_THREADS / CPR;        /* rows per step */
    constexpr int STEPS = SK_TILE / R;
    static_assert(SK_THREADS % CPR == 0 && SK_TILE % R == 0 && (R % 8 == 0 || R == 4), "tile loader shape (as load_tile's)");
    static_assert(R <= ATTN_PAGE_STEP && SK_PAGE_SLICE == 4, "a thread's position wraps at most once a row");
    static_assert(sizeof(T) == 2, "16-bit storage");
    const int r0 = threadIdx.x / CPR, c0 = threadIdx.x % CPR;
    const bool col_ok = !PAD || c0 * 8 < d;
    const uint32_t sk = smem_addr(st + tile_off<D, true>(r0, c0 * 8)), sv = sk + SK_TILE * D * 2;
    /* Row r0 + kR of the tile has the swizzle of r0 when R % 8 == 0. With R = 4 (D = 256: r0 < 4)
     * odd steps flip bit 2 of the row, hence bit 2 of the swizzled chunk: bit 6 of the byte address
     * (rows are 512 bytes, stages 8 KB-aligned), so the step is an add and an XOR (sk_flip). */
    k_head += c0 * 8;
    v_head += c0 * 8;
    if (pos0 + SK_TILE <= P) {                 /* the tile lies in one page: one base, constant steps */
        const size_t at = ((size_t)sk_page_ok(slice.x) * P + pos0 + r0) * row_stride;
#pragma unroll
        for (int k = 0; k < STEPS; k++) {
            const bool valid = col_ok && r0 + k * R < valid_rows;
            cp_async_16((sk + k * R * D * 2) ^ sk_flip<R>(k), k_head + at + (size_t)k * R * row_stride, valid);
            cp_async_16((sv + k * R * D * 2) ^ sk_flip<R>(k), v_head + at + (size_t)k * R * row_stride, valid);
        }
    } else {                                   /* each row finds its page; pos0 + r0 < P to start */
        int page = sk_page_ok(slice.x), pos = pos0 + r0;
#pragma unroll
        for (int k = 0; k < STEPS; k++) {
            const bool valid = col_ok && r0 + k * R < valid_rows;
            const size_t at = ((size_t)page * P + pos) * row_stride;
            cp_async_16((sk + k * R * D * 2) ^ sk_flip<R>(k), k_head + at, valid);
            cp_async_16((sv + k * R * D * 2) ^ sk_flip<R>(k), v_head + at, valid);
            pos += R;
            if (pos >= P) {                    /* the next page of the slice: shift it down */
                pos -= P;
                page = sk_page_ok(slice.y); slice.y = slice.z; slice.z = slice.w;
            }
        }
    }
}

/* load_kv_paged for the padded tiles (sk_layout: rows of D + 8 elements; D = 96, and 192 for the
 * two-heads tile), whose 12 or 24 chunks a row do not divide 128 threads. The first R * CPR threads
 * load, R rows a step (R = 8 at D = 96, 4 at 192: the largest power of two with R * CPR <= 128):
 * thread t takes chunk t % CPR of rows t / CPR + kR, so, as in load_kv_paged, its position in the
 * page moves by R a step and every thread crosses into the next page at the same step (P and pos0
 * are multiples of 16, and R divides 16): one compare a step, no divide, no per-row page. */
template <int D, bool PAD, typename T>
static __device__ __forceinline__ void load_kv_paged_pitched(T *st, const T *k_head, const T *v_head,
                                                             size_t row_stride, int4 slice, int P, int pos0, int valid_rows, int d)
{
    constexpr int CPR = D / 8, PITCH = sk_layout<D>::PITCH;
    constexpr int R = SK_THREADS / CPR >= 8 ? 8 : SK_THREADS / CPR >= 4 ? 4 : 2, STEPS = SK_TILE / R;
    static_assert(SK_TILE % R == 0 && R <= ATTN_PAGE_STEP && sizeof(T) == 2, "whole steps within a page, 16-bit storage");
    if (threadIdx.x >= R * CPR) return;
    const int r0 = threadIdx.x / CPR, c0 = threadIdx.x % CPR;
    const bool col_ok = !PAD || c0 * 8 < d;
    const uint32_t sk = smem_addr(st) + (uint32_t)(r0 * PITCH + c0 * 8) * 2, sv = sk + SK_TILE * PITCH * 2;
    k_head += c0 * 8;
    v_head += c0 * 8;
    int page = sk_page_ok(slice.x), pos = pos0 + r0;
#pragma unroll
    for (int k = 0; k < STEPS; k++) {
        const bool valid = col_ok && r0 + k * R < valid_rows;
        const size_t at = ((size_t)page * P + pos) * row_stride;
        cp_async_16(sk + k * R * PITCH * 2, k_head + at, valid);
        cp_async_16(sv + k * R * PITCH * 2, v_head + at, valid);
        pos += R;
        if (pos >= P) {                        /* the next page of the slice: shift it down */
            pos -= P;
            page = sk_page_ok(slice.y); slice.y = slice.z; slice.z = slice.w;
        }
    }
}

/* The tile that starts at key0 (relative to the request) from its slice in shared memory. */
template <int D, bool PAD, typename T>
static __device__ __forceinline__ void sk_load_kv_paged(T *st, const T *k_head, const T *v_head, size_t row_stride,
                                                        const int *slice, int P, int key0, int valid_rows, int d)
{
    const int4 sl = *reinterpret_cast<const int4 *>(slice);
    if constexpr (sk_layout<D>::SWZ) load_kv_paged<D, PAD>(st, k_head, v_head, row_stride, sl, P, key0 % P, valid_rows, d);
    else load_kv_paged_pitched<D, PAD>(st, k_head, v_head, row_stride, sl, P, key0 % P, valid_rows, d);
}

/* K and V in pages, through the block table: each tile's slice of the table in shared memory
 * (SLICE ints a stage), fetched a tile ahead. */
template <typename T, int D, bool PAD>
struct kv_paged {
    static constexpr int SLICE = SK_PAGE_SLICE;
    const int *bt;            /* this request's row of the block table */
    const T *k, *v;           /* the pools plus this KV head's offset h * d */
    size_t row;               /* elements from one key to the next in a page: Hkv * d */
    int P, max_pages, k_lo;
    int first;                /* this thread's entry of the first slices (begin), kept by start */

    /* this request's row of the table, and the entries of the first `stages` tiles' slices (the
     * segment starts at KV block blk0), one a thread */
    static __device__ __forceinline__ void begin(kv_paged &kv, const sk_params &p, const sk_pages &pg, int b, int blk0, int stages)
    {
        kv.bt = pg.table + (size_t)b * pg.max_pages;
        kv.first = 0;
        if (threadIdx.x < stages * SLICE)
            kv.first = sk_page_entry(kv.bt, pg.max_pages, blk0 * p.blk + (threadIdx.x / SLICE) * SK_TILE, pg.P, threadIdx.x % SLICE);
    }
    static __device__ __forceinline__ void at(kv_paged &kv, const sk_params &p, const sk_pages &pg, int, int kvh, int k_lo, int dg)
    {
        kv.k = (const T *)p.k + (size_t)kvh * dg;
        kv.v = (const T *)p.v + (size_t)kvh * dg;
        kv.row = (size_t)p.Hkv * dg;
        kv.P = pg.P;
        kv.max_pages = pg.max_pages;
        kv.k_lo = k_lo;
    }
    /* the first slices in place; the loop fetches each later one a tile ahead */
    static __device__ __forceinline__ void start(const kv_paged kv, int *s_pg, int stages)
    {
        if (threadIdx.x < stages * SLICE) s_pg[threadIdx.x] = kv.first;
        __syncthreads();
    }
    /* tile j of the segment (n_keys keys) from its slice in shared memory */
    static __device__ __forceinline__ void load(const kv_paged kv, T *st, const int *s_pg, int j, int stages, int n_keys, int d)
    {
        sk_load_kv_paged<D, PAD>(st, kv.k, kv.v, kv.row, s_pg + (j % stages) * SLICE, kv.P, kv.k_lo + j * SK_TILE,
                                 n_keys - j * SK_TILE, d);
    }
    /* this thread's entry of the slice of the tile that starts at key0 */
    static __device__ __forceinline__ int ask(const kv_paged kv, int key0)
    {
        return sk_page_entry(kv.bt, kv.max_pages, key0, kv.P, threadIdx.x);
    }
};

#endif
