/* One output, valid but for its precision: param `precision` (default 0, UNSPECIFIED; other
   values outside the enum are as invalid). */
#include "counting.h"

DLL_PUBLIC int execute(const struct CustomNodeTensor* inputs, int inputsCount,
                       struct CustomNodeTensor** outputs, int* outputsCount,
                       const struct CustomNodeParam* params, int paramsCount, void* manager) {
  (void)inputs;
  (void)inputsCount;
  *outputsCount = 1;
  *outputs = counted_outputs(1, manager);
  fill_output(&(*outputs)[0], "output_numbers", FP32, sizeof(float), 1, 10, manager);
  const int precision = int_param(params, paramsCount, "precision", 0);
  memcpy(&(*outputs)[0].precision, &precision, sizeof(precision));
  return 0;
}
