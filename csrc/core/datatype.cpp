#include "core/datatype.h"

#include <array>

namespace ovmsx {
namespace {

struct Row {
  std::string_view datatype;
  ElementFormat element;
};

// COMPAT.md §2.1, KServe datatype -> struct format character.
constexpr std::array<Row, 12> kTable{{
    {"BOOL", {"?", 1}},
    {"UINT8", {"B", 1}},
    {"UINT16", {"H", 2}},
    {"UINT32", {"I", 4}},
    {"UINT64", {"Q", 8}},
    {"INT8", {"b", 1}},
    {"INT16", {"h", 2}},
    {"INT32", {"i", 4}},
    {"INT64", {"q", 8}},
    {"FP16", {"e", 2}},
    {"FP32", {"f", 4}},
    {"FP64", {"d", 8}},
}};

constexpr bool kLittleEndianHost = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;

std::string_view strip_native_order(std::string_view format) {
  if (format.size() > 1 &&
      (format[0] == '@' || format[0] == '=' || (format[0] == '<' && kLittleEndianHost))) {
    return format.substr(1);
  }
  return format;
}

}  // namespace

std::optional<ElementFormat> format_of_datatype(std::string_view datatype) {
  for (const auto& row : kTable) {
    if (row.datatype == datatype) {
      return row.element;
    }
  }
  return std::nullopt;
}

std::string datatype_of_format(std::string_view format, std::size_t itemsize) {
  const std::string_view bare = strip_native_order(format);
  // C `long` is 8 bytes on LP64 (numpy int64 exports "l"); label it by what it holds.
  if (bare == "l") {
    return itemsize == 8 ? "INT64" : "INT32";
  }
  if (bare == "L") {
    return itemsize == 8 ? "UINT64" : "UINT32";
  }
  for (const auto& row : kTable) {
    if (row.element.format == bare && row.element.itemsize == itemsize) {
      return std::string(row.datatype);
    }
  }
  return std::string(format);
}

}  // namespace ovmsx
