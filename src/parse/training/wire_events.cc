#include "parse/training/wire_events.h"

namespace vigil::parse::training {

wire::JobEvent ToWireEvent(const Event& event) {
  wire::JobEvent out;
  out.kind = EventKindName(event.kind);
  out.line = event.line;
  out.details.reserve(event.details.size());
  for (const EventDetail& d : event.details) out.details.push_back({d.key, d.value, d.number});
  return out;
}

std::optional<Event> FromWireEvent(const wire::JobEvent& event) {
  std::optional<EventKind> kind = EventKindFromName(event.kind);
  if (!kind) return std::nullopt;
  Event out;
  out.kind = *kind;
  out.line = event.line;
  out.details.reserve(event.details.size());
  for (const wire::JobEventDetail& d : event.details) {
    out.details.push_back({d.key, d.value, d.number});
  }
  return out;
}

}  // namespace vigil::parse::training
