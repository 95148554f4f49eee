#include "sim/chrome_trace.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <set>
#include <tuple>
#include <vector>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "core/util/check.h"
#include "sim/chrome_trace_spans.h"
#include "sim/strategy.h"

namespace restoresim::sim {
namespace {

constexpr int kPid = 1;
constexpr int64_t kSchedulerTid = 0;  // events recorded outside any simulated thread
constexpr std::string_view kMetadataCategory = "__metadata";
// Restoration tracks: tid kRestorationTidBase + thread * kRestorationLanesMax + lane.
constexpr int64_t kRestorationTidBase = 1'000'000;
constexpr int64_t kRestorationLanesMax = 1'000;
// The story's tracks (tasks, rebalances, faults): tid kStoryTidBase + track * kStoryLanesMax +
// lane; a track's sort index is kStorySortBase + its index (below every thread's track).
constexpr int64_t kStoryTidBase = 2'000'000'000;
constexpr int64_t kStoryLanesMax = 100;
constexpr int64_t kStorySortBase = 1'000'000;

std::string_view ChoiceKindName(uint32_t kind) {
  switch (static_cast<ChoiceKind>(kind)) {
    case ChoiceKind::kThread: return "thread";
    case ChoiceKind::kNotifyTarget: return "notify_target";
    case ChoiceKind::kSpurious: return "spurious";
    case ChoiceKind::kData: return "data";
  }
  return "unknown";
}

int64_t Tid(SimThreadId thread) {
  return thread == kNoSimThread ? kSchedulerTid : int64_t{thread} + 1;
}

// Appends `s` as a JSON string literal. Plain ASCII is copied; anything else goes through
// nlohmann, which escapes it and replaces invalid UTF-8 (a thread name is arbitrary bytes)
// instead of throwing.
void AppendJsonString(std::string& out, std::string_view s) {
  bool plain = true;
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u >= 0x80 || c == '"' || c == '\\') {
      plain = false;
      break;
    }
  }
  if (plain) {
    out += '"';
    out += s;
    out += '"';
    return;
  }
  out += nlohmann::json(std::string(s)).dump(-1, ' ', false,
                                             nlohmann::json::error_handler_t::replace);
}

// Streams trace events into a string, one per line: Begin, optional fields, BeginArgs, Args,
// End. Keys come in a fixed order, so equal inputs give equal bytes.
class EventWriter {
 public:
  explicit EventWriter(std::string& out) : out_(out) {}

  void Begin(char ph, std::string_view name, std::string_view cat, uint64_t ts, int64_t tid) {
    RS_CHECK(!in_event_, "trace event opened inside another");
    in_event_ = true;
    out_ += first_event_ ? "\n{\"ph\":\"" : ",\n{\"ph\":\"";
    first_event_ = false;
    out_ += ph;
    out_ += "\",\"name\":";
    AppendJsonString(out_, name);
    if (!cat.empty()) {
      out_ += ",\"cat\":";
      AppendJsonString(out_, cat);
    }
    fmt::format_to(std::back_inserter(out_), ",\"ts\":{},\"pid\":{},\"tid\":{}", ts, kPid, tid);
  }
  void Field(std::string_view key, int64_t value) {
    fmt::format_to(std::back_inserter(out_), ",\"{}\":{}", key, value);
  }
  void FieldString(std::string_view key, std::string_view value) {
    fmt::format_to(std::back_inserter(out_), ",\"{}\":", key);
    AppendJsonString(out_, value);
  }
  void BeginArgs() {
    out_ += ",\"args\":{";
    first_arg_ = true;
  }
  void Arg(std::string_view key, int64_t value) {
    ArgKey(key);
    fmt::format_to(std::back_inserter(out_), "{}", value);
  }
  void ArgDouble(std::string_view key, double value) {
    ArgKey(key);
    fmt::format_to(std::back_inserter(out_), "{}", value);  // shortest round-trip form
  }
  void ArgString(std::string_view key, std::string_view value) {
    ArgKey(key);
    AppendJsonString(out_, value);
  }
  // Closes the args (REQUIRES: BeginArgs was called) and the event.
  void End() {
    RS_CHECK(in_event_, "trace event closed twice");
    in_event_ = false;
    out_ += "}}";
  }

