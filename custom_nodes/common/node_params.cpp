#include "node_params.h"

#include <charconv>
#include <cmath>
#include <system_error>

#include "node_status.h"

namespace ovmsx::custom_nodes {
namespace {

std::string_view trim(std::string_view text) {
  const char* blanks = " \t\r\n";
  const auto first = text.find_first_not_of(blanks);
  if (first == std::string_view::npos) {
    return {};
  }
  const auto last = text.find_last_not_of(blanks);
  return text.substr(first, last - first + 1);
}

// std::from_chars: locale-independent, and it tells whether the whole text was a number.
template <typename Number>
bool parse_number(std::string_view text, Number& value) {
  text = trim(text);
  if (!text.empty() && text.front() == '+') {
    text.remove_prefix(1);
  }
  if (text.empty()) {
    return false;
  }
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return error == std::errc() && end == text.data() + text.size();
}

[[noreturn]] void bad_param(std::string_view key, std::string_view value, const char* expected) {
  throw NodeError(kBadParams, "param " + std::string(key) + "=\"" + std::string(value) +
                                  "\" is not " + expected);
}

}  // namespace

std::optional<std::string_view> NodeParams::find(std::string_view key) const {
  for (int i = 0; i < count_; ++i) {
    if (params_[i].key != nullptr && params_[i].value != nullptr && key == params_[i].key) {
      return std::string_view(params_[i].value);
    }
  }
  return std::nullopt;
}

std::optional<std::int64_t> NodeParams::get_int(std::string_view key) const {
  const auto text = find(key);
  if (!text) {
    return std::nullopt;
  }
  std::int64_t value = 0;
  if (!parse_number(*text, value)) {
    bad_param(key, *text, "an integer");
  }
  return value;
}

std::optional<float> NodeParams::get_float(std::string_view key) const {
  const auto text = find(key);
  if (!text) {
    return std::nullopt;
  }
  float value = 0;
  if (!parse_number(*text, value) || !std::isfinite(value)) {
    bad_param(key, *text, "a finite number");
  }
  return value;
}

std::optional<std::vector<float>> NodeParams::get_float_list(std::string_view key) const {
  const auto text = find(key);
  if (!text) {
    return std::nullopt;
  }
  const char* expected = "a list of finite numbers like [1.0,2.0,3.0]";
  std::string_view body = trim(*text);
  if (body.size() < 2 || body.front() != '[' || body.back() != ']') {
    bad_param(key, *text, expected);
  }
  body = trim(body.substr(1, body.size() - 2));
  std::vector<float> values;
  while (!body.empty()) {
    const auto comma = body.find(',');
    float value = 0;
    if (!parse_number(body.substr(0, comma), value) || !std::isfinite(value)) {
      bad_param(key, *text, expected);
    }
    values.push_back(value);
    if (comma == std::string_view::npos) {
      break;
    }
    body.remove_prefix(comma + 1);
    if (trim(body).empty()) {  // a trailing comma
      bad_param(key, *text, expected);
    }
  }
  return values;
}

}  // namespace ovmsx::custom_nodes
