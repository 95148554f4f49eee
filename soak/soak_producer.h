// The soak's input: records produced at a steady rate on a thread of their own, keys "k<i>"
// spread over the input partitions (a key always to the same partition, so each partition's
// counts are checkable on their own), each value "1" (the count topology adds it). The
// producer is librdkafka's idempotent one (acks=all): a broker killed under it neither loses an
// acknowledged record nor writes one twice. A producer that fails for good (an idempotent
// producer's fatal error: its sequence numbers out of step with a new leader) is replaced by a
// new one; what the old one had not delivered is simply not in the topic. The reference model
// does not trust these counts: it reads the input topic back (soak_audit.h).
//
// Thread-safety: Start/Stop from one thread; the counters from any.
#ifndef RESTORESIM_SOAK_SOAK_PRODUCER_H_
#define RESTORESIM_SOAK_SOAK_PRODUCER_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "core/sync/clock.h"
#include "core/transport/transport.h"

namespace restoresim::soak {

class InputProducer {
 public:
  InputProducer(Transport& transport, Clock& clock, std::string topic, int32_t partitions,
                int32_t keys, int64_t records_per_second);
  ~InputProducer();

  void Start();
  // Stops sending, then waits up to timeout_ns for what was sent to be acknowledged.
  void Stop(TimeNs timeout_ns);

  int64_t sent() const { return sent_.load(); }
  int64_t send_errors() const { return send_errors_.load(); }
  int64_t flush_errors() const { return flush_errors_.load(); }
  int64_t producers_replaced() const { return replaced_.load(); }

 private:
  void Run();
  void SendOne();
  void Replace();

  Transport& transport_;
  Clock& clock_;
  const std::string topic_;
  const int32_t partitions_;
  const int32_t keys_;
  const int64_t rate_;
  std::unique_ptr<Producer> producer_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<int64_t> sent_{0};
  std::atomic<int64_t> send_errors_{0};
  std::atomic<int64_t> flush_errors_{0};
  std::atomic<int64_t> replaced_{0};
};

}  // namespace restoresim::soak

#endif  // RESTORESIM_SOAK_SOAK_PRODUCER_H_