 private:
  void ArgKey(std::string_view key) {
    if (!first_arg_) out_ += ',';
    first_arg_ = false;
    AppendJsonString(out_, key);
    out_ += ':';
  }

  std::string& out_;
  bool first_event_ = true;
  bool first_arg_ = true;
  bool in_event_ = false;
};

// One restoration on a restore thread: from its "restore/register T" mark to the first mark
// that ends it, or to the end of the run.
struct Restoration {
  SimThreadId thread = kNoSimThread;
  std::string task;  // the incarnation, "0_1#4"
  bool active = false;
  uint64_t start_step = 0;
  uint64_t end_step = 0;
  TimeNs start_ns = 0;
  std::string_view end;  // "restored", "unregister", "corrupted", "failed" or "run ended"
  int64_t lane = 0;
};

bool EndsRestoration(std::string_view verb) {
  return verb == "restored" || verb == "unregister" || verb == "corrupted" || verb == "failed";
}

// Gives each restoration the first lane of its thread free at its start (lanes keep the
// slices of one track from overlapping).
void AssignLanes(std::vector<Restoration>& all) {
  std::map<SimThreadId, std::vector<uint64_t>> lane_ends;  // per thread: each lane's end step
  for (Restoration& r : all) {
    std::vector<uint64_t>& ends = lane_ends[r.thread];
    size_t lane = 0;
    while (lane < ends.size() && ends[lane] > r.start_step) ++lane;
    if (lane == ends.size()) {
      if (ends.size() < static_cast<size_t>(kRestorationLanesMax)) {
        ends.push_back(0);
      } else {
        lane = ends.size() - 1;  // past the limit the last lane takes the rest (overlapping)
      }
    }
    ends[lane] = r.end_step;
    r.lane = static_cast<int64_t>(lane);
  }
}

std::vector<Restoration> FindRestorations(const Simulation& sim) {
  std::vector<Restoration> done;
  std::map<std::pair<SimThreadId, std::string>, Restoration> open;
  uint64_t last_step = 0;
  for (const TraceEvent& e : sim.trace().events()) {
    last_step = e.step;
    if (e.kind != TraceKind::kMark) continue;
    std::string_view text = sim.trace().MarkText(e.object);
    if (!text.starts_with("restore/")) continue;
    text.remove_prefix(std::string_view("restore/").size());
    const size_t space = text.find(' ');
    if (space == std::string_view::npos) continue;
    const std::string_view verb = text.substr(0, space);
    std::string task(text.substr(space + 1));
    if (verb == "register") {
      open.try_emplace({e.thread, task}, Restoration{.thread = e.thread,
                                                     .task = task,
                                                     .active = e.arg == 1,
                                                     .start_step = e.step,
                                                     .start_ns = e.time_ns});
    } else if (EndsRestoration(verb)) {
      auto it = open.find({e.thread, task});
      if (it == open.end()) continue;
      it->second.end_step = e.step + 1;
      it->second.end = verb;
      done.push_back(std::move(it->second));
      open.erase(it);
    }
  }
  for (auto& [key, r] : open) {
    r.end_step = last_step + 1;
    r.end = "run ended";
    done.push_back(std::move(r));
  }
  std::sort(done.begin(), done.end(), [](const Restoration& a, const Restoration& b) {
    return std::tie(a.start_step, a.thread, a.task) < std::tie(b.start_step, b.thread, b.task);
  });
  AssignLanes(done);
  return done;
}

// Turns the trace of one finished simulation into trace events.
class Exporter {
 public:
  Exporter(const Simulation& sim, const ChromeTraceInfo& info, std::string& out)
      : sim_(sim), info_(info), writer_(out) {}

  void WriteTracks();
  void WriteEvents();
  void WriteRestorations();
  void WriteStory();

