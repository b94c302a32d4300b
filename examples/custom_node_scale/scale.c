/* A custom node that multiplies an FP32 tensor of any shape by the "factor" param.
 * Build: see docs/custom_nodes.md. */
#include <stdlib.h>
#include <string.h>

#include "custom_node_interface.h"

static float factor_of(const struct CustomNodeParam* params, int count) {
  for (int i = 0; i < count; i++) {
    if (strcmp(params[i].key, "factor") == 0) return strtof(params[i].value, NULL);
  }
  return 1.0f;
}

int initialize(void** manager, const struct CustomNodeParam* params, int count) {
  (void)manager, (void)params, (void)count;
  return 0;
}

int deinitialize(void* manager) {
  (void)manager;
  return 0;
}

int execute(const struct CustomNodeTensor* inputs, int inputsCount,
            struct CustomNodeTensor** outputs, int* outputsCount,
            const struct CustomNodeParam* params, int paramsCount, void* manager) {
  (void)manager;
  if (inputsCount != 1 || strcmp(inputs[0].name, "values") != 0 || inputs[0].precision != FP32)
    return 1;
  const struct CustomNodeTensor* in = &inputs[0];
  struct CustomNodeTensor* out = malloc(sizeof(struct CustomNodeTensor));
  float* data = malloc(in->dataBytes);
  uint64_t* dims = malloc(in->dimsCount * sizeof(uint64_t));
  if (out == NULL || data == NULL || dims == NULL) {
    free(out), free(data), free(dims);
    return 2;
  }
  const float factor = factor_of(params, paramsCount);
  const float* src = (const float*)in->data;
  for (uint64_t i = 0; i < in->dataBytes / sizeof(float); i++) data[i] = src[i] * factor;
  memcpy(dims, in->dims, in->dimsCount * sizeof(uint64_t));
  out->name = "scaled"; /* names are never released: use static strings */
  out->data = (uint8_t*)data;
  out->dataBytes = in->dataBytes;
  out->dims = dims;
  out->dimsCount = in->dimsCount;
  out->precision = FP32;
  *outputs = out;
  *outputsCount = 1;
  return 0;
}

static int one_info(struct CustomNodeTensorInfo** info, int* count, const char* name) {
  *info = malloc(sizeof(struct CustomNodeTensorInfo));
  uint64_t* dims = malloc(2 * sizeof(uint64_t));
  if (*info == NULL || dims == NULL) {
    free(*info), free(dims);
    return 1;
  }
  dims[0] = 1;
  dims[1] = 0; /* 0: any size */
  (*info)->name = name;
  (*info)->dims = dims;
  (*info)->dimsCount = 2;
  (*info)->precision = FP32;
  *count = 1;
  return 0;
}

int getInputsInfo(struct CustomNodeTensorInfo** info, int* count,
                  const struct CustomNodeParam* params, int paramsCount, void* manager) {
  (void)params, (void)paramsCount, (void)manager;
  return one_info(info, count, "values");
}

int getOutputsInfo(struct CustomNodeTensorInfo** info, int* count,
                   const struct CustomNodeParam* params, int paramsCount, void* manager) {
  (void)params, (void)paramsCount, (void)manager;
  return one_info(info, count, "scaled");
}

int release(void* ptr, void* manager) {
  (void)manager;
  free(ptr);
  return 0;
}
