/* One valid FP32 [1, 10] output without a name. */
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
  fill_output(&(*outputs)[0], NULL, FP32, sizeof(float), 1, 10, manager);
  return 0;
}
