/*
 * A custom node whose outputs are whatever its first input's bytes describe, so that a fuzzer
 * can hand the server every kind of broken output: NULL or negative outputs, zero outputs,
 * NULL, empty, duplicate or non-UTF-8 names, unknown precisions, NULL dims, huge dims, NULL
 * data, dataBytes that disagree with the dims.
 *
 * The one thing it never does is lie about memory: every data buffer really holds dataBytes
 * bytes (at most 64 KiB), because no server can check that and no validation is expected to.
 * Every pointer goes through counting.h, so a test can tell that each one came back.
 *
 * The description, read byte by byte (missing bytes read as 0):
 *   flags    bit 0: return 1 (and hand out nothing); bit 1: outputs = NULL;
 *            bit 2: outputsCount = -1 (with an outputs array of no entries)
 *   count    outputs, 0..7 (count & 7)
 *   then, per output:
 *   name     0: NULL; else its length is (name % 12), and that many bytes follow (a 0 byte
 *            ends the name early, as C strings do)
 *   precision  the byte as a signed value: 0..9 are the ABI's, anything else is not
 *   dims     bit 7: dims = NULL; dimsCount = dims & 7, followed by one byte per dim:
 *            255 = UINT64_MAX, 254 = 2^63, 253 = 2^62, else the value
 *   data     bit 7: data = NULL; bit 6: dataBytes = what dims * itemsize need (when that is at
 *            most 64 KiB); else dataBytes = the next two bytes (little-endian)
 */
#include <stdint.h>

#include "counting.h"

#define MAX_OUTPUTS 8
#define MAX_NAME 12
#define MAX_DATA 65536u

static char names[MAX_OUTPUTS][MAX_NAME + 1];

struct reader {
  const uint8_t* data;
  uint64_t size;
  uint64_t at;
};

static uint8_t next(struct reader* in) { return in->at < in->size ? in->data[in->at++] : 0; }

static uint64_t dim_value(uint8_t byte) {
  switch (byte) {
    case 255:
      return UINT64_MAX;
    case 254:
      return (uint64_t)1 << 63;
    case 253:
      return (uint64_t)1 << 62;
    default:
      return byte;
  }
}

static uint64_t itemsize(int precision) {
  switch (precision) {
    case FP16:
    case I16:
    case U16:
      return 2;
    case FP32:
    case I32:
      return 4;
    case FP64:
    case I64:
      return 8;
    default:
      return 1;
  }
}

/* dims * itemsize, or MAX_DATA + 1 when that is more than a buffer may hold. */
static uint64_t needed_bytes(const uint64_t* dims, uint64_t count, uint64_t size) {
  uint64_t bytes = size;
  for (uint64_t i = 0; i < count; ++i) {
    if (dims[i] != 0 && bytes > MAX_DATA / dims[i]) {
      return MAX_DATA + 1;
    }
    bytes *= dims[i];
  }
  return bytes;
}

static void describe(struct reader* in, struct CustomNodeTensor* output, int index, void* manager) {
  uint8_t name = next(in);
  if (name == 0) {
    output->name = NULL;
  } else {
    uint8_t length = (uint8_t)(name % MAX_NAME);
    for (uint8_t i = 0; i < length; ++i) {
      names[index][i] = (char)next(in);
    }
    names[index][length] = '\0';
    output->name = names[index];
  }
  output->precision = (CustomNodeTensorPrecision)(int8_t)next(in);
  uint8_t dims = next(in);
  output->dimsCount = dims & 7u;
  output->dims = NULL;
  if (!(dims & 0x80u)) {
    output->dims = (uint64_t*)counted_malloc(sizeof(uint64_t) * (output->dimsCount + 1), manager);
    for (uint64_t i = 0; i < output->dimsCount; ++i) {
      output->dims[i] = dim_value(next(in));
    }
  } else {
    for (uint64_t i = 0; i < output->dimsCount; ++i) {
      (void)next(in);
    }
  }
  uint8_t data = next(in);
  uint64_t bytes = 0;
  if ((data & 0x40u) && output->dims != NULL) {
    bytes = needed_bytes(output->dims, output->dimsCount, itemsize(output->precision));
  }
  if (!(data & 0x40u) || bytes > MAX_DATA) {
    bytes = next(in);
    bytes |= (uint64_t)next(in) << 8;
  }
  output->dataBytes = bytes;
  output->data = NULL;
  if (!(data & 0x80u)) {
    output->data = (uint8_t*)counted_malloc(bytes, manager);
    memset(output->data, 0x5a, bytes);
  }
}

DLL_PUBLIC int execute(const struct CustomNodeTensor* inputs, int inputsCount,
                       struct CustomNodeTensor** outputs, int* outputsCount,
                       const struct CustomNodeParam* params, int paramsCount, void* manager) {
  (void)params;
  (void)paramsCount;
  if (inputsCount < 1 || inputs[0].data == NULL) {
    return 2;
  }
  struct reader in = {inputs[0].data, inputs[0].dataBytes, 0};
  uint8_t flags = next(&in);
  if (flags & 1u) {
    return 1;
  }
  int count = next(&in) & 7;
  *outputsCount = count;
  if (flags & 4u) { /* the array comes back, but no entry in it can be described */
    *outputsCount = -1;
    count = 0;
  }
  if (flags & 2u) {
    *outputs = NULL;
    return 0;
  }
  *outputs = counted_outputs(count, manager);
  for (int i = 0; i < count; ++i) {
    describe(&in, &(*outputs)[i], i, manager);
  }
  return 0;
}
