/* Five outputs: valid, unnamed, UNSPECIFIED precision, NULL data, valid. The server must
   report the first error (the missing name) and still release every pointer. */
#include "counting.h"

DLL_PUBLIC int execute(const struct CustomNodeTensor* inputs, int inputsCount,
                       struct CustomNodeTensor** outputs, int* outputsCount,
                       const struct CustomNodeParam* params, int paramsCount, void* manager) {
  (void)inputs;
  (void)inputsCount;
  (void)params;
  (void)paramsCount;
  *outputsCount = 5;
  *outputs = counted_outputs(5, manager);
  struct CustomNodeTensor* out = *outputs;
  fill_output(&out[0], "first", FP32, sizeof(float), 1, 10, manager);
  fill_output(&out[1], NULL, FP32, sizeof(float), 1, 10, manager);
  fill_output(&out[2], "no_precision", FP32, sizeof(float), 1, 10, manager);
  out[2].precision = UNSPECIFIED;
  fill_output(&out[3], "no_data", FP32, sizeof(float), 1, 10, manager);
  release(out[3].data, manager);
  out[3].data = NULL;
  fill_output(&out[4], "last", FP32, sizeof(float), 1, 10, manager);
  return 0;
}
