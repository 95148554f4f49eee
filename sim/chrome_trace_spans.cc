#include "sim/chrome_trace_spans.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string_view>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "core/util/check.h"

namespace restoresim::sim {
namespace {

constexpr std::string_view kRunEnded = "run ended";
constexpr TimeNs kMillisecondNs = 1'000'000;

// "<who> FROM -> TO", as the runtime's state machines mark their moves.
struct Transition {
  std::string_view who;
  std::string_view from;
  std::string_view to;
};

std::optional<Transition> ParseTransition(std::string_view text) {
  const size_t arrow = text.find(" -> ");
  if (arrow == std::string_view::npos) return std::nullopt;
  const std::string_view before = text.substr(0, arrow);
  const size_t space = before.rfind(' ');
  if (space == std::string_view::npos || space == 0) return std::nullopt;
  return Transition{.who = before.substr(0, space),
                    .from = before.substr(space + 1),
                    .to = text.substr(arrow + 4)};
}

// Reads the spans out of the marks in one pass over the trace.
class SpanFinder {
 public:
  explicit SpanFinder(const Simulation& sim) : sim_(sim) {}

  std::vector<StorySpan> Find() {
    uint64_t last_step = 0;
    for (const TraceEvent& e : sim_.trace().events()) {
      last_step = e.step;
      CloseTimed(e);
      if (e.kind != TraceKind::kMark) continue;
      const std::string_view text = sim_.trace().MarkText(e.object);
      const size_t slash = text.find('/');
      if (slash == std::string_view::npos) continue;
      OnMark(e, text.substr(0, slash), text.substr(slash + 1));
    }
    for (auto& [key, span] : open_) Finish(std::move(span), last_step + 1, kRunEnded);
    for (auto& [deadline, span] : timed_) Finish(std::move(span), last_step + 1, kRunEnded);
    std::sort(done_.begin(), done_.end(), [](const StorySpan& a, const StorySpan& b) {
      return std::tie(a.start_step, a.track, a.name) < std::tie(b.start_step, b.track, b.name);
    });
    return std::move(done_);
  }

 private:
  void OnMark(const TraceEvent& e, std::string_view category, std::string_view text) {
    if (category == "task") {
      OnTask(e, text);
    } else if (category == "thread") {
      OnRebalance(e, text, "PARTITIONS_ASSIGNED", "");
    } else if (category == "runtime") {
      OnRebalance(e, text, "REBALANCING", "client ");
    } else if (category == "fault") {
      OnFault(e, text);
    } else if (category == "scenario" && text.starts_with("leader back ")) {
      const std::string key = fmt::format("fault leader {}", text.substr(12));
      if (open_.contains(key)) Close(key, e.step, text);
    }
  }

  // "<incarnation> <type> FROM -> TO", or "recycle <id> -> <type>" (the old incarnation is
  // closed without a transition mark of its own).
  void OnTask(const TraceEvent& e, std::string_view text) {
    if (text.starts_with("recycle ")) {
      const std::string_view rest = text.substr(8);
      const std::string prefix = fmt::format("task {}#", rest.substr(0, rest.find(' ')));
      for (auto it = open_.lower_bound(prefix);
           it != open_.end() && it->first.starts_with(prefix);) {
        StorySpan closed = Span(it->second.track, "CLOSED (recycled)", "task", e);
        Finish(std::move(it->second), e.step, "recycle");
        it = open_.erase(it);
        Finish(std::move(closed), e.step + 1, "recycle");
      }
      return;
    }
    const std::optional<Transition> t = ParseTransition(text);
    if (!t.has_value()) return;
    const std::string_view incarnation = t->who.substr(0, t->who.find(' '));
    const std::string key = fmt::format("task {}", incarnation);
    if (open_.contains(key)) Close(key, e.step, fmt::format("-> {}", t->to));
    StorySpan span = Span(fmt::format("task {} ({})", incarnation, t->who.substr(
                                          std::min(t->who.size(), incarnation.size() + 1))),
                          std::string(t->to), "task", e);
    if (t->to == "CLOSED") {
      Finish(std::move(span), e.step + 1, "CLOSED");
    } else {
      open_.emplace(key, std::move(span));
    }
  }

  // A stretch of `who` in `busy` (a stream thread's PARTITIONS_ASSIGNED, the client's
  // REBALANCING).
  void OnRebalance(const TraceEvent& e, std::string_view text, std::string_view busy,
                   std::string_view who_prefix) {
    const std::optional<Transition> t = ParseTransition(text);
    if (!t.has_value()) return;
    const std::string key = fmt::format("rebalance {}{}", who_prefix, t->who);
    if (t->to == busy && !open_.contains(key)) {
      open_.emplace(key, Span("rebalances", key, "rebalance", e));
    } else if (t->to != busy && open_.contains(key)) {
      Close(key, e.step, fmt::format("-> {}", t->to));
    }
  }

  void OnFault(const TraceEvent& e, std::string_view text) {
    if (text.starts_with("leader taken away ")) {
      const std::string key = fmt::format("fault leader {}", text.substr(18));
      if (!open_.contains(key)) open_.emplace(key, Span("faults", std::string(text), "fault", e));
      return;
    }
    StorySpan span = Span("faults", std::string(text), "fault", e);
    span.value = e.arg;
    const bool lasts = (text == "leader_unavailable" || text == "slow_fetch") && e.arg > 0;
    if (lasts) {
      timed_.emplace_back(e.time_ns + e.arg * kMillisecondNs, std::move(span));
    } else {
      Finish(std::move(span), e.step + 1, "");
    }
  }

  // Ends the timed spans whose virtual time has passed by `e`.
  void CloseTimed(const TraceEvent& e) {
    for (auto it = timed_.begin(); it != timed_.end();) {
      if (it->first > e.time_ns) {
        ++it;
        continue;
      }
      // At least one step: a fault always shows (time may jump in the step that marked it).
      const uint64_t end_step = std::max(e.step, it->second.start_step + 1);
      Finish(std::move(it->second), end_step, "its time passed");
      it = timed_.erase(it);
    }
  }

  StorySpan Span(std::string track, std::string name, std::string_view category,
                 const TraceEvent& e) const {
    return StorySpan{.track = std::move(track),
                     .name = std::move(name),
                     .category = std::string(category),
                     .thread = e.thread,
                     .start_step = e.step,
                     .start_ns = e.time_ns};
  }

  void Close(const std::string& key, uint64_t end_step, std::string_view ended_by) {
    auto it = open_.find(key);
    RS_CHECK(it != open_.end(), "no open span {}", key);
    Finish(std::move(it->second), end_step, ended_by);
    open_.erase(it);
  }

  // Keeps `span` unless it lasted no step (it would not show, and would overlap the next).
  void Finish(StorySpan span, uint64_t end_step, std::string_view ended_by) {
    if (end_step <= span.start_step) return;
    span.end_step = end_step;
    span.ended_by = std::string(ended_by);
    RS_CHECK(span.end_step > span.start_step);
    done_.push_back(std::move(span));
  }

  const Simulation& sim_;
  std::map<std::string, StorySpan> open_;  // by what it is of: "task 0_1#4", "fault leader P"
  std::vector<std::pair<TimeNs, StorySpan>> timed_;  // spans that end at a virtual time
  std::vector<StorySpan> done_;
};

}  // namespace

std::vector<StorySpan> FindStorySpans(const Simulation& sim) { return SpanFinder(sim).Find(); }

}  // namespace restoresim::sim
