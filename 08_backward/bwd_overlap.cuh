/* Rung 08, step d: 08c + overlap. Two changes to a consumer's loop (hopper_bwd.cu, h_consume with
 * its template bool OV), chosen by a clock count of a tile (08_backward/NOTES.md, "08d: the clock
 * count"):
 *
 *   1. dQ = dS K of tile i is issued right after the dS^T barrier, behind dV and dK (08c waited for
 *      those first), and left in flight: the stage goes back once dV and dK are done (wait_group 1),
 *      and the consumer goes on to tile i + 1. There it waits for dQ (wait_group 0) only when the
 *      next stage is in, issues S^T, stores dQ to shared memory and hands it to the dQ warp while
 *      S^T runs, then issues dP^T. 08c waited for dQ at once and stored it before the next tile's
 *      products were issued: the tensor cores idled through the dQ product's drain, the stores (with
 *      bank conflicts), the proxy fence, the barrier and the next issue. Now only the drain is left.
 *      After the last tile, dQ is waited for and stored alone.
 *
 *        08c:  [S dP] P dS [dV dK] | wait | [dQ] | wait | store dQ | [S dP] ...
 *        08d:  [S dP] P dS [dV dK] [dQ] | wait dV dK | wait dQ | [S'] store dQ [dP'] P' dS' ...
 *
 *      Why not leave dQ in flight under S^T and dP^T too (wait_group 2 after their issue)? Tried:
 *      ptxas (CUDA 13.0) then serialises the kernel's wgmma (C7514: non-wgmma instructions reading
 *      accumulators in flight), at d = 64 and 128, though the PTX reads dq only after the wait; it
 *      does not seem to follow a group across the loop's back edge through a wait_group that leaves
 *      two others running. A wait with nothing else in flight keeps its pipeline; the cost is one
 *      drain of the tensor pipe a tile. And dQ is stored under S^T alone, not under both products,
 *      so that dq's 32 registers (d = 128) are dead again before dP^T's arrive: 64 dK + 64 dV + 32
 *      S^T + 32 dQ at the peak, as 08c's 64 + 64 + 32 + 32 (S^T and dP^T).
 *
 *   2. dQ's float32 stores without bank conflicts. Rows are 4 D bytes apart, a multiple of 128, so
 *      a row's column col sits in bank col % 32 whatever the row; thread (g, c) holds the columns
 *      8 j + 2 c (+1) of rows g and g + 8, and 08c's store j wrote column 8 j + 2 c in all 8 rows g
 *      at once: 8 rows on the same 8 banks, 8 wavefronts for 256 bytes (2 would do). Here the rows
 *      are swizzled: column col of row r lies at col ^ 8 (r % 4), so store j of rows g = 0..3 hits
 *      the four different 8-bank groups of 32 columns, rows 4..7 the same four again: 2 wavefronts.
 *      The value a store writes is the same register in every lane; only its address depends on the
 *      row, so nothing is permuted in registers. The bulk reduce-add copies the buffer as it lies,
 *      so the float32 accumulator in global memory holds the same swizzled rows, and the convert
 *      kernel reads column col of query q at col ^ 8 (q % 4) (bwd_dq_convert's swz). q, not the
 *      row counted over all heads: N need not be a multiple of 4, while the tiles start at
 *      multiples of 64 queries. D is a multiple of 32 (64, 96, 128, 256), so a row's columns stay
 *      in the row.
 *
 * Compiled into hopper_bwd.cu's translation unit (it uses that file's named barriers). */

/* dQ (dq[4 j + e]: row 16 wq + g (+8 for e >= 2), column col0 + 8 j + 2 c (+1 for odd e)) into the
 * swizzled float32 rows of sdq, D floats a row: column col of row r at col ^ 8 (r % 4). */
template <int D, int BR>
static __device__ __forceinline__ void ov_store_dq(float *sdq, const float (&dq)[h_dq_part<D, BR>::QN / 2], int wq, int g,
                                                   int c, int cw)
{
    typedef h_dq_part<D, BR> P;
    constexpr int QN = P::QN;
    const int qn = P::cols(cw), r = g & 3;             /* row % 4: row0, 16 wq and 8 are multiples of 4 */
    float *row = sdq + (P::row0(cw) + 16 * wq + g) * D + P::col0(cw) + 2 * c;
    float *at[4];                                        /* j ^ r = (j & ~3) + ((j & 3) ^ r): four addresses, */
#pragma unroll                                           /* the rest constant offsets */
    for (int k = 0; k < 4; k++) at[k] = row + 8 * (k ^ r);
#pragma unroll
    for (int hi = 0; hi < 2; hi++)
#pragma unroll
        for (int j = 0; j < QN / 8; j++) {
            if (8 * j >= qn) break;                      /* qn is a multiple of 32: j ^ r < qn / 8 */
            *reinterpret_cast<float2 *>(at[j & 3] + 8 * (j & ~3) + 8 * hi * D) =
                make_float2(dq[4 * j + 2 * hi], dq[4 * j + 2 * hi + 1]);
        }
}

/* dq's values are dead (stored): the next dQ product overwrites them, its first k step not adding.
 * Said to the compiler by an empty statement that defines them, so that they are not kept live
 * through the tile as the product's inputs (at d = 128, 32 more registers at the tile's peak). */
template <int n>
static __device__ __forceinline__ void ov_dead(float (&d)[n])
{
#pragma unroll
    for (int i = 0; i < n; i++) asm volatile("" : "=f"(d[i]));
}

/* A tile's dQ, once waited for, to shared memory and the dQ warp: 08c's hand-off (h_dq_out: the
 * buffer free, the stores, the proxy fence, the arrival) with the stores above. */
template <int D, int BR>
static __device__ __forceinline__ void ov_dq_out(float *sdq, float (&dq)[h_dq_part<D, BR>::QN / 2], int wq, int g, int c,
                                                 int cw)
{
    bar_sync<H_DQ_EMPTY, H_DQ_SYNC>();
    ov_store_dq<D, BR>(sdq, dq, wq, g, c, cw);
    fence_proxy_async();
    bar_arrive<H_DQ_FULL, H_DQ_SYNC>();
}
