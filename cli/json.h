// Just enough JSON for the CLI's --json output: escaped strings and numbers, assembled by hand.
#pragma once

#include <cmath>
#include <cstdio>
#include <string>
#include <string_view>

namespace vren::radix::cli {

// A JSON string literal: quotes, backslashes and control characters escaped; other bytes
// (UTF-8 from the driver) pass through.
inline std::string jsonString(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char escaped[8];
          std::snprintf(escaped, sizeof(escaped), "\\u%04x", static_cast<unsigned>(c));
          out += escaped;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

// A JSON number; null for NaN and infinities, which JSON cannot hold.
inline std::string jsonNumber(double value) {
  if (!std::isfinite(value)) return "null";
  char text[32];
  std::snprintf(text, sizeof(text), "%.10g", value);
  return text;
}

inline std::string jsonBool(bool value) { return value ? "true" : "false"; }

}  // namespace vren::radix::cli
