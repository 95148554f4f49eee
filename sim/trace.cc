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

namespace {

// StableStringHash of "category/name", hashed piece by piece: no string built per mark.
constexpr uint64_t MarkHash(std::string_view category, std::string_view name) {
  uint64_t h = 0xCBF29CE484222325ull;  // StableStringHash's FNV-1a, then its finaliser
  for (std::string_view piece : {category, std::string_view("/"), name}) {
    for (char c : piece) {
      h ^= static_cast<unsigned char>(c);
      h *= 0x100000001B3ull;
    }
  }
  return SplitMix64(h);
}
static_assert(MarkHash("cover", "store flush failed") ==
              StableStringHash("cover/store flush failed"));
static_assert(MarkHash("", "") == StableStringHash("/"));

}  // namespace

void Trace::Keep(const TraceEvent& e) { events_.push_back(e); }

uint32_t Trace::MarkId(std::string_view category, std::string_view name) {
  const size_t slot = (name.size() * 31 + category.size() * 7 +
                       (name.empty() ? 0 : static_cast<unsigned char>(name.back()))) %
                      kMarkMemoSlots;
  MarkMemo& memo = mark_memo_[slot];
  if (memo.used && memo.name == name && memo.category == category) return memo.id;
  const uint32_t id = static_cast<uint32_t>(MarkHash(category, name));
  memo.category.assign(category);
  memo.name.assign(name);
  memo.id = id;
  memo.used = true;
  if (mode_ == TraceMode::kFull && !mark_texts_.contains(id)) {
    std::string text;
    text.reserve(category.size() + 1 + name.size());
    text.append(category).append("/").append(name);
    mark_texts_.try_emplace(id, std::move(text));
  }
  return id;
}

std::string_view Trace::MarkText(uint32_t id) const {
  auto it = mark_texts_.find(id);
  return it == mark_texts_.end() ? std::string_view() : std::string_view(it->second);
}

}  // namespace restoresim::sim
