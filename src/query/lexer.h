// Tokens of PromQL (internal to the parser; exposed for its tests).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace vigil::query {

enum class Tok {
  kEnd,
  kIdent,
  kNumber,
  kDuration,
  kString,
  kLParen,
  kRParen,
  kLBrace,
  kRBrace,
  kLBracket,
  kRBracket,
  kComma,
  kColon,
  kAt,
  kAssign,    // =  (in matchers)
  kNeq,       // !=
  kRegex,     // =~
  kNotRegex,  // !~
  kEqlEql,    // ==
  kAdd,
  kSub,
  kMul,
  kDiv,
  kMod,
  kPow,
  kGt,
  kLt,
  kGe,
  kLe,
};

struct Token {
  Tok kind = Tok::kEnd;
  std::string text;  // identifier, number text, duration text, unquoted string
  size_t pos = 0;
};

// Splits a query into tokens; the last one is kEnd. Errors carry positions.
Result<std::vector<Token>> Lex(std::string_view q);

// Reads the quoted string that starts at q[i] ('"', '\'' or '`'), appending
// its value to *out (Go's strconv.Unquote rules; `...` is raw). Returns the
// index just past the closing quote. Shared with the log query parser.
Result<size_t> LexString(std::string_view q, size_t i, std::string* out);

// "1:7" for byte offset 6 (lines and columns count from 1).
std::string PosString(std::string_view q, size_t pos);

}  // namespace vigil::query
