// The six custom-node ABI entry points of libcustom_node_image_transformation.so
// (custom_node_interface.h).
//
// The internal manager is an ImageTransformationNode. initialize() reads the params and
// compiles the OpenVINO model once, at pipeline load; execute() ignores the params it is passed
// (the server passes the same ones). The metadata functions work from the params alone, as in
// OVMS. All memory handed out comes from malloc(), so release() is free() from any thread.
#include <cstdlib>
#include <iostream>

#include "custom_node_interface.h"
#include "image_transformation_node.h"
#include "node_params.h"
#include "node_status.h"

namespace cn = ovmsx::custom_nodes;

namespace {

constexpr const char* kNode = "image_transformation";

cn::ImageTransformationNode& node_of(void* manager) {
  if (manager == nullptr) {
    throw cn::NodeError(cn::kNotInitialized, "called before a successful initialize()");
  }
  return *static_cast<cn::ImageTransformationNode*>(manager);
}

cn::TransformConfig config_of(void* manager, const struct CustomNodeParam* params, int count) {
  if (manager != nullptr) {
    return static_cast<cn::ImageTransformationNode*>(manager)->config();
  }
  return cn::TransformConfig::parse(cn::NodeParams(params, count));
}

}  // namespace

extern "C" {

DLL_PUBLIC int initialize(void** customNodeLibraryInternalManager,
                          const struct CustomNodeParam* params, int paramsCount) {
  return cn::guarded(kNode, [&] {
    const auto config = cn::TransformConfig::parse(cn::NodeParams(params, paramsCount));
    if (config.debug) {
      std::cout << "[" << kNode << " custom node] " << config.describe() << std::endl;
    }
    // The server passes a pointer to NULL (COMPAT.md §1.3); anything it held is not ours.
    *customNodeLibraryInternalManager = new cn::ImageTransformationNode(config);
    return cn::kOk;
  });
}

DLL_PUBLIC int deinitialize(void* customNodeLibraryInternalManager) {
  return cn::guarded(kNode, [&] {
    delete static_cast<cn::ImageTransformationNode*>(customNodeLibraryInternalManager);
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
                             const struct CustomNodeParam* params, int paramsCount,
                             void* customNodeLibraryInternalManager) {
  return cn::guarded(kNode, [&] {
    cn::ImageTransformationNode::inputs_info(
        config_of(customNodeLibraryInternalManager, params, paramsCount), info, infoCount);
    return cn::kOk;
  });
}

DLL_PUBLIC int getOutputsInfo(struct CustomNodeTensorInfo** info, int* infoCount,
                              const struct CustomNodeParam* params, int paramsCount,
                              void* customNodeLibraryInternalManager) {
  return cn::guarded(kNode, [&] {
    cn::ImageTransformationNode::outputs_info(
        config_of(customNodeLibraryInternalManager, params, paramsCount), info, infoCount);
    return cn::kOk;
  });
}

DLL_PUBLIC int release(void* ptr, void* /*customNodeLibraryInternalManager*/) {
  std::free(ptr);
  return cn::kOk;
}

}  // extern "C"
