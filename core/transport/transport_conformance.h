// The transport conformance suite: what every Transport backend must do, written once against
// the port and instantiated per backend (the fake broker under the simulator in
// fakes/fake_transport_conformance_test.cc; librdkafka against a real broker later):
//
//   INSTANTIATE_TEST_SUITE_P(Fake, TransportConformanceTest,
//                            ::testing::ValuesIn(factories), NameGenerator);
//
// The tests assume only what a real Kafka broker guarantees: no exact timings (they loop polls
// until the expected data arrives, within a bound), records may come in several batches, every
// test uses its own topics and groups, and a rebalance completes whenever it completes. When
// the backend injects faults (faults_on()), a call may fail with a retryable error
// (IsRetryable); the tests retry where a real client would (RetryUntilOk) and fail on any
// non-retryable error that a correct call should not get.
//
// Thread-safety: a test drives its env from the thread that runs it, and from the threads its
// body starts with restoresim::Thread (which the backend's world provides).
#ifndef RESTORESIM_CORE_TRANSPORT_TRANSPORT_CONFORMANCE_H_
#define RESTORESIM_CORE_TRANSPORT_TRANSPORT_CONFORMANCE_H_

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/sync/clock.h"
#include "core/transport/transport.h"

namespace restoresim {

// One backend, as the suite sees it. A new env is made for every test.
class TransportTestEnv {
 public:
  virtual ~TransportTestEnv() = default;

  // The backend and its options (seed, faults), printed with every failure.
  virtual std::string Describe() const = 0;
  // Runs `body` in the backend's world (under a simulation for the fake, plainly for Kafka)
  // and reports a failure of that world itself (a deadlock, a failed check) as a test failure.
  // transport() and clock() are valid inside `body` only.
  virtual void Run(std::function<void()> body) = 0;
  virtual Transport& transport() = 0;
  virtual Clock& clock() = 0;
  // Names no other test of this process or an earlier run uses (a real broker keeps them).
  virtual std::string UniqueTopic(std::string_view base) = 0;
  virtual std::string UniqueGroup(std::string_view base) = 0;
  // Whether calls may fail with injected retryable errors.
  virtual bool faults_on() const = 0;

  // One poll of a wait-for-data loop, and how many polls such a loop may make.
  virtual TimeNs poll_timeout_ns() const { return 200 * kMillisecond; }
  virtual int poll_attempts_max() const { return 300; }
};

using TransportTestEnvFactory = std::function<std::unique_ptr<TransportTestEnv>()>;

// How gtest prints a parameter: the Describe() of an env it makes (gtest finds this through
// the factory's return type, whose namespace this is).
void PrintTo(const TransportTestEnvFactory& factory, std::ostream* os);

class TransportConformanceTest : public ::testing::TestWithParam<TransportTestEnvFactory> {
 protected:
  void SetUp() override { env_ = GetParam()(); }
  TransportTestEnv& env() { return *env_; }

 private:
  std::unique_ptr<TransportTestEnv> env_;
};

// Retries of one call, and the pause between them: on the env's clock, doubling from the first
// to the cap (as Kafka clients back off: retry.backoff.ms, retry.backoff.max.ms).
inline constexpr int kRetryAttemptsMax = 100;
inline constexpr TimeNs kRetryBackoffFirstNs = 50 * kMillisecond;
inline constexpr TimeNs kRetryBackoffMaxNs = 1 * kSecond;

inline const absl::Status& StatusOf(const absl::Status& status) { return status; }
template <typename T>
const absl::Status& StatusOf(const absl::StatusOr<T>& result) {
  return result.status();
}

// Calls `call` until it returns OK or a non-retryable error, at most attempts_max times, and
// returns the last result.
template <typename Call>
auto RetryUntilOk(Clock& clock, Call&& call, int attempts_max = kRetryAttemptsMax)
    -> decltype(call()) {
  auto result = call();
  TimeNs backoff_ns = kRetryBackoffFirstNs;
  for (int attempt = 1; attempt < attempts_max && IsRetryable(StatusOf(result)); ++attempt) {
    clock.SleepFor(backoff_ns);
    backoff_ns = std::min(2 * backoff_ns, kRetryBackoffMaxNs);
    result = call();
  }
  return result;
}

}  // namespace restoresim

#endif  // RESTORESIM_CORE_TRANSPORT_TRANSPORT_CONFORMANCE_H_
