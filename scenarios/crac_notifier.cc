#include "scenarios/crac_notifier.h"

#include <fmt/format.h>

#include "core/util/check.h"
#include "scenarios/scenario_fleet.h"

namespace restoresim::scenarios {

using testing::RuntimeWorld;

FreezePlan FreezePlan::Draw(sim::RunEnv& env, TimeNs delay_ms_max, bool broker_changes) {
  constexpr TimeNs kFreezes[] = {kSecond, 60 * kSecond, 3600 * kSecond, 86400 * kSecond};
  FreezePlan p;
  p.delay_ns = static_cast<TimeNs>(env.Choose(static_cast<uint64_t>(delay_ms_max) + 1)) *
               kMillisecond;
  p.frozen_ns = kFreezes[env.Choose(4)] + static_cast<TimeNs>(env.Choose(1000)) * kMillisecond;
  if (broker_changes) {
    p.input_records = static_cast<int>(env.Choose(10));
    p.changelog_reappends = static_cast<int>(env.Choose(4));
    p.truncate = env.Choose(2) == 1;
  }
  return p;
}

std::string FreezePlan::ToString() const {
  return fmt::format("delay_ms={} frozen_ms={} input={} reappends={} truncate={}",
                     delay_ns / kMillisecond, frozen_ns / kMillisecond, input_records,
                     changelog_reappends, truncate);
}

namespace {

// The broker moves on while the instance is frozen (see the header's fault model).
void ChangeBroker(RuntimeWorld& w, int32_t partitions, const FreezePlan& plan) {
  for (int32_t q = 0; q < partitions; ++q) {
    for (int i = 0; i < plan.input_records; ++i) {
      RS_CHECK(w.broker.Append(testing::Input(q), "k" + std::to_string(i % 8), "1", i).ok());
    }
    for (const std::string& store : w.stores) {
      const TopicPartition tp = testing::ChangelogOf(store, q);
      for (int i = 0; i < plan.changelog_reappends; ++i) {
        const int64_t end = *w.broker.EndOffset(tp);
        if (end == 0) break;
        const std::vector<ConsumerRecord> last = *w.broker.ReadLog(tp, end - 1, 1);
        if (last.empty()) break;
        RS_CHECK(w.broker.Append(tp, last[0].key, last[0].value, last[0].timestamp_ms).ok());
      }
      if (plan.truncate) {
        const int64_t before = HarmlessTruncationMax(w, q, store);
        if (TruncateHarmlessly(w, q, before, store) > 0) {
          TraceMark("cover", "changelog truncated while frozen");
        }
      }
    }
  }
}

}  // namespace

absl::Status FreezeAndRestore(RuntimeWorld& w, Runtime& runtime, int32_t partitions,
                              const FreezePlan& plan, const std::function<void()>& between) {
  absl::Status s = runtime.Checkpoint();
  if (!s.ok()) return s;
  RS_CHECK(runtime.frozen(), "checkpoint succeeded but the runtime is not frozen");
  w.clock.SleepFor(plan.frozen_ns);
  ChangeBroker(w, partitions, plan);
  if (between) between();
  const std::string before = runtime.process_id();
  absl::Status r = runtime.Restore();
  RS_CHECK(r.ok(), "restore failed: {}", r.ToString());
  RS_CHECK(!runtime.frozen(), "restored but still frozen");
  if (runtime.process_id() == before) TraceMark("cover", "identity kept across a restore");
  return absl::OkStatus();
}

Notifier::Notifier(RuntimeWorld& w, Runtime& runtime, int32_t partitions,
                   std::vector<FreezePlan> plans)
    : w_(w), runtime_(runtime), partitions_(partitions), plans_(std::move(plans)) {
  thread_ = std::make_unique<Thread>("crac-notifier", [this]() { Run(); });
}

Notifier::~Notifier() {
  if (thread_ != nullptr && !thread_->joined()) {
    SimNoAbortScope no_abort;
    thread_->Join();
  }
}

void Notifier::Run() {
  for (const FreezePlan& plan : plans_) {
    if (plan.delay_ns == 0) continue;  // no notification this cycle
    // The moment: one scheduling point per virtual millisecond.
    for (TimeNs t = 0; t < plan.delay_ns; t += kMillisecond) w_.clock.SleepFor(kMillisecond);
    ++report_.notified;
    absl::Status s = FreezeAndRestore(w_, runtime_, partitions_, plan);
    if (s.ok()) {
      ++report_.frozen;
    } else {
      RS_CHECK(absl::IsAborted(s) || absl::IsFailedPrecondition(s), "checkpoint failed: {}",
               s.ToString());
      ++report_.abandoned;
    }
  }
}

NotifierReport Notifier::Join() {
  if (!thread_->joined()) thread_->Join();
  return report_;
}

void CopyTree(FileSystem& fs, const std::string& from, const std::string& to) {
  RS_CHECK(fs.CreateDirIfMissing(to).ok());
  absl::StatusOr<std::vector<std::string>> names = fs.ListDir(from);
  if (!names.ok()) return;
  for (const std::string& name : *names) {
    const std::string src = from + "/" + name;
    absl::StatusOr<std::string> data = fs.ReadFile(src);
    if (!data.ok()) {  // a directory
      CopyTree(fs, src, to + "/" + name);
      continue;
    }
    auto file = fs.NewWritableFile(to + "/" + name);
    RS_CHECK(file.ok());
    RS_CHECK((*file)->Append(*data).ok());
    RS_CHECK((*file)->Sync().ok());
    RS_CHECK((*file)->Close().ok());
  }
  RS_CHECK(fs.SyncDir(to).ok());
}

}  // namespace restoresim::scenarios
