/*
 * Describes its inputs, to check what the server passes: output `description` INT64 [N, 8],
 * one row per input in the order received (precision, dataBytes, dimsCount, data address,
 * dims[0..3] or 0), and output `names` UINT8 [N, 32], each input's name zero-padded.
 */
#include "counting.h"

#define ROW 8
#define NAME 32

DLL_PUBLIC int execute(const struct CustomNodeTensor* inputs, int inputsCount,
                       struct CustomNodeTensor** outputs, int* outputsCount,
                       const struct CustomNodeParam* params, int paramsCount, void* manager) {
  (void)params;
  (void)paramsCount;
  if (inputsCount <= 0) {
    return 1;
  }
  const uint64_t n = (uint64_t)inputsCount;
  *outputsCount = 2;
  *outputs = counted_outputs(2, manager);
  fill_output(&(*outputs)[0], "description", I64, sizeof(int64_t), n, ROW, manager);
  fill_output(&(*outputs)[1], "names", U8, 1, n, NAME, manager);
  int64_t* rows = (int64_t*)(*outputs)[0].data;
  char* names = (char*)(*outputs)[1].data;
  for (uint64_t i = 0; i < n; ++i) {
    const struct CustomNodeTensor* input = &inputs[i];
    int64_t* row = rows + i * ROW;
    row[0] = (int64_t)input->precision;
    row[1] = (int64_t)input->dataBytes;
    row[2] = (int64_t)input->dimsCount;
    row[3] = (int64_t)(uintptr_t)input->data;
    for (uint64_t d = 0; d < input->dimsCount && d < 4; ++d) {
      row[4 + d] = (int64_t)input->dims[d];
    }
    size_t length = strlen(input->name);
    memcpy(names + i * NAME, input->name, length < NAME ? length : NAME - 1);
  }
  return 0;
}
