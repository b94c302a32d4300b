/* execute returns an outputs array (one valid output) with outputsCount = param `count`
   (default 0): the array must be released, and nothing in it read. */
#include "counting.h"

DLL_PUBLIC int execute(const struct CustomNodeTensor* inputs, int inputsCount,
                       struct CustomNodeTensor** outputs, int* outputsCount,
                       const struct CustomNodeParam* params, int paramsCount, void* manager) {
  (void)inputs;
  (void)inputsCount;
  *outputs = counted_outputs(1, manager);
  (*outputs)[0].name = "output_numbers";
  *outputsCount = int_param(params, paramsCount, "count", 0);
  return 0;
}
