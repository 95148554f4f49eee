#include "sim/shrink_schedule.h"

#include <tuple>

#include "core/util/stable_hash.h"

namespace restoresim::sim::shrinking {

Schedule ScheduleOf(RunResult& r, const FailureSignature& signature) {
  Schedule s;
  s.keeps = SignatureOf(r.outcome) == signature;
  s.metrics = MeasureSchedule(r.choices, r.choice_infos, r.steps);
  s.choices = std::move(r.choices);
  s.infos = std::move(r.choice_infos);
  return s;
}

bool Smaller(const Schedule& a, const Schedule& b) {
  auto key = [](const ScheduleMetrics& m) {
    return std::make_tuple(m.preemptions, m.sched_events, m.data_events, m.data_sum, m.steps,
                           m.choices, m.off_quiet);
  };
  const auto ka = key(a.metrics);
  const auto kb = key(b.metrics);
  if (ka != kb) return ka < kb;
  return a.choices < b.choices;
}

CandidateKey KeyOf(const Candidate& candidate) {
  StableHash a;
  StableHash b(0x13198A2E03707344ull);
  a.Add(candidate.size());
  b.Add(candidate.size());
  for (uint64_t v : candidate) {
    a.Add(v);
    b.Add(~v);
  }
  return {a.Value(), b.Value()};
}

bool OffQuiet(const ChoiceInfo& info, uint64_t value) { return value != info.quiet; }
bool Eventful(const ChoiceInfo& info, uint64_t) { return info.eventful; }
bool EventfulOrData(const ChoiceInfo& info, uint64_t) {
  return info.eventful || info.kind == ChoiceKind::kData;
}
bool IsData(const ChoiceInfo& info, uint64_t) { return info.kind == ChoiceKind::kData; }
bool FreeOffQuiet(const ChoiceInfo& info, uint64_t value) {
  return !info.eventful && value != info.quiet;
}
bool LowerableData(const ChoiceInfo& info, uint64_t value) {
  return (info.kind == ChoiceKind::kData || info.kind == ChoiceKind::kNotifyTarget) && value > 0;
}

std::vector<Block> BlocksOf(const Schedule& schedule) {
  std::vector<Block> blocks;
  const size_t n = schedule.choices.size();
  for (size_t i = 0; i < n; ++i) {
    if (schedule.infos[i].kind != ChoiceKind::kThread) continue;
    if (!blocks.empty() && blocks.back().thread == schedule.choices[i]) continue;
    if (!blocks.empty()) blocks.back().end = i;
    blocks.push_back(Block{blocks.empty() ? 0 : i, n, schedule.choices[i]});
  }
  return blocks;
}

}  // namespace restoresim::sim::shrinking
