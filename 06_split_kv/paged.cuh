/* Rung 06 on a paged KV cache (--page-size P; the layout in common/attn.h, the block table and the
 * pools built by common/pages.c). Compiled into split_kv.cu's translation unit: the split kernel's
 * PAGED instantiation calls these; its contiguous one never does.
 *
 * Key t of request b, KV head h, is at pool + ((table[b][t / P] * P + t % P) * Hkv + h) * d. The
 * split kernel loads 64-key tiles that start at a multiple of 64 keys (its KV blocks are multiples
 * of 64), so a tile starts at position pos0 = key0 % P of its first page, a multiple of 16, and
 * spans at most SK_PAGE_SLICE = 4 pages (P = 16). Each tile's slice of the block table (the
 * physical pages of its keys) is fetched a tile ahead into shared memory, one entry per thread of
 * the first SK_PAGE_SLICE, so the table's latency hides behind a tile of math.
 *
 * Two ways to load a tile (load_kv_paged):
 *   in one page (pos0 + 64 <= P: every tile when P is a multiple of 64): one base address, and
 *     each thread's rows a constant step apart -- Hkv * d elements per key, not d as in the
 *     contiguous [B,Hkv,M,d] layout;
 *   across pages (P = 16, 32, and the tiles of P = 48, 80, ... that straddle a page): each row
 *     finds its page in the slice. A thread's rows are R = 128 / (D / 8) apart (4 in the tile of
 *     D = 256, 8 at 128, 16 at 64), R <= 16 <= P, so its position in the page wraps at most once a
 *     row.
 * Any storage type T (only bytes move) and, with PAD, rows of d < D elements (row_stride = Hkv * d):
 * a thread whose chunk column lies past d copies nothing and zero-fills its chunks, as load_tile's
 * PAD does. */
#ifndef SK_PAGED_CUH
#define SK_PAGED_CUH

#define SK_PAGE_SLICE (SK_TILE / ATTN_PAGE_STEP)   /* pages one 64-key tile may span */

/* The paged cache as the split kernel reads it (attn_args): unused by the contiguous instantiation. */
typedef struct sk_pages {
    const int *table;         /* [B][max_pages], int32 */
    int P, max_pages;
} sk_pages;

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

/* The tile that starts at key0 (relative to the request) from its slice in shared memory. */
template <int D, bool PAD, typename T>
static __device__ __forceinline__ void sk_load_kv_paged(T *st, const T *k_head, const T *v_head, size_t row_stride,
                                                        const int *slice, int P, int key0, int valid_rows, int d)
{
    load_kv_paged<D, PAD>(st, k_head, v_head, row_stride, *reinterpret_cast<const int4 *>(slice), P, key0 % P, valid_rows, d);
}

#endif
