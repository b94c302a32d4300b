#include "core/kserve_wire.h"

#include <cstring>

#include "core/protobuf_wire.h"

namespace ovmsx {
using wire::kLengthDelimited;
using wire::Reader;
using wire::varint_size;
using wire::write_varint;

FieldSplit split_length_delimited(const std::uint8_t* data, std::size_t size,
                                  std::uint32_t field_number) {
  FieldSplit split;
  Reader reader(data, size);
  std::size_t kept_from = 0;  // start of the run of other fields not yet copied to `rest`
  while (!reader.done()) {
    std::size_t field_start = reader.pos();
    std::uint64_t tag = reader.varint();
    auto wire_type = static_cast<std::uint32_t>(tag & 7);
    std::uint64_t number = tag >> 3;
    if (wire_type != kLengthDelimited) {
      reader.skip_value(wire_type);
      continue;
    }
    std::uint64_t length = reader.varint();
    std::size_t payload = reader.pos();
    reader.skip(length);
    if (number == field_number) {
      split.rest.append(reinterpret_cast<const char*>(data) + kept_from, field_start - kept_from);
      split.payloads.push_back({payload, static_cast<std::size_t>(length)});
      kept_from = reader.pos();
    }
  }
  if (!split.payloads.empty()) {
    split.rest.append(reinterpret_cast<const char*>(data) + kept_from, size - kept_from);
  }
  return split;
}

std::size_t length_delimited_size(std::uint32_t field_number, std::size_t size) {
  std::uint64_t tag = (static_cast<std::uint64_t>(field_number) << 3) | kLengthDelimited;
  return varint_size(tag) + varint_size(size) + size;
}

std::uint8_t* write_length_delimited(std::uint8_t* out, std::uint32_t field_number,
                                     const std::uint8_t* payload, std::size_t size) {
  out = write_varint(out, (static_cast<std::uint64_t>(field_number) << 3) | kLengthDelimited);
  out = write_varint(out, size);
  if (size != 0) {
    std::memcpy(out, payload, size);
  }
  return out + size;
}

}  // namespace ovmsx
