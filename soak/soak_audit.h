// What the soak checks against the cluster, with nothing but the cluster and the state
// directories: whole partitions read back (KafkaReader), every store left on disk against its
// changelog (AuditStateDir), and the output against the reference model of the topology
// (AuditCounts).
//
// AuditStateDir's invariant: every store on disk holds each key as the changelog's committed
// records have it at the offset the store records for its contents (RocksDbStore's
// CommittedOffset, written atomically with the data at every commit) or at a later record of
// that key — never an older value, never one the committed changelog does not hold (the
// oracle's checkpoint invariant, properties::DiffFromHistory with or_later) — and a checkpoint
// file never claims more than that offset. Later values are allowed because the contents may
// run ahead of their offset: a dirty close or a full memtable flushes data without a commit
// (seen by the first soaks, after a close whose commit a rebalance refused). It holds after a
// clean close and after a SIGKILL alike, so the soak runs it on a killed instance's directory
// before its restart, and on every directory at the end.
//
// AuditCounts: the counts each key reaches in its changelog, against the number of input
// records of that key: fewer is a loss (never allowed); more is a duplicate (at-least-once
// allows them and counts them; exactly once allows none).
//
// Thread-safety: a KafkaReader is used by one thread; the audits are functions.
#ifndef RESTORESIM_SOAK_SOAK_AUDIT_H_
#define RESTORESIM_SOAK_SOAK_AUDIT_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/sync/clock.h"
#include "core/transport/transport.h"

namespace restoresim::soak {

class KafkaReader {
 public:
  KafkaReader(Transport& transport, Clock& clock);
  // Every record from the log start to the end offset read at the call, as a consumer of
  // `isolation` reads them; retryable errors are retried for up to a minute.
  absl::StatusOr<std::vector<ConsumerRecord>> ReadAll(const TopicPartition& tp,
                                                      IsolationLevel isolation);
  absl::StatusOr<std::map<TopicPartition, int64_t>> EndOffsets(
      const std::vector<TopicPartition>& tps,
      IsolationLevel isolation = IsolationLevel::kReadUncommitted);
  absl::StatusOr<std::map<TopicPartition, int64_t>> Committed(
      const std::string& group, const std::vector<TopicPartition>& tps);
  Admin& admin() { return *admin_; }
  // The node id leading `tp` now, from a fresh metadata request (librdkafka) to `bootstrap`.
  static absl::StatusOr<int32_t> Leader(const std::string& bootstrap, const TopicPartition& tp);

 private:
  absl::StatusOr<std::vector<ConsumerRecord>> ReadAllOnce(const TopicPartition& tp,
                                                          IsolationLevel isolation);
  Transport& transport_;
  Clock& clock_;
  std::unique_ptr<Admin> admin_;
};

struct AppLayout {
  std::string app_id;
  std::string input;
  std::string changelog;
  int32_t partitions = 0;
  TopicPartition Input(int32_t p) const { return {input, p}; }
  TopicPartition Changelog(int32_t p) const { return {changelog, p}; }
};

struct StoreAudit {
  int64_t stores = 0;                 // stores checked
  std::vector<std::string> problems;  // one line each; empty: the invariant held
};

// Changelogs read once per audit, shared by the stores of every state directory audited.
using ChangelogCache = std::map<int32_t, std::vector<ConsumerRecord>>;

StoreAudit AuditStateDir(KafkaReader& reader, const AppLayout& app, const std::string& state_dir,
                         ChangelogCache& cache);

struct CountsAudit {
  int64_t input_records = 0;
  int64_t keys = 0;
  int64_t lost = 0;        // counts short of the input, summed over keys
  int64_t duplicates = 0;  // counts past the input, summed over keys
  std::vector<std::string> problems;  // the first few keys that lost records
};

// Reads every input and changelog partition (read_committed) after the group committed the
// whole input.
absl::StatusOr<CountsAudit> AuditCounts(KafkaReader& reader, const AppLayout& app);

}  // namespace restoresim::soak

#endif  // RESTORESIM_SOAK_SOAK_AUDIT_H_
