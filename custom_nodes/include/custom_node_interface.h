/*
 * The custom-node C ABI of ovmsx: binary compatible with OpenVINO Model Server, so a library
 * built for OVMS loads into ovmsx unchanged and a library built against this header loads into
 * OVMS.
 *
 * A library exports six functions (all of them, even unused ones). The server calls
 * `initialize` once per pipeline node with that node's params and a pointer to a NULL
 * `void*` the library may set; that value comes back as the last argument of every other
 * call. Memory the library hands out (output arrays, data, dims, metadata arrays) is given
 * back through the library's own `release`, exactly once each; names are never released.
 * Every function returns 0 on success.
 *
 * Build a node:  cc -shared -fPIC -I$(python -c "import ovmsx.custom_nodes as c;
 *                print(c.include_dir())") my_node.c -o libmy_node.so
 */
#ifndef OVMSX_CUSTOM_NODE_INTERFACE_H
#define OVMSX_CUSTOM_NODE_INTERFACE_H

#include <stdint.h>

#if defined(_WIN32)
#define DLL_PUBLIC __declspec(dllexport)
#else
#define DLL_PUBLIC __attribute__((visibility("default")))
#endif

typedef enum {
  UNSPECIFIED = 0,
  FP32 = 1,
  FP16 = 2,
  U8 = 3,
  I8 = 4,
  I16 = 5,
  U16 = 6,
  I32 = 7,
  FP64 = 8,
  I64 = 9
} CustomNodeTensorPrecision;

struct CustomNodeTensor {
  const char* name;
  uint8_t* data;
  uint64_t dataBytes;
  uint64_t* dims;
  uint64_t dimsCount;
  CustomNodeTensorPrecision precision;
};

struct CustomNodeTensorInfo {
  const char* name;
  uint64_t* dims; /* a dimension of 0 means "any size" */
  uint64_t dimsCount;
  CustomNodeTensorPrecision precision;
};

struct CustomNodeParam {
  const char* key;
  const char* value;
};

#ifdef __cplusplus
extern "C" {
#endif

DLL_PUBLIC int initialize(void** customNodeLibraryInternalManager,
                          const struct CustomNodeParam* params, int paramsCount);
DLL_PUBLIC int deinitialize(void* customNodeLibraryInternalManager);
DLL_PUBLIC int execute(const struct CustomNodeTensor* inputs, int inputsCount,
                       struct CustomNodeTensor** outputs, int* outputsCount,
                       const struct CustomNodeParam* params, int paramsCount,
                       void* customNodeLibraryInternalManager);
DLL_PUBLIC int getInputsInfo(struct CustomNodeTensorInfo** info, int* infoCount,
                             const struct CustomNodeParam* params, int paramsCount,
                             void* customNodeLibraryInternalManager);
DLL_PUBLIC int getOutputsInfo(struct CustomNodeTensorInfo** info, int* infoCount,
                              const struct CustomNodeParam* params, int paramsCount,
                              void* customNodeLibraryInternalManager);
DLL_PUBLIC int release(void* ptr, void* customNodeLibraryInternalManager);

#ifdef __cplusplus
}
#endif

#endif /* OVMSX_CUSTOM_NODE_INTERFACE_H */
