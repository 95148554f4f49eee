// Helpers for the fake broker's own tests: scripted fault draws, a recording rebalance
// listener, and access to the simulation a test body runs in.
#ifndef RESTORESIM_FAKES_FAKE_BROKER_TEST_UTIL_H_
#define RESTORESIM_FAKES_FAKE_BROKER_TEST_UTIL_H_

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <vector>

#include "core/port/random.h"
#include "core/transport/transport.h"
#include "core/util/check.h"
#include "sim/simulation.h"
#include "sim/trace.h"

namespace restoresim::fakes {

// The simulation running the calling simulated thread (tests build brokers inside it).
inline sim::Simulation& CurrentSimulation() {
  RS_CHECK(CurrentSim() != nullptr);
  return *static_cast<sim::Simulation*>(CurrentSim());
}

// Answers draws from a script; with the script used up, every Uniform(n) is 0, the quiet
// answer: a miss for every rate below 1000 per mille (and a hit at 1000). 999 hits at any rate.
class ScriptedRandom final : public RandomSource {
 public:
  void Push(uint64_t value) { script_.push_back(value); }
  uint64_t Next64() override { return Uniform(UINT64_MAX); }
  uint64_t Uniform(uint64_t n) override {
    ++draws_;
    if (script_.empty()) return 0;
    const uint64_t value = std::min(script_.front(), n - 1);
    script_.pop_front();
    return value;
  }
  uint64_t draws() const { return draws_; }

 private:
  std::deque<uint64_t> script_;
  uint64_t draws_ = 0;
};

// Records callbacks as text ("assigned[t-0,t-2]/ud", "revoked[t-1]", "lost[t-0]"); `on_revoked`
// runs inside OnPartitionsRevoked (e.g. to commit).
class TextListener final : public RebalanceListener {
 public:
  void OnPartitionsRevoked(const std::vector<TopicPartition>& partitions) override {
    events.push_back("revoked" + Text(partitions));
    if (on_revoked) on_revoked(partitions);
  }
  void OnPartitionsAssigned(const Assignment& assignment) override {
    std::string e = "assigned" + Text(assignment.partitions);
    if (!assignment.user_data.empty()) e += "/" + assignment.user_data;
    events.push_back(e);
  }
  void OnPartitionsLost(const std::vector<TopicPartition>& partitions) override {
    events.push_back("lost" + Text(partitions));
  }
  static std::string Text(const std::vector<TopicPartition>& partitions) {
    std::string out = "[";
    for (size_t i = 0; i < partitions.size(); ++i) {
      out += (i > 0 ? "," : "") + partitions[i].ToString();
    }
    return out + "]";
  }

  std::vector<std::string> events;
  std::function<void(const std::vector<TopicPartition>&)> on_revoked;
};

// The texts ("category/name") of the marks of a kFull trace, in order.
inline std::vector<std::string> MarkTexts(const sim::Simulation& simulation) {
  std::vector<std::string> out;
  for (const sim::TraceEvent& e : simulation.trace().events()) {
    if (e.kind == sim::TraceKind::kMark) {
      out.emplace_back(simulation.trace().MarkText(e.object));
    }
  }
  return out;
}

inline std::vector<TopicPartition> Partitions(const std::string& topic,
                                              std::vector<int32_t> numbers) {
  std::vector<TopicPartition> out;
  for (int32_t p : numbers) out.push_back(TopicPartition{topic, p});
  return out;
}

}  // namespace restoresim::fakes

#endif  // RESTORESIM_FAKES_FAKE_BROKER_TEST_UTIL_H_
