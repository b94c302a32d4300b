// KServe v2 datatypes and their Python buffer-protocol (struct module) formats.
//
// The table is the one pyovms uses (COMPAT.md §2.1), so Tensors carry the same `datatype` and
// `data.format` as in OVMS. ovmsx departs from it in one place: the formats `l`/`L` map by their
// itemsize (8 bytes -> INT64/UINT64), where OVMS labels a numpy int64 array "INT32".
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace ovmsx {

struct ElementFormat {
  std::string_view format;  // one struct-module format character, e.g. "f"
  std::size_t itemsize;     // bytes per element
};

// The buffer format of a KServe datatype in the table (BOOL, UINT8 … FP64), or nullopt for
// BYTES, BF16 and any custom datatype, which are held as raw bytes.
std::optional<ElementFormat> format_of_datatype(std::string_view datatype);

// The KServe datatype of a buffer with this struct format and itemsize. A native byte-order
// prefix (`@`, `=`, or `<` on a little-endian host) is ignored; anything the table does not
// know comes back as the format string itself (OVMS does the same: "9w" for a numpy str).
std::string datatype_of_format(std::string_view format, std::size_t itemsize);

}  // namespace ovmsx