 private:
  // The tid of `span` and its lane's track (named the first time it is used).
  int64_t StoryTrack(const StorySpan& span, std::map<std::string, std::vector<uint64_t>>& lanes,
                     std::map<std::string, int64_t>& track_index);
  // The thread currently running and where its stretch began.
  struct Slice {
    bool open = false;
    SimThreadId thread = kNoSimThread;
    uint64_t start_step = 0;
    TimeNs start_ns = 0;
    int64_t runnable = 0;         // runnable threads at the decision that started it
    std::string_view last_op;     // what the thread did last; empty: nothing yet
    uint64_t points = 0;          // scheduling points reached in the slice
  };

  void OnDecision(const TraceEvent& e);
  void CloseSlice(uint64_t end_step);
  void NoteOp(const TraceEvent& e, std::string_view op);
  void WriteInstant(const TraceEvent& e);
  // The kinds of instant with more to say than a name (WriteInstant's cases).
  void WritePoint(const TraceEvent& e, std::string_view op);
  void WriteMark(const TraceEvent& e);
  void WriteFailure(const TraceEvent& e);
  void WriteCounter(uint64_t step, TimeNs time_ns);
  // Opens an instant on `e`'s thread track with args.virtual_time_ns; the caller adds args and
  // calls writer_.End().
  void BeginInstant(const TraceEvent& e, std::string_view name, std::string_view cat);
  // The thread's name, or "thread #<id>" for an id the simulation does not know.
  std::string ThreadName(uint64_t thread) const;
  // "mutex 'lock_a' #2"; empty for object 0. For joins and spawns the object is a thread id.
  std::string ObjectLabel(SimOp op, uint32_t object) const;
  std::string OpOn(SimOp op, uint32_t object) const;

  const Simulation& sim_;
  const ChromeTraceInfo& info_;
  EventWriter writer_;
  Slice slice_;
  bool failed_ = false;  // a kFailure was seen: later exits are the unwinding of the run
};

void Exporter::WriteTracks() {
  writer_.Begin('M', "process_name", kMetadataCategory, 0, kSchedulerTid);
  writer_.BeginArgs();
  writer_.ArgString("name", fmt::format("{} seed {}", info_.program, info_.seed));
  writer_.End();
  writer_.Begin('M', "thread_name", kMetadataCategory, 0, kSchedulerTid);
  writer_.BeginArgs();
  writer_.ArgString("name", "scheduler");
  writer_.End();
  writer_.Begin('M', "thread_sort_index", kMetadataCategory, 0, kSchedulerTid);
  writer_.BeginArgs();
  writer_.Arg("sort_index", kSchedulerTid);
  writer_.End();
  for (size_t t = 0; t < sim_.thread_count(); ++t) {
    const int64_t tid = Tid(static_cast<SimThreadId>(t));
    writer_.Begin('M', "thread_name", kMetadataCategory, 0, tid);
    writer_.BeginArgs();
    writer_.ArgString("name", sim_.thread_name(static_cast<SimThreadId>(t)));
    writer_.End();
    writer_.Begin('M', "thread_sort_index", kMetadataCategory, 0, tid);
    writer_.BeginArgs();
    writer_.Arg("sort_index", tid);
    writer_.End();
  }
}

void Exporter::WriteRestorations() {
  const std::vector<Restoration> all = FindRestorations(sim_);
  std::set<std::pair<SimThreadId, int64_t>> tracks;
  for (const Restoration& r : all) {
    const int64_t tid = kRestorationTidBase + Tid(r.thread) * kRestorationLanesMax + r.lane;
    if (tracks.insert({r.thread, r.lane}).second) {
      writer_.Begin('M', "thread_name", kMetadataCategory, 0, tid);
      writer_.BeginArgs();
      writer_.ArgString("name", fmt::format("{} restorations{}", ThreadName(r.thread),
                                            r.lane == 0 ? "" : fmt::format(" ({})", r.lane + 1)));
      writer_.End();
      writer_.Begin('M', "thread_sort_index", kMetadataCategory, 0, tid);
      writer_.BeginArgs();
      writer_.Arg("sort_index", Tid(r.thread));  // beside its restore thread
      writer_.End();
    }
    writer_.Begin('X', fmt::format("{} {}", r.active ? "restore" : "update", r.task),
                  "restoration", r.start_step, tid);
    writer_.Field("dur", static_cast<int64_t>(r.end_step - r.start_step));
    writer_.BeginArgs();
    writer_.Arg("virtual_time_ns", r.start_ns);
    writer_.ArgString("task", r.task);
    writer_.ArgString("ended_by", r.end);
    writer_.End();
  }
}

