// Events as a jobs snapshot carries them (wire/jobs.h): the agent writes the
// kernel's events on its jobs into the snapshot and its history file, the
// server reads them back to judge the jobs (diagnose/). Both sides convert
// here, so an event reads back as it was written.
//
// Thread safety: pure functions.
#pragma once

#include <optional>

#include "parse/training/log_events.h"
#include "wire/jobs.h"

namespace vigil::parse::training {

wire::JobEvent ToWireEvent(const Event& event);
// nullopt for a kind this Vigil does not know (a newer agent's): the reader
// skips it, as it skips any field it does not know.
std::optional<Event> FromWireEvent(const wire::JobEvent& event);

}  // namespace vigil::parse::training
