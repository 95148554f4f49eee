#include "soak/soak_schedule.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "core/port/random.h"
#include "core/util/check.h"

namespace restoresim::soak {
namespace {

struct KindInfo {
  FaultKind kind;
  std::string_view name;
  TimeNs hold_min_ns;
  TimeNs hold_max_ns;
};

constexpr std::array<KindInfo, static_cast<size_t>(FaultKind::kCount)> kKinds = {{
    {FaultKind::kBrokerKill, "broker-kill", 5 * kSecond, 20 * kSecond},
    {FaultKind::kLeaderKill, "leader-kill", 5 * kSecond, 20 * kSecond},
    {FaultKind::kInstanceKill, "instance-kill", 1 * kSecond, 15 * kSecond},
    {FaultKind::kInstanceBounce, "instance-bounce", 1 * kSecond, 15 * kSecond},
    {FaultKind::kInstanceAdd, "instance-add", 10 * kSecond, 40 * kSecond},
    {FaultKind::kCheckpointRestore, "checkpoint-restore", 0, 0},
    {FaultKind::kPause, "pause", 2 * kSecond, 15 * kSecond},
    {FaultKind::kDiskFull, "disk-full", 2 * kSecond, 15 * kSecond},
}};

const KindInfo& Info(FaultKind kind) {
  const KindInfo& info = kKinds[static_cast<size_t>(kind)];
  RS_CHECK(info.kind == kind, "fault table out of order at {}", static_cast<int>(kind));
  return info;
}

std::array<FaultKind, static_cast<size_t>(FaultKind::kCount)> MakeAll() {
  std::array<FaultKind, static_cast<size_t>(FaultKind::kCount)> all{};
  for (size_t i = 0; i < all.size(); ++i) all[i] = kKinds[i].kind;
  return all;
}

// Uniform in [lo, hi] in tenths of a second (schedules print in tenths).
TimeNs DrawSpan(RandomSource& random, TimeNs lo, TimeNs hi) {
  RS_CHECK(lo <= hi, "span [{}, {}]", lo, hi);
  constexpr TimeNs kTenth = 100 * kMillisecond;
  const uint64_t steps = static_cast<uint64_t>((hi - lo) / kTenth);
  return lo + static_cast<TimeNs>(random.Uniform(steps + 1)) * kTenth;
}

std::string Seconds(TimeNs ns) { return fmt::format("{:.1f}s", static_cast<double>(ns) / 1e9); }

}  // namespace

std::string_view FaultName(FaultKind kind) { return Info(kind).name; }

std::optional<FaultKind> FaultByName(std::string_view name) {
  for (const KindInfo& info : kKinds) {
    if (info.name == name) return info.kind;
  }
  return std::nullopt;
}

std::span<const FaultKind> AllFaultKinds() {
  static const auto kAll = MakeAll();
  return kAll;
}

bool NeedsBrokerControl(FaultKind kind) {
  return kind == FaultKind::kBrokerKill || kind == FaultKind::kLeaderKill;
}

absl::StatusOr<std::vector<FaultKind>> ParseFaultKinds(std::string_view text) {
  if (text == "all") return std::vector<FaultKind>(AllFaultKinds().begin(), AllFaultKinds().end());
  std::vector<FaultKind> kinds;
  if (text == "none") return kinds;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string_view name = text.substr(start, comma - start);
    const std::optional<FaultKind> kind = FaultByName(name);
    if (!kind.has_value()) {
      return absl::InvalidArgumentError(fmt::format(
          "unknown fault '{}' (faults: all, none, or a list of {})", name,
          FaultKindsText(AllFaultKinds())));
    }
    if (std::find(kinds.begin(), kinds.end(), *kind) != kinds.end()) {
      return absl::InvalidArgumentError(fmt::format("fault '{}' named twice", name));
    }
    kinds.push_back(*kind);
    start = comma + 1;
  }
  return kinds;
}

std::string FaultKindsText(std::span<const FaultKind> kinds) {
  std::string out;
  for (FaultKind kind : kinds) out += (out.empty() ? "" : ",") + std::string(FaultName(kind));
  return out.empty() ? "none" : out;
}

std::string Fault::ToString() const {
  const TimeNs s = at_ns / kSecond;
  return fmt::format("+{}m{:04.1f}s  {:<18}  target {}  hold {}", s / 60,
                     static_cast<double>(at_ns - (s / 60) * 60 * kSecond) / 1e9,
                     FaultName(kind), target, Seconds(hold_ns));
}

std::vector<Fault> DrawSchedule(const ScheduleParams& params) {
  RS_CHECK(params.brokers >= 1 && params.instances >= 1 && params.partitions >= 1,
           "schedule over {} brokers, {} instances, {} partitions", params.brokers,
           params.instances, params.partitions);
  std::vector<Fault> faults;
  if (params.kinds.empty()) return faults;
  SeededRandom random(params.seed);
  TimeNs at = params.settle_ns;
  for (;;) {
    Fault f;
    f.kind = params.kinds[random.Uniform(params.kinds.size())];
    const KindInfo& info = Info(f.kind);
    f.hold_ns = DrawSpan(random, info.hold_min_ns, info.hold_max_ns);
    switch (f.kind) {
      case FaultKind::kBrokerKill: f.target = 1 + random.Uniform(params.brokers); break;
      case FaultKind::kLeaderKill: f.target = random.Uniform(params.partitions); break;
      default: f.target = random.Uniform(params.instances); break;
    }
    f.at_ns = at;
    if (at + f.hold_ns >= params.duration_ns) break;
    faults.push_back(f);
    at += f.hold_ns + DrawSpan(random, params.gap_min_ns, params.gap_max_ns);
  }
  RS_CHECK(faults.empty() || faults.back().at_ns + faults.back().hold_ns < params.duration_ns,
           "a fault recovers after the soak's end");
  return faults;
}

std::string ScheduleText(std::span<const Fault> faults) {
  std::string out;
  for (const Fault& f : faults) out += "  " + f.ToString() + "\n";
  return out.empty() ? "  (no faults)\n" : out;
}

}  // namespace restoresim::soak
