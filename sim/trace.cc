#include "sim/trace.h"

namespace restoresim::sim {

std::string_view TraceKindName(TraceKind kind) {
  switch (kind) {
    case TraceKind::kDecision: return "decision";
    case TraceKind::kPoint: return "point";
    case TraceKind::kBlock: return "block";
    case TraceKind::kWake: return "wake";
    case TraceKind::kTimeout: return "timeout";
    case TraceKind::kTimeAdvance: return "time_advance";
    case TraceKind::kSpawn: return "spawn";
    case TraceKind::kExit: return "exit";
    case TraceKind::kChoice: return "choice";
    case TraceKind::kMark: return "mark";
    case TraceKind::kFailure: return "failure";
  }
  return "?";
}

uint32_t Trace::MarkId(std::string_view category, std::string_view name) {
  std::string text;
  text.reserve(category.size() + 1 + name.size());
  text.append(category).append("/").append(name);
  const uint32_t id = static_cast<uint32_t>(StableStringHash(text));
  if (mode_ == TraceMode::kFull) mark_texts_.try_emplace(id, std::move(text));
  return id;
}

std::string_view Trace::MarkText(uint32_t id) const {
  auto it = mark_texts_.find(id);
  return it == mark_texts_.end() ? std::string_view() : std::string_view(it->second);
}

}  // namespace restoresim::sim
