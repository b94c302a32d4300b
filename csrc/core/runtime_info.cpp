#include "core/runtime_info.h"

#include <openvino/core/version.hpp>

namespace ovmsx {

std::string openvino_version() { return ov::get_openvino_version().buildNumber; }

}  // namespace ovmsx
