// The lock file format (docs/env-lock.md): JSON, "format": 1, keys in a fixed
// order, lists sorted, two-space indentation, no timestamps. Writing the same
// EnvLock twice gives the same bytes; reading what was written gives the same
// EnvLock back.
#pragma once

#include <string>
#include <string_view>

#include "core/status.h"
#include "env/lock/lock.h"

namespace vigil::env {

// Canonicalizes a copy of `lock` and writes it, ending with a newline.
std::string WriteLock(const EnvLock& lock);

// Reads a lock file. InvalidArgument (with what and where) on malformed JSON,
// a missing or unsupported "format", or a field of the wrong type. Unknown
// keys are ignored, so a newer minor writer stays readable.
Result<EnvLock> ParseLock(std::string_view text);

}  // namespace vigil::env
