/* Evict the L2 before a timed launch, and leave it clean.
 *
 * Writing a buffer twice the L2's size evicts whatever a kernel's inputs left there, but it leaves
 * the L2 full of dirty lines (on the H100, about 50 MB). The timed kernel then pays for their
 * write-back to HBM: every line it brings in first pushes a dirty one out, and the write traffic
 * shares the HBM with its reads. Measured on the H100 (results/lab/h100-flush.csv): 7-8 us on a 67 MB
 * decode, for every kernel alike, a cost that belongs to the flush, not to the kernel.
 *
 * So the flush writes the buffer, then reads all of it back: the reads evict the dirty lines
 * (their write-back happens here, untimed) and leave the L2 holding clean, unrelated lines, the
 * state a kernel meets after a previous kernel that only read. --flush write keeps the write
 * alone, for comparison. */
#include "check_cuda.h"
extern "C" {
#include "harness.h"
}

const char *l2_flush_name(int mode) { return mode == FLUSH_WRITE ? "write" : "write+read"; }

const char *l2_flush(void *buf, size_t bytes, int mode, cudaStream_t st)
{
    RUNG_CUDA(cudaMemsetAsync(buf, 0x5a, bytes, st));
    if (mode == FLUSH_WRITE) return NULL;
    /* the read-back is the read floor's kernel on the buffer alone: every SM reading at full rate */
    return read_floor_launch(buf, bytes, NULL, 0, st);
}
