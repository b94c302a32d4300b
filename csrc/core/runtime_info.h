// Facts about the OpenVINO runtime _core was built against and loaded with.
#pragma once

#include <string>

namespace ovmsx {

// The build number of the loaded libopenvino, e.g. "2026.4.1-…".
std::string openvino_version();

}  // namespace ovmsx