int64_t Exporter::StoryTrack(const StorySpan& span,
                             std::map<std::string, std::vector<uint64_t>>& lanes,
                             std::map<std::string, int64_t>& track_index) {
  const auto [it, first] =
      track_index.try_emplace(span.track, static_cast<int64_t>(track_index.size()));
  std::vector<uint64_t>& ends = lanes[span.track];  // each lane's end step
  size_t lane = 0;
  while (lane < ends.size() && ends[lane] > span.start_step) ++lane;
  if (lane == ends.size() && ends.size() < static_cast<size_t>(kStoryLanesMax)) ends.push_back(0);
  lane = std::min(lane, ends.size() - 1);  // past the limit the last lane takes the rest
  const bool new_lane = ends[lane] == 0;
  ends[lane] = span.end_step;
  const int64_t tid = kStoryTidBase + it->second * kStoryLanesMax + static_cast<int64_t>(lane);
  if (first || new_lane) {
    writer_.Begin('M', "thread_name", kMetadataCategory, 0, tid);
    writer_.BeginArgs();
    writer_.ArgString("name", lane == 0 ? span.track
                                        : fmt::format("{} ({})", span.track, lane + 1));
    writer_.End();
    writer_.Begin('M', "thread_sort_index", kMetadataCategory, 0, tid);
    writer_.BeginArgs();
    writer_.Arg("sort_index", kStorySortBase + it->second);
    writer_.End();
  }
  return tid;
}

// Task lifecycles, rebalances and faults as slices (sim/chrome_trace_spans.h), a track each
// (lanes where spans overlap).
void Exporter::WriteStory() {
  std::map<std::string, std::vector<uint64_t>> lanes;
  std::map<std::string, int64_t> track_index;
  for (const StorySpan& span : FindStorySpans(sim_)) {
    const int64_t tid = StoryTrack(span, lanes, track_index);
    writer_.Begin('X', span.name, span.category, span.start_step, tid);
    writer_.Field("dur", static_cast<int64_t>(span.end_step - span.start_step));
    writer_.BeginArgs();
    writer_.Arg("virtual_time_ns", span.start_ns);
    writer_.ArgString("thread", ThreadName(span.thread));
    if (!span.ended_by.empty()) writer_.ArgString("ended_by", span.ended_by);
    if (span.category == "fault") writer_.Arg("value", span.value);
    writer_.End();
  }
}

void Exporter::WriteEvents() {
  WriteCounter(0, 0);  // the counter track starts at zero
  uint64_t last_step = 0;
  for (const TraceEvent& e : sim_.trace().events()) {
    last_step = e.step;
    switch (e.kind) {
      case TraceKind::kDecision:
        OnDecision(e);
        break;
      case TraceKind::kTimeAdvance:
        WriteCounter(e.step, e.time_ns);
        break;
      default:
        WriteInstant(e);
        break;
    }
  }
  CloseSlice(last_step + 1);
}

void Exporter::OnDecision(const TraceEvent& e) {
  if (slice_.open && slice_.thread == e.thread) return;  // it keeps running
  CloseSlice(e.step);
  slice_ = Slice{.open = true,
                 .thread = e.thread,
                 .start_step = e.step,
                 .start_ns = e.time_ns,
                 .runnable = e.arg};
}

void Exporter::CloseSlice(uint64_t end_step) {
  if (!slice_.open) return;
  slice_.open = false;
  RS_CHECK(end_step > slice_.start_step, "slice of thread {} ends at step {} <= its start {}",
           slice_.thread, end_step, slice_.start_step);
  const std::string_view name = slice_.last_op.empty() ? "run" : slice_.last_op;
  writer_.Begin('X', name, "run", slice_.start_step, Tid(slice_.thread));
  writer_.Field("dur", static_cast<int64_t>(end_step - slice_.start_step));
  writer_.BeginArgs();
  writer_.Arg("virtual_time_ns", slice_.start_ns);
  writer_.Arg("runnable", slice_.runnable);
  writer_.Arg("points", static_cast<int64_t>(slice_.points));
  writer_.End();
}

