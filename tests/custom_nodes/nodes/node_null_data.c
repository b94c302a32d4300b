/* One FP32 [1, 10] output whose data is NULL (dataBytes still says 40). */
#include "counting.h"

DLL_PUBLIC int execute(const struct CustomNodeTensor* inputs, int inputsCount,
                       struct CustomNodeTensor** outputs, int* outputsCount,
                       const struct CustomNodeParam* params, int paramsCount, void* manager) {
  (void)inputs;
  (void)inputsCount;
  (void)params;
  (void)paramsCount;
  *outputsCount = 1;
  *outputs = counted_outputs(1, manager);
  struct CustomNodeTensor* output = &(*outputs)[0];
  fill_output(output, "output_numbers", FP32, sizeof(float), 1, 10, manager);
  release(output->data, manager); /* given back by the library itself, so the counts balance */
  output->data = NULL;
  return 0;
}
