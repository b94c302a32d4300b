// How deeply a JSON text nests its arrays and objects, for the REST frontend's limit (OVMS
// refuses a request nested deeper than 100 levels before it reads anything in it).
#pragma once

#include <cstddef>
#include <cstdint>

namespace ovmsx {

// The offset of the first '[' or '{' that opens a container more than `limit` levels deep, or
// -1 when none does. Brackets inside strings do not count. Meant for text a JSON parser has
// accepted: on other text the answer is still defined, but says nothing of where it is wrong.
std::int64_t json_depth_exceeded_at(const char* text, std::size_t size, std::size_t limit);

}  // namespace ovmsx
