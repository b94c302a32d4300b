/* getInputsInfo and getOutputsInfo misbehave as param `mode` says:
 *   "fail"  - return 3;
 *   "null"  - succeed but leave *info NULL;
 *   "count" - return a one-entry info array with infoCount = param `count` (default 0),
 *             which the server must still release;
 *   "latin1" - return one entry whose name is Latin-1, not UTF-8 ("caf\xe9"). */
#define NODE_OWN_METADATA
#include "counting.h"

static int metadata(struct CustomNodeTensorInfo** info, int* infoCount,
                    const struct CustomNodeParam* params, int paramsCount, void* manager) {
  const char* mode = find_param(params, paramsCount, "mode");
  if (mode == NULL || strcmp(mode, "fail") == 0) {
    return 3;
  }
  if (strcmp(mode, "null") == 0) {
    *info = NULL;
    *infoCount = 1;
    return 0;
  }
  *info = (struct CustomNodeTensorInfo*)counted_malloc(sizeof(**info), manager);
  (*info)->name = strcmp(mode, "latin1") == 0 ? "caf\xe9" : "input_numbers";
  (*info)->dims = NULL;
  (*info)->dimsCount = 0;
  (*info)->precision = FP32;
  *infoCount = strcmp(mode, "latin1") == 0 ? 1 : int_param(params, paramsCount, "count", 0);
  return 0;
}

DLL_PUBLIC int getInputsInfo(struct CustomNodeTensorInfo** info, int* infoCount,
                             const struct CustomNodeParam* params, int paramsCount, void* manager) {
  return metadata(info, infoCount, params, paramsCount, manager);
}

DLL_PUBLIC int getOutputsInfo(struct CustomNodeTensorInfo** info, int* infoCount,
                              const struct CustomNodeParam* params, int paramsCount,
                              void* manager) {
  return metadata(info, infoCount, params, paramsCount, manager);
}

DLL_PUBLIC int execute(const struct CustomNodeTensor* inputs, int inputsCount,
                       struct CustomNodeTensor** outputs, int* outputsCount,
                       const struct CustomNodeParam* params, int paramsCount, void* manager) {
  (void)inputs;
  (void)inputsCount;
  (void)outputs;
  (void)outputsCount;
  (void)params;
  (void)paramsCount;
  (void)manager;
  return 1;
}
