/* Test node: input_numbers FP32 [1,N] -> copies [K,1,N] where K = (int)input_numbers[0],
 * each copy i holding input + i. A dynamic demultiplexer fixture. */
#include <stdlib.h>
#include <string.h>

#include "custom_node_interface.h"

int initialize(void** m, const struct CustomNodeParam* p, int n) {
  (void)m, (void)p, (void)n;
  return 0;
}
int deinitialize(void* m) {
  (void)m;
  return 0;
}

int execute(const struct CustomNodeTensor* in, int inCount, struct CustomNodeTensor** out,
            int* outCount, const struct CustomNodeParam* p, int n, void* m) {
  (void)p, (void)n, (void)m;
  if (inCount != 1 || in[0].precision != FP32 || in[0].dimsCount != 2) return 1;
  const float* src = (const float*)in[0].data;
  uint64_t width = in[0].dims[1];
  uint64_t copies = width > 0 ? (uint64_t)src[0] : 0;
  struct CustomNodeTensor* t = malloc(sizeof *t);
  uint64_t* dims = malloc(3 * sizeof *dims);
  float* data = malloc(copies * width * sizeof(float) + 1);
  if (!t || !dims || !data) {
    free(t), free(dims), free(data);
    return 2;
  }
  for (uint64_t i = 0; i < copies; i++)
    for (uint64_t j = 0; j < width; j++) data[i * width + j] = src[j] + (float)i;
  dims[0] = copies, dims[1] = 1, dims[2] = width;
  t->name = "copies";
  t->data = (uint8_t*)data;
  t->dataBytes = copies * width * sizeof(float);
  t->dims = dims;
  t->dimsCount = 3;
  t->precision = FP32;
  *out = t;
  *outCount = 1;
  return 0;
}

static int info(struct CustomNodeTensorInfo** i, int* c, const char* name, int rank) {
  *i = malloc(sizeof **i);
  uint64_t* dims = calloc(3, sizeof *dims); /* 0: any size */
  if (!*i || !dims) {
    free(*i), free(dims);
    return 1;
  }
  if (rank == 2)
    dims[0] = 1;
  else
    dims[1] = 1;
  (*i)->name = name, (*i)->dims = dims, (*i)->dimsCount = (uint64_t)rank, (*i)->precision = FP32;
  *c = 1;
  return 0;
}
int getInputsInfo(struct CustomNodeTensorInfo** i, int* c, const struct CustomNodeParam* p, int n,
                  void* m) {
  (void)p, (void)n, (void)m;
  return info(i, c, "input_numbers", 2);
}
int getOutputsInfo(struct CustomNodeTensorInfo** i, int* c, const struct CustomNodeParam* p, int n,
                   void* m) {
  (void)p, (void)n, (void)m;
  return info(i, c, "copies", 3);
}
int release(void* ptr, void* m) {
  (void)m;
  free(ptr);
  return 0;
}