void Exporter::NoteOp(const TraceEvent& e, std::string_view op) {
  if (!slice_.open || slice_.thread != e.thread) return;
  slice_.last_op = op;
  if (e.kind == TraceKind::kPoint) ++slice_.points;
}

void Exporter::WriteCounter(uint64_t step, TimeNs time_ns) {
  writer_.Begin('C', "virtual_time_ms", "time", step, kSchedulerTid);
  writer_.BeginArgs();
  // One series only: every arg of a counter event is plotted.
  writer_.ArgDouble("value", static_cast<double>(time_ns) / 1e6);
  writer_.End();
}

void Exporter::BeginInstant(const TraceEvent& e, std::string_view name, std::string_view cat) {
  // Failures and checkpoint/restore notifications (marks "crac/...") span every track: the
  // whole instance stops and resumes at them.
  const bool global = e.kind == TraceKind::kFailure || cat == "crac";
  writer_.Begin('i', name, cat, e.step, Tid(e.thread));
  writer_.FieldString("s", global ? "g" : "t");
  writer_.BeginArgs();
  writer_.Arg("virtual_time_ns", e.time_ns);
}

void Exporter::WritePoint(const TraceEvent& e, std::string_view op) {
  NoteOp(e, op);
  const std::string label = ObjectLabel(e.op, e.object);
  BeginInstant(e, label.empty() ? std::string(op) : fmt::format("{} {}", op, label), "sched");
  if (e.op == SimOp::kJoin || e.op == SimOp::kSpawn) {
    writer_.Arg("target_tid", int64_t{e.object} + 1);  // the object is a thread id
  } else if (e.object != 0) {
    writer_.Arg("object", e.object);
  }
}

void Exporter::WriteMark(const TraceEvent& e) {
  const std::string_view text = sim_.trace().MarkText(e.object);
  const size_t slash = text.find('/');
  const std::string_view category =
      slash == std::string_view::npos ? std::string_view("mark") : text.substr(0, slash);
  if (category == "counter") {  // TraceMark("counter", name, value): a counter track
    writer_.Begin('C', text.substr(slash + 1), "counter", e.step, Tid(e.thread));
    writer_.BeginArgs();
    writer_.Arg("value", e.arg);
    return;
  }
  BeginInstant(e, text.empty() ? fmt::format("mark #{}", e.object) : std::string(text),
               category);
  writer_.Arg("value", e.arg);
}

void Exporter::WriteFailure(const TraceEvent& e) {
  failed_ = true;
  const auto kind = static_cast<RunOutcome::Kind>(e.object);
  const std::string_view outcome = e.object <= static_cast<uint32_t>(RunOutcome::Kind::kStepBudget)
                                       ? OutcomeKindName(kind)
                                       : std::string_view(info_.outcome);
  BeginInstant(e, fmt::format("FAILURE: {}", outcome), "failure");
  writer_.ArgString("message", info_.message);
}

