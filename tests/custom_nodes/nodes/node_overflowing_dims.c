/*
 * One output whose dims are too large for any buffer, with 16 bytes of data and a dataBytes
 * that a product wrapping around 2^64 would match. Param `variant`:
 *   elements  UINT8 (2^32, 2^32): the element count wraps to 0; dataBytes 0
 *   bytes     FP32 (2^62, 1):     the byte count wraps to 0; dataBytes 0
 *   signed    UINT8 (2^63, 0):    0 elements, but a dim no signed shape holds; dataBytes 0
 */
#include "counting.h"

DLL_PUBLIC int execute(const struct CustomNodeTensor* inputs, int inputsCount,
                       struct CustomNodeTensor** outputs, int* outputsCount,
                       const struct CustomNodeParam* params, int paramsCount, void* manager) {
  (void)inputs;
  (void)inputsCount;
  const char* variant = find_param(params, paramsCount, "variant");
  if (variant == NULL) {
    return 1;
  }
  *outputsCount = 1;
  *outputs = counted_outputs(1, manager);
  struct CustomNodeTensor* output = &(*outputs)[0];
  fill_output(output, "output_numbers", U8, 1, 4, 4, manager);
  output->dataBytes = 0;
  if (strcmp(variant, "elements") == 0) {
    output->dims[0] = 1ULL << 32;
    output->dims[1] = 1ULL << 32;
  } else if (strcmp(variant, "bytes") == 0) {
    output->precision = FP32;
    output->dims[0] = 1ULL << 62;
    output->dims[1] = 1;
  } else {
    output->dims[0] = 1ULL << 63;
    output->dims[1] = 0;
  }
  return 0;
}
