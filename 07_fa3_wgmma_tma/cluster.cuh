/* Variant 07g: K and V shared by a cluster of two blocks. 07f + one change in where K and V come
 * from: two blocks that work on neighbouring query blocks of one head (not causal: the same keys)
 * run as a thread-block cluster, and each loads half of every K and V tile into both blocks'
 * shared memory with one multicast TMA copy. L2 hands each tile to the SMs once per pair instead of
 * once per block.
 *
 * Why it can pay: a 128-row work tile reads each K/V tile of Bc x d halves (2 x 2 Bc d bytes) for
 * 4 x 128 x Bc x d FLOPs: 128 FLOPs per byte from L2 whatever d is. At 700 TFLOP/s that is about
 * 5.5 TB/s of L2 reads across the SMs, as much as the H100's L2 delivers; FlashAttention-3 uses a
 * cluster of two at d = 128 and 256 when not causal for that reason. The cost: a stage can be
 * refilled only when the consumers of both blocks are done with it, so the slower block holds the
 * faster back, and the two blocks must walk the same work tiles in step.
 *
 * - Schedule (persistent.cuh, f3_tile_of<2>): work tiles come in pairs, query blocks 2q and 2q + 1
 *   of one head; a cluster walks the pairs as 07e's blocks walk the tiles (pair c, c + G, ...; G
 *   clusters). When a head has an odd number of query blocks, the last pair's second block works on
 *   rows past N: TMA reads them as zeros and does not write them back, and no LSE is written.
 * - Loads (f3_load_part): the producer of the block of rank r loads rows [r Bc/2, (r+1) Bc/2) of each
 *   K and V tile with one multicast copy per 64 columns (tensor maps of Bc/2-row boxes); the bytes
 *   land at the same place in both blocks and complete on both blocks' full barrier, which each
 *   producer announces with the whole tile's bytes.
 * - Release (f3_peers_done): before refilling a stage, a producer waits for its own consumers (the
 *   empty barrier, as before), then arrives on the other block's "peers" barrier of that stage and
 *   waits on its own: both blocks are done with it. The producer, not the consumers, tells the other
 *   block, so that a stage holding a staged O (d = 256 stages O over V) is handed on only after the
 *   producer has stored that O.
 * - Both blocks' barriers are set up before either copies (a cluster barrier after the set-up), and
 *   neither leaves while the other may still arrive on it (one at the end).
 *
 * Compiled into fa3.cu's translation unit (the skeleton is warp_specialized.cuh's). */

/* The other blocks of the cluster are done with stage i % STAGES too: this producer tells each of
 * them it is, then waits for all of them to have told it. */
template <class T, int CL>
static __device__ __forceinline__ void f3_peers_done(uint64_t *peers, uint32_t i)
{
    constexpr int S = T::STAGES;
    if (i < S) return;                          /* the stage's first use */
    if (threadIdx.x == 0) {
        const uint32_t me = cluster_rank();
        for (uint32_t r = 0; r < CL; r++)
            if (r != me) mbar_arrive_cluster(&peers[i % S], r);
    }
    mbar_wait(&peers[i % S], (i / S - 1) & 1);
}

/* This block's part of K or V tile j: Bc / CL rows, from row (rank) Bc / CL of the tile, into every
 * block of the cluster; the whole tile's bytes are announced on this block's barrier, since every
 * block's part completes on it. */
template <class T, int CL>
static __device__ __forceinline__ void f3_load_part(__half *dst, const CUtensorMap *map, uint64_t *bar, int j, int kvp)
{
    constexpr int ROWS = T::BC / CL;
    static_assert(ROWS % 8 == 0, "a part starts on a 1024-byte swizzle atom");
    const int r = (int)cluster_rank();
    mbar_arrive_expect_tx(bar, T::kv_bytes);
    for (int ch = 0; ch < T::CH; ch++)
        tma_load_3d_multicast(dst + ch * T::BC * 64 + r * ROWS * 64, map, bar, ch * 64, j * T::BC + r * ROWS, kvp,
                              (uint16_t)((1u << CL) - 1));
}