void Exporter::WriteInstant(const TraceEvent& e) {
  const std::string_view op = SimOpName(e.op);
  switch (e.kind) {
    case TraceKind::kPoint:
      if (!info_.sync_instants) {  // the slice still names it
        NoteOp(e, op);
        return;
      }
      WritePoint(e, op);
      break;
    case TraceKind::kBlock:
      NoteOp(e, op);
      if (slice_.open && slice_.thread == e.thread) CloseSlice(e.step + 1);  // runs no more
      BeginInstant(e, "blocked: " + OpOn(e.op, e.object), "sched");
      writer_.Arg("deadline_ns", e.arg);  // -1: no deadline
      break;
    case TraceKind::kWake:
      BeginInstant(e, "wake " + ThreadName(static_cast<uint64_t>(e.arg)), "sched");
      writer_.Arg("woken_tid", e.arg >= 0 ? e.arg + 1 : e.arg);
      writer_.ArgString("through", OpOn(e.op, e.object));
      break;
    case TraceKind::kTimeout:
      BeginInstant(e, "timeout: " + OpOn(e.op, e.object), "sched");
      break;
    case TraceKind::kSpawn:
      BeginInstant(e, "spawn " + ThreadName(static_cast<uint64_t>(e.arg)), "sched");
      writer_.Arg("spawned_tid", e.arg + 1);
      break;
    case TraceKind::kExit:
      NoteOp(e, "exit");
      if (slice_.open && slice_.thread == e.thread) CloseSlice(e.step + 1);
      // After a failure the remaining threads are unwound, not finished.
      BeginInstant(e, failed_ ? "exit (unwound)" : "exit", "sched");
      break;
    case TraceKind::kChoice:
      BeginInstant(e, fmt::format("choice {}", ChoiceKindName(e.object)), "choice");
      writer_.Arg("value", e.arg);
      break;
    case TraceKind::kMark:
      WriteMark(e);
      break;
    case TraceKind::kFailure:
      WriteFailure(e);
      break;
    case TraceKind::kDecision:
    case TraceKind::kTimeAdvance:
      RS_CHECK(false, "{} is not an instant", TraceKindName(e.kind));
  }
  writer_.End();
}

std::string Exporter::ThreadName(uint64_t thread) const {
  if (thread >= sim_.thread_count()) return fmt::format("thread #{}", thread);
  return sim_.thread_name(static_cast<SimThreadId>(thread));
}

std::string Exporter::ObjectLabel(SimOp op, uint32_t object) const {
  if (op == SimOp::kJoin || op == SimOp::kSpawn) {
    if (object >= sim_.thread_count()) return fmt::format("thread #{}", object);
    return fmt::format("thread '{}'", sim_.thread_name(static_cast<SimThreadId>(object)));
  }
  if (object == 0) return "";
  if (object > sim_.objects().size()) return fmt::format("object #{}", object);
  const Simulation::ObjectInfo& info = sim_.objects()[object - 1];
  if (info.name == nullptr) return fmt::format("{} #{}", SimObjectKindName(info.kind), object);
  return fmt::format("{} '{}' #{}", SimObjectKindName(info.kind), info.name, object);
}

std::string Exporter::OpOn(SimOp op, uint32_t object) const {
  const std::string label = ObjectLabel(op, object);
  if (label.empty()) return std::string(SimOpName(op));
  return fmt::format("{} on {}", SimOpName(op), label);
}

std::string MetadataJson(const Simulation& sim, const ChromeTraceInfo& info) {
  const nlohmann::json metadata = {
      {"program", info.program},
      {"seed", std::to_string(info.seed)},
      {"strategy", info.strategy},
      {"outcome", info.outcome},
      {"message", info.message},
      {"trace_hash", fmt::format("0x{:016x}", sim.trace().Hash())},
      {"trace_events", sim.trace().event_count()},
      {"trace_mode", sim.trace().mode() == TraceMode::kFull ? "full" : "hash-only"},
      {"steps", sim.steps()},
      {"threads", sim.thread_count()},
      {"end_time_ns", sim.now_ns()},
      {"x_axis", "scheduling step (1 us = 1 step); virtual time in args.virtual_time_ns"},
  };
  return metadata.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

std::string ChromeTraceJson(const Simulation& sim, const ChromeTraceInfo& info) {
  std::string out;
  // About 110 bytes per event: one allocation instead of log(n) regrowths.
  out.reserve(4096 + sim.trace().events().size() * 128);
  out += "{\"traceEvents\":[";
  Exporter exporter(sim, info, out);
  exporter.WriteTracks();
  exporter.WriteEvents();
  exporter.WriteRestorations();
  exporter.WriteStory();
  out += "\n],\n\"metadata\":";
  out += MetadataJson(sim, info);
  out += "}\n";
  return out;
}

absl::Status WriteChromeTrace(FileSystem& fs, const std::string& path, const Simulation& sim,
                              const ChromeTraceInfo& info) {
  return WriteFileAtomically(fs, path, ChromeTraceJson(sim, info));
}

}  // namespace restoresim::sim
