/* Tensor maps (tensor_map.h). cuTensorMapEncodeTiled is a driver-API call: it is looked up at run
 * time through the runtime, so that no binary links libcuda (which a machine without a GPU lacks). */
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>
#include <string.h>
#include "tensor_map.h"

/* A [planes][rows][cols] tensor of `esize`-byte elements, boxes of box_cols x box_rows of one plane,
 * swizzled by the box's row of bytes (128 or 64). */
static const char *encode_3d(CUtensorMap *map, const void *base, CUtensorMapDataType type, int esize, int cols,
                             int rows, int planes, int box_cols, int box_rows)
{
    static PFN_cuTensorMapEncodeTiled_v12000 encode;
    if (!encode) {
        enum cudaDriverEntryPointQueryResult found;
        if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", (void **)&encode, 12000, cudaEnableDefault,
                                             &found) != cudaSuccess || found != cudaDriverEntryPointSuccess || !encode) {
            encode = NULL;
            return "the driver has no cuTensorMapEncodeTiled (CUDA 12.0 or newer is needed)";
        }
    }
    const int row_bytes = box_cols * esize;
    if (row_bytes != 128 && row_bytes != 64) return "tensor map: a box row must be 64 or 128 bytes (the swizzle's span)";
    const cuuint64_t dims[3] = {(cuuint64_t)cols, (cuuint64_t)rows, (cuuint64_t)planes};
    const cuuint64_t strides[2] = {(cuuint64_t)cols * esize, (cuuint64_t)cols * rows * esize};   /* bytes, dims 1 and 2 */
    const cuuint32_t box[3] = {(cuuint32_t)box_cols, (cuuint32_t)box_rows, 1}, step[3] = {1, 1, 1};
    const CUresult r = encode(map, type, 3, (void *)base, dims, strides, box, step, CU_TENSOR_MAP_INTERLEAVE_NONE,
                              row_bytes == 128 ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_64B,
                              CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    return r == CUDA_SUCCESS ? NULL : "cuTensorMapEncodeTiled refused the tensor (its address or row stride "
                                      "is not 16-byte aligned, or a box is too large)";
}

const char *tensor_map_3d(CUtensorMap *map, const void *base, attn_dtype dtype, int cols, int rows, int planes,
                          int box_rows)
{
    return encode_3d(map, base, dtype == ATTN_BF16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
                     2, cols, rows, planes, 64, box_rows);
}

const char *tensor_map_3d_u8(CUtensorMap *map, const void *base, int cols, int rows, int planes, int box_cols,
                             int box_rows)
{
    return encode_3d(map, base, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, cols, rows, planes, box_cols, box_rows);
}

int tensor_map_cache_hit(tensor_map_cache *c, const void *key, size_t len)
{
    if (len > sizeof c->key) return c->valid = 0;   /* too long a key: never cached */
    if (c->valid && memcmp(c->key, key, len) == 0) return 1;
    memset(c->key, 0, sizeof c->key);
    memcpy(c->key, key, len);
    c->valid = 1;
    return 0;
}
