// The six custom-node ABI entry points of libcustom_node_add_one.so (custom_node_interface.h).
//
// The internal manager is an AddOneNode. initialize() builds it from the node's params, which
// therefore are read once, at pipeline load: execute() ignores the params it is passed (the
// server passes the same ones). release() is safe from any thread, for pool and malloc()ed
// memory alike; deinitialize() reports pool buffers that were never released.
#include <cstddef>
#include <cstdlib>
#include <string>

#include "add_one_node.h"
#include "custom_node_interface.h"
#include "node_status.h"

namespace cn = ovmsx::custom_nodes;

namespace {

constexpr const char* kNode = "add_one";

cn::AddOneNode& node_of(void* manager) {
  if (manager == nullptr) {
    throw cn::NodeError(cn::kNotInitialized, "called before a successful initialize()");
  }
  return *static_cast<cn::AddOneNode*>(manager);
}

}  // namespace

extern "C" {

DLL_PUBLIC int initialize(void** customNodeLibraryInternalManager,
                          const struct CustomNodeParam* params, int paramsCount) {
  return cn::guarded(kNode, [&] {
    // The server passes a pointer to NULL (COMPAT.md §1.3); anything it held is not ours.
    *customNodeLibraryInternalManager = new cn::AddOneNode(cn::NodeParams(params, paramsCount));
    return cn::kOk;
  });
}

DLL_PUBLIC int deinitialize(void* customNodeLibraryInternalManager) {
  return cn::guarded(kNode, [&] {
    auto* node = static_cast<cn::AddOneNode*>(customNodeLibraryInternalManager);
    if (node == nullptr) {
      return cn::kOk;
    }
    const std::size_t outstanding = node->pool().outstanding();
    delete node;
    if (outstanding != 0) {
      throw cn::NodeError(cn::kBuffersOutstanding,
                          std::to_string(outstanding) + " pool buffers were never released");
    }
    return cn::kOk;
  });
}

DLL_PUBLIC int execute(const struct CustomNodeTensor* inputs, int inputsCount,
                       struct CustomNodeTensor** outputs, int* outputsCount,
                       const struct CustomNodeParam* /*params*/, int /*paramsCount*/,
                       void* customNodeLibraryInternalManager) {
  return cn::guarded(kNode, [&] {
    node_of(customNodeLibraryInternalManager).execute(inputs, inputsCount, outputs, outputsCount);
    return cn::kOk;
  });
}

DLL_PUBLIC int getInputsInfo(struct CustomNodeTensorInfo** info, int* infoCount,
                             const struct CustomNodeParam* /*params*/, int /*paramsCount*/,
                             void* customNodeLibraryInternalManager) {
  return cn::guarded(kNode, [&] {
    node_of(customNodeLibraryInternalManager).inputs_info(info, infoCount);
    return cn::kOk;
  });
}

DLL_PUBLIC int getOutputsInfo(struct CustomNodeTensorInfo** info, int* infoCount,
                              const struct CustomNodeParam* /*params*/, int /*paramsCount*/,
                              void* customNodeLibraryInternalManager) {
  return cn::guarded(kNode, [&] {
    node_of(customNodeLibraryInternalManager).outputs_info(info, infoCount);
    return cn::kOk;
  });
}

DLL_PUBLIC int release(void* ptr, void* customNodeLibraryInternalManager) {
  return cn::guarded(kNode, [&] {
    if (customNodeLibraryInternalManager == nullptr) {
      std::free(ptr);
      return cn::kOk;
    }
    auto* node = static_cast<cn::AddOneNode*>(customNodeLibraryInternalManager);
    if (node->pool().give_back(ptr) == cn::BufferPool::GiveBack::kInvalid) {
      throw cn::NodeError(cn::kBadRelease,
                          "release() of a pool address that is not an outstanding buffer");
    }
    return cn::kOk;
  });
}

}  // extern "C"
