/* Test node: "text" (strings, which arrive as 2-D zero-padded U8) -> "echo_string", the same
 * bytes upper-cased; ovmsx sends outputs named *_string back to the client as strings. */
#include <ctype.h>
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
  if (inCount != 1 || in[0].precision != U8 || in[0].dimsCount != 2) return 1;
  struct CustomNodeTensor* t = malloc(sizeof *t);
  uint64_t* dims = malloc(2 * sizeof *dims);
  uint8_t* data = malloc(in[0].dataBytes + 1);
  if (!t || !dims || !data) {
    free(t), free(dims), free(data);
    return 2;
  }
  for (uint64_t i = 0; i < in[0].dataBytes; i++) data[i] = (uint8_t)toupper(in[0].data[i]);
  dims[0] = in[0].dims[0], dims[1] = in[0].dims[1];
  t->name = "echo_string";
  t->data = data;
  t->dataBytes = in[0].dataBytes;
  t->dims = dims;
  t->dimsCount = 2;
  t->precision = U8;
  *out = t;
  *outCount = 1;
  return 0;
}

static int info(struct CustomNodeTensorInfo** i, int* c, const char* name) {
  *i = malloc(sizeof **i);
  uint64_t* dims = calloc(2, sizeof *dims);
  if (!*i || !dims) {
    free(*i), free(dims);
    return 1;
  }
  (*i)->name = name, (*i)->dims = dims, (*i)->dimsCount = 2, (*i)->precision = U8;
  *c = 1;
  return 0;
}
int getInputsInfo(struct CustomNodeTensorInfo** i, int* c, const struct CustomNodeParam* p, int n,
                  void* m) {
  (void)p, (void)n, (void)m;
  return info(i, c, "text");
}
int getOutputsInfo(struct CustomNodeTensorInfo** i, int* c, const struct CustomNodeParam* p, int n,
                   void* m) {
  (void)p, (void)n, (void)m;
  return info(i, c, "echo_string");
}
int release(void* ptr, void* m) {
  (void)m;
  free(ptr);
  return 0;
}
