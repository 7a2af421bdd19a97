// The demo's training job: `vigil demo` has simulated GPUs but no real job,
// so it starts one, a real process under `vigil run` (its output spooled and
// recorded like any user's), that prints what a Hugging Face Trainer run on
// those GPUs would (progress, loss/lr/grad-norm dicts, evaluation, warnings,
// a rank's NCCL warning). Discovery, the job tracker and the training
// readers find it as they find any job, so the Jobs page shows it.
#pragma once

#include <string>

#include "core/status.h"

namespace vigil::cli {

// The hidden `vigil __demo-train` command: writes the simulated log to
// standard output, one step about every half second, until killed.
int RunDemoTraining();

// Starts `vigil run --home HOME --name train -- vigil __demo-train` as a
// child that dies with this process, and returns the trainer's pid (the
// command's, from its run record) once the record says it runs.
Result<int> StartDemoJob(const std::string& home);

}  // namespace vigil::cli
