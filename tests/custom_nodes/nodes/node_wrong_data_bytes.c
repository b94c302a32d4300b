/* One FP32 [1, 10] output (40 bytes of data) whose dataBytes is 40 + param `delta`. */
#include "counting.h"

DLL_PUBLIC int execute(const struct CustomNodeTensor* inputs, int inputsCount,
                       struct CustomNodeTensor** outputs, int* outputsCount,
                       const struct CustomNodeParam* params, int paramsCount, void* manager) {
  (void)inputs;
  (void)inputsCount;
  *outputsCount = 1;
  *outputs = counted_outputs(1, manager);
  fill_output(&(*outputs)[0], "output_numbers", FP32, sizeof(float), 1, 10, manager);
  (*outputs)[0].dataBytes += (uint64_t)(int64_t)int_param(params, paramsCount, "delta", 0);
  return 0;
}
