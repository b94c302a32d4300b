/* getInputsInfo and getOutputsInfo return 3. */
#define NODE_OWN_METADATA
#include "counting.h"

static int metadata(struct CustomNodeTensorInfo** info, int* infoCount,
                    const struct CustomNodeParam* params, int paramsCount, void* manager) {
  (void)params;
  (void)paramsCount;
  (void)info;
  (void)infoCount;
  (void)manager;
  return 3;
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
