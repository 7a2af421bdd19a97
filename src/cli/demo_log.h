// The demo's training job log: `vigil demo` has simulated GPUs but no real
// job, so a thread writes what a Hugging Face Trainer run on them would print
// (progress, loss/lr/grad-norm dicts, evaluation, warnings, a rank's NCCL
// warning), into a file in the run spool, where log discovery finds it.
#pragma once

#include <string>

#include "core/status.h"

namespace vigil::cli {

// Starts the writer (a detached thread that runs until the process exits)
// appending to `path`, one step about every half second.
Status StartDemoTrainingLog(const std::string& path);

}  // namespace vigil::cli
