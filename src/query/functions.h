// The PromQL functions Vigil evaluates, with their argument types (the parser
// checks calls against this table).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "query/ast.h"

namespace vigil::query {

struct FunctionInfo {
  std::string name;
  std::vector<ValueType> arg_types;
  ValueType return_type = ValueType::kVector;
};

// Null when Vigil does not evaluate the function.
const FunctionInfo* FindFunction(std::string_view name);
// A Prometheus function Vigil does not evaluate yet (for a precise message).
bool IsKnownUnsupportedFunction(std::string_view name);

}  // namespace vigil::query
