/* The good node: output_numbers = input_numbers + add_value (param), FP32 [1, N]. */
#include <stdlib.h>

#include "counting.h"

static uint64_t last_address;

/* The address of the data of the latest output, to check that the server did not copy it. */
DLL_PUBLIC uint64_t last_output_address(void) {
  return __atomic_load_n(&last_address, __ATOMIC_SEQ_CST);
}

DLL_PUBLIC int execute(const struct CustomNodeTensor* inputs, int inputsCount,
                       struct CustomNodeTensor** outputs, int* outputsCount,
                       const struct CustomNodeParam* params, int paramsCount, void* manager) {
  const char* add_text = find_param(params, paramsCount, "add_value");
  if (add_text == NULL) {
    return 1;
  }
  const float add = (float)atof(add_text);
  if (inputsCount != 1 || strcmp(inputs[0].name, "input_numbers") != 0) {
    return 2;
  }
  const struct CustomNodeTensor* input = &inputs[0];
  if (input->precision != FP32 || input->dimsCount != 2 || input->dims[0] != 1) {
    return 3;
  }
  const uint64_t count = input->dims[1];
  if (input->dataBytes != count * sizeof(float)) {
    return 4;
  }
  *outputsCount = 1;
  *outputs = counted_outputs(1, manager);
  struct CustomNodeTensor* output = &(*outputs)[0];
  fill_output(output, "output_numbers", FP32, sizeof(float), 1, count, manager);
  const float* in = (const float*)input->data;
  float* out = (float*)output->data;
  for (uint64_t i = 0; i < count; ++i) {
    out[i] = in[i] + add;
  }
  __atomic_store_n(&last_address, (uint64_t)(uintptr_t)output->data, __ATOMIC_SEQ_CST);
  return 0;
}
