/* Tensor maps for the tensor-memory accelerator (rung 07): built once on the host, passed to a
 * kernel by value (__grid_constant__), read by cp.async.bulk.tensor (common/hopper.cuh). */
#ifndef TENSOR_MAP_H
#define TENSOR_MAP_H

#include <stddef.h>
#include <cuda.h>
#include "attn.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A [planes][rows][cols] tensor of 16-bit elements at base (row-major, contiguous), read in boxes
 * of box_rows x 64 columns (128 bytes, the widest 128B-swizzled box) of one plane; elements past
 * rows or cols read as zeros. NULL, or a message naming what the driver refused. (ATTN_E4M3 is
 * float16 here: the FP8 step's O.) */
const char *tensor_map_3d(CUtensorMap *map, const void *base, attn_dtype dtype, int cols, int rows, int planes,
                          int box_rows);

/* The same for bytes (the FP8 step's e4m3 tensors), in boxes of box_rows x box_cols, box_cols 128
 * (128B swizzle) or 64 (64B swizzle: a row of 64 bytes). */
const char *tensor_map_3d_u8(CUtensorMap *map, const void *base, int cols, int rows, int planes, int box_cols,
                             int box_rows);

/* Up to four tensor maps, kept while what they were built from stays the same, so that no host work
 * sits between a rung's timing events. tensor_map_cache_hit: 1 if key (the buffers and sizes, len
 * bytes, compared byte by byte: give it no padding) is what the maps were built from; else 0, and
 * the key is remembered for the maps the caller builds now (after a failed build: valid = 0). */
typedef struct tensor_map_cache {
    unsigned char key[128];
    int valid;
    CUtensorMap m[4];
} tensor_map_cache;
int tensor_map_cache_hit(tensor_map_cache *c, const void *key, size_t len);

#ifdef __cplusplus
}
#endif
#endif
