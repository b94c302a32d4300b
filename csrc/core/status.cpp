#include "core/status.h"

#include <iterator>

namespace ovmsx {
namespace {

constexpr StatusInfo kStatusTable[] = {
#define OVMSX_STATUS_ROW(name, message, grpc, http) \
  {StatusCode::name, #name, message, GrpcCode::grpc, http},
    OVMSX_STATUS_TABLE(OVMSX_STATUS_ROW)
#undef OVMSX_STATUS_ROW
};

}  // namespace

const StatusInfo* status_table_begin() { return std::begin(kStatusTable); }
const StatusInfo* status_table_end() { return std::end(kStatusTable); }

const StatusInfo& status_info(StatusCode code) {
  // The table is built from the same X-macro as the enum, so the value is the index.
  return kStatusTable[static_cast<std::size_t>(code)];
}

std::string render_status(StatusCode code, std::string_view details) {
  std::string text(status_info(code).message);
  if (!details.empty()) {
    text.append(" - ").append(details);
  }
  return text;
}

StatusError::StatusError(StatusCode code, std::string details)
    : std::runtime_error(render_status(code, details)), code_(code), details_(std::move(details)) {}

}  // namespace ovmsx
