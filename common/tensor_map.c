/* Tensor maps (tensor_map.h). cuTensorMapEncodeTiled is a driver-API call: it is looked up at run
 * time through the runtime, so that no binary links libcuda (which a machine without a GPU lacks). */
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>
#include "tensor_map.h"

const char *tensor_map_3d(CUtensorMap *map, const void *base, attn_dtype dtype, int cols, int rows, int planes,
                          int box_rows)
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
    const cuuint64_t dims[3] = {(cuuint64_t)cols, (cuuint64_t)rows, (cuuint64_t)planes};
    const cuuint64_t strides[2] = {(cuuint64_t)cols * 2, (cuuint64_t)cols * rows * 2};   /* bytes, dims 1 and 2 */
    const cuuint32_t box[3] = {64, (cuuint32_t)box_rows, 1}, step[3] = {1, 1, 1};
    const CUresult r = encode(map, dtype == ATTN_BF16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 3,
                              (void *)base, dims, strides, box, step, CU_TENSOR_MAP_INTERLEAVE_NONE,
                              CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                              CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    return r == CUDA_SUCCESS ? NULL : "cuTensorMapEncodeTiled refused the tensor (its address or row stride "
                                      "is not 16-byte aligned, or a box is too large)";
}
