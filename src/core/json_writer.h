// A small JSON writer for cold paths (status, API responses). Produces compact,
// valid JSON; strings are escaped (control characters, quotes, and '<' '>' '&'
// as \u escapes so JSON embedded in a page can never close a <script>).
// Invalid UTF-8 is replaced with U+FFFD so the output is always valid JSON.
//
// Usage: JsonWriter w; w.BeginObject(); w.Key("a"); w.Int(1); w.EndObject();
// The writer inserts commas; callers only nest correctly.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace vigil {

class JsonWriter {
 public:
  JsonWriter& BeginObject();
  JsonWriter& EndObject();
  JsonWriter& BeginArray();
  JsonWriter& EndArray();
  JsonWriter& Key(std::string_view key);
  JsonWriter& String(std::string_view s);
  JsonWriter& Int(int64_t v);
  JsonWriter& Uint(uint64_t v);
  // Non-finite numbers are not JSON: written as null.
  JsonWriter& Double(double v);
  JsonWriter& Bool(bool v);
  JsonWriter& Null();
  // A value already encoded as JSON, appended as it is: only for text this
  // process wrote (a stored object), never for untrusted input.
  JsonWriter& Raw(std::string_view json);

  const std::string& str() const { return out_; }
  std::string Release() { return std::move(out_); }

 private:
  void BeforeValue();
  std::string out_;
  // One entry per open container: true once it holds an element.
  std::vector<bool> has_element_;
  bool after_key_ = false;
};

// Appends `s` as a quoted, escaped JSON string.
void AppendJsonString(std::string* out, std::string_view s);

}  // namespace vigil
