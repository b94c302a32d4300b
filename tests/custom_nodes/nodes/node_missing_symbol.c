/* Exports five of the six ABI functions: `release` is missing, so loading must fail. */
#include <stddef.h>

#include "custom_node_interface.h"

DLL_PUBLIC int initialize(void** manager, const struct CustomNodeParam* params, int paramsCount) {
  (void)manager;
  (void)params;
  (void)paramsCount;
  return 0;
}

DLL_PUBLIC int deinitialize(void* manager) {
  (void)manager;
  return 0;
}

DLL_PUBLIC int execute(const struct CustomNodeTensor* inputs, int inputsCount,
                       struct CustomNodeTensor** outputs, int* outputsCount,
                       const struct CustomNodeParam* params, int paramsCount, void* manager) {
  (void)inputs;
  (void)inputsCount;
  (void)params;
  (void)paramsCount;
  (void)manager;
  *outputs = NULL;
  *outputsCount = 0;
  return 1;
}

DLL_PUBLIC int getInputsInfo(struct CustomNodeTensorInfo** info, int* infoCount,
                             const struct CustomNodeParam* params, int paramsCount, void* manager) {
  (void)params;
  (void)paramsCount;
  (void)manager;
  *info = NULL;
  *infoCount = 0;
  return 1;
}

DLL_PUBLIC int getOutputsInfo(struct CustomNodeTensorInfo** info, int* infoCount,
                              const struct CustomNodeParam* params, int paramsCount,
                              void* manager) {
  return getInputsInfo(info, infoCount, params, paramsCount, manager);
}
