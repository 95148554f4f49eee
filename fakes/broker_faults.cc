#include "fakes/broker_faults.h"

#include <fmt/format.h>

#include <array>
#include <string>

#include "core/port/file_system.h"
#include "core/sync/thread.h"
#include "core/util/check.h"

namespace restoresim::fakes {
namespace {

constexpr uint32_t kPerMille = 1000;

// Swarm caps: high enough that every fault shows up in a short run, low enough that a retrying
// client still makes progress (a timeout costs a whole request timeout of virtual time).
struct SwarmCap {
  uint32_t BrokerFaults::*rate;
  uint32_t cap_per_mille;
  bool fatal;
};
constexpr std::array<SwarmCap, 7> kSwarmCaps = {{
    {&BrokerFaults::request_timeout_per_mille, 100, false},
    {&BrokerFaults::disconnect_per_mille, 200, false},
    {&BrokerFaults::slow_fetch_per_mille, 300, false},
    {&BrokerFaults::partial_fetch_per_mille, 500, false},
    {&BrokerFaults::empty_poll_per_mille, 300, false},
    {&BrokerFaults::leader_unavailable_per_mille, 100, false},
    {&BrokerFaults::producer_fenced_per_mille, 5, true},
}};

// The transaction faults: not in kSwarmCaps, so Swarm's draws are unchanged.
constexpr std::array<SwarmCap, 2> kTransactionCaps = {{
    {&BrokerFaults::coordinator_moved_per_mille, 200, false},
    {&BrokerFaults::transaction_timeout_per_mille, 5, true},
}};

// The client faults: not in kSwarmCaps either (a scenario draws them itself, up to this cap).
constexpr std::array<SwarmCap, 3> kClientCaps = {{
    {&BrokerFaults::metadata_unavailable_per_mille, 300, false},
    {&BrokerFaults::streams_heartbeat_error_per_mille, 300, false},
    {&BrokerFaults::streams_heartbeat_delay_per_mille, 300, false},
}};

// What an injected streams heartbeat error answers (Errors.java); the first is the quiet one.
constexpr std::array<int16_t, 3> kStreamsHeartbeatErrors = {14, 16, 15};

int64_t Millis(TimeNs ns) { return ns / kMillisecond; }

}  // namespace

BrokerFaults BrokerFaults::Swarm(RandomSource& random, bool include_fatal) {
  BrokerFaults f;
  f.slow_fetch_latency_ns_max = 500 * kMillisecond;
  f.leader_unavailable_ns_max = 2 * kSecond;
  size_t candidates = 0;
  for (const SwarmCap& c : kSwarmCaps) {
    if (c.fatal && !include_fatal) continue;
    ++candidates;
    // On iff the coin says 1, at 1 + (0..cap-1) per mille: the answer 0 is the quiet one
    // (off; the lowest rate), which is what a shrinker lowers data choices toward.
    if (random.Uniform(2) == 1) {
      f.*c.rate = 1 + static_cast<uint32_t>(random.Uniform(c.cap_per_mille));
    }
  }
  if (!f.any()) {
    // Swarm runs exist to see faults: when the coin flips turned every fault off, turn one on.
    size_t pick = random.Uniform(candidates);
    for (const SwarmCap& c : kSwarmCaps) {
      if (c.fatal && !include_fatal) continue;
      if (pick-- == 0) f.*c.rate = c.cap_per_mille / 2;
    }
  }
  RS_CHECK(f.any());
  return f;
}

BrokerFaults BrokerFaults::SwarmWithTransactions(RandomSource& random, bool include_fatal) {
  BrokerFaults f = Swarm(random, include_fatal);
  for (const SwarmCap& c : kTransactionCaps) {
    if (c.fatal && !include_fatal) continue;
    if (random.Uniform(2) == 1) {
      f.*c.rate = 1 + static_cast<uint32_t>(random.Uniform(c.cap_per_mille));
    }
  }
  RS_CHECK(f.any());
  return f;
}

BrokerFaults BrokerFaults::Moderate() {
  BrokerFaults f;
  f.request_timeout_per_mille = 20;
  f.disconnect_per_mille = 50;
  f.slow_fetch_per_mille = 100;
  f.partial_fetch_per_mille = 200;
  f.empty_poll_per_mille = 100;
  f.leader_unavailable_per_mille = 20;
  return f;
}

bool BrokerFaults::any() const {
  for (const SwarmCap& c : kSwarmCaps) {
    if (this->*c.rate > 0) return true;
  }
  for (const SwarmCap& c : kTransactionCaps) {
    if (this->*c.rate > 0) return true;
  }
  for (const SwarmCap& c : kClientCaps) {
    if (this->*c.rate > 0) return true;
  }
  return false;
}

std::string BrokerFaults::ToString() const {
  // The transaction and client faults are printed only when on: profiles without them print
  // as before.
  std::string transactions;
  if (transaction_timeout_per_mille > 0 || coordinator_moved_per_mille > 0) {
    transactions = fmt::format(" transaction_timeout={} coordinator_moved={} (per mille)",
                               transaction_timeout_per_mille, coordinator_moved_per_mille);
  }
  if (metadata_unavailable_per_mille > 0) {
    transactions += fmt::format(" metadata_unavailable={} (per mille)",
                                metadata_unavailable_per_mille);
  }
  if (streams_heartbeat_error_per_mille > 0 || streams_heartbeat_delay_per_mille > 0) {
    transactions += fmt::format(" streams_heartbeat_error={} streams_heartbeat_delay={} (<= {} ms)"
                                " (per mille)", streams_heartbeat_error_per_mille,
                                streams_heartbeat_delay_per_mille,
                                Millis(streams_heartbeat_delay_ns_max));
  }
  return fmt::format(
      "request_timeout={} disconnect={} slow_fetch={} (<= {} ms) partial_fetch={} "
      "empty_poll={} leader_unavailable={} (<= {} ms) producer_fenced={} (per mille)",
      request_timeout_per_mille, disconnect_per_mille, slow_fetch_per_mille,
      Millis(slow_fetch_latency_ns_max), partial_fetch_per_mille, empty_poll_per_mille,
      leader_unavailable_per_mille, Millis(leader_unavailable_ns_max),
      producer_fenced_per_mille) + transactions;
}

uint64_t FaultCounts::Total() const {
  return request_timeout + disconnect + slow_fetch + partial_fetch + empty_poll +
         leader_unavailable + producer_fenced + transaction_timeout + coordinator_moved +
         metadata_unavailable + streams_heartbeat_error + streams_heartbeat_delay;
}

absl::Status InjectedError(absl::StatusCode code, std::string_view what) {
  return TagInjected(absl::Status(code, fmt::format("injected {}", what)));
}

FaultInjector::FaultInjector(RandomSource* random, const BrokerFaults& faults)
    : random_(random) {
  SetFaults(faults);
}

void FaultInjector::SetFaults(const BrokerFaults& faults) {
  for (const SwarmCap& c : kSwarmCaps) {
    RS_CHECK_LE(faults.*c.rate, kPerMille, "a rate is per mille");
  }
  for (const SwarmCap& c : kTransactionCaps) {
    RS_CHECK_LE(faults.*c.rate, kPerMille, "a rate is per mille");
  }
  for (const SwarmCap& c : kClientCaps) {
    RS_CHECK_LE(faults.*c.rate, kPerMille, "a rate is per mille");
  }
  faults_ = faults;
}

bool FaultInjector::Hit(uint32_t per_mille) {
  // Nothing is drawn for a fault that is off, so a run without faults makes no data choices.
  if (random_ == nullptr || per_mille == 0) return false;
  // The top `per_mille` answers of 1000 hit, so the answer 0 is "no fault" at every rate below
  // 1000 (the same probability as "< per_mille", with the quiet answer at 0).
  return random_->Uniform(kPerMille) >= kPerMille - per_mille;
}

FaultInjector::RequestFault FaultInjector::OnRequest(std::string_view call, bool is_fetch) {
  RequestFault fault;
  if (Hit(faults_.request_timeout_per_mille)) {
    ++counts_.request_timeout;
    TraceMark("fault", "request_timeout");
    fault.status = InjectedError(absl::StatusCode::kDeadlineExceeded,
                                 fmt::format("request timeout: {}", call));
    fault.wait_timeout = true;
  } else if (Hit(faults_.disconnect_per_mille)) {
    ++counts_.disconnect;
    TraceMark("fault", "disconnect");
    fault.status =
        InjectedError(absl::StatusCode::kUnavailable, fmt::format("disconnect: {}", call));
  }
  if (is_fetch && fault.status.ok() && faults_.slow_fetch_latency_ns_max > 0 &&
      Hit(faults_.slow_fetch_per_mille)) {
    ++counts_.slow_fetch;
    fault.extra_latency_ns = 1 + static_cast<TimeNs>(random_->Uniform(
                                     static_cast<uint64_t>(faults_.slow_fetch_latency_ns_max)));
    TraceMark("fault", "slow_fetch", Millis(fault.extra_latency_ns));
  }
  return fault;
}

bool FaultInjector::EmptyPoll(int64_t available_records) {
  if (available_records <= 0 || !Hit(faults_.empty_poll_per_mille)) return false;
  ++counts_.empty_poll;
  TraceMark("fault", "empty_poll", available_records);
  return true;
}

int64_t FaultInjector::PartialFetchBudget(int64_t budget) {
  // Only a budget of two or more can shrink and still return something.
  if (budget < 2 || !Hit(faults_.partial_fetch_per_mille)) return budget;
  ++counts_.partial_fetch;
  // budget - 1 down to 1 record: the answer 0 withholds the fewest.
  const int64_t partial = budget - 1 - static_cast<int64_t>(random_->Uniform(budget - 1));
  RS_CHECK(partial >= 1 && partial < budget);
  TraceMark("fault", "partial_fetch", partial);
  return partial;
}

std::optional<FaultInjector::LeaderLoss> FaultInjector::LoseLeader(size_t partition_count) {
  if (partition_count == 0 || faults_.leader_unavailable_ns_max <= 0 ||
      !Hit(faults_.leader_unavailable_per_mille)) {
    return std::nullopt;
  }
  ++counts_.leader_unavailable;
  LeaderLoss loss;
  loss.index = partition_count == 1 ? 0 : static_cast<size_t>(random_->Uniform(partition_count));
  loss.duration_ns = 1 + static_cast<TimeNs>(random_->Uniform(
                             static_cast<uint64_t>(faults_.leader_unavailable_ns_max)));
  TraceMark("fault", "leader_unavailable", Millis(loss.duration_ns));
  return loss;
}

bool FaultInjector::FenceProducer() {
  if (!Hit(faults_.producer_fenced_per_mille)) return false;
  ++counts_.producer_fenced;
  TraceMark("fault", "producer_fenced");
  return true;
}

bool FaultInjector::TimeOutTransaction() {
  if (!Hit(faults_.transaction_timeout_per_mille)) return false;
  ++counts_.transaction_timeout;
  TraceMark("fault", "transaction_timeout");
  return true;
}

bool FaultInjector::MoveCoordinator() {
  if (!Hit(faults_.coordinator_moved_per_mille)) return false;
  ++counts_.coordinator_moved;
  TraceMark("fault", "coordinator_moved");
  return true;
}

bool FaultInjector::LoseMetadata() {
  if (!Hit(faults_.metadata_unavailable_per_mille)) return false;
  ++counts_.metadata_unavailable;
  TraceMark("fault", "metadata_unavailable");
  return true;
}

int16_t FaultInjector::StreamsHeartbeatError() {
  if (!Hit(faults_.streams_heartbeat_error_per_mille)) return 0;
  ++counts_.streams_heartbeat_error;
  const int16_t code = kStreamsHeartbeatErrors[random_->Uniform(kStreamsHeartbeatErrors.size())];
  TraceMark("fault", "streams_heartbeat_error", code);
  RS_CHECK(code != 0, "an injected heartbeat error without a code");
  return code;
}

TimeNs FaultInjector::StreamsHeartbeatDelay() {
  if (faults_.streams_heartbeat_delay_ns_max <= 0 ||
      !Hit(faults_.streams_heartbeat_delay_per_mille)) {
    return 0;
  }
  ++counts_.streams_heartbeat_delay;
  const TimeNs delay_ns = 1 + static_cast<TimeNs>(random_->Uniform(
                                  static_cast<uint64_t>(faults_.streams_heartbeat_delay_ns_max)));
  TraceMark("fault", "streams_heartbeat_delay", Millis(delay_ns));
  return delay_ns;
}

}  // namespace restoresim::fakes
