// The Kafka Streams peer (tools/kafka/streams-peer/RestorePeer.java): Kafka Streams 4.x
// restoring the same changelog on the same broker, in its own JVM, built by tools/kafka/peer
// (Maven, cached in the build tree). Timed inside the JVM by a StateRestoreListener from the
// first onRestoreStart to the last onRestoreEnd, with the JVM's CPU time over that span; its
// stores are then read back through interactive queries and compared with the digests they
// must have.
//
// Thread-safety: one peer run at a time.
#ifndef RESTORESIM_BENCH_STREAMS_PEER_H_
#define RESTORESIM_BENCH_STREAMS_PEER_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "bench/changelog_data.h"
#include "bench/measure.h"
#include "bench/runtime_runs.h"

namespace restoresim::bench {

// Builds the peer (a no-op when it is up to date). `log_path` receives Maven's messages.
absl::Status BuildStreamsPeer(const std::string& log_path);

// The path of the RocksDB native library Kafka Streams runs on, taken from the peer's
// rocksdbjni jar (`tools/kafka/peer rocksdb-library`, which builds the peer first).
absl::StatusOr<std::string> StreamsPeerRocksDbLibrary(const std::string& log_path);

// Runs Kafka Streams on `app` with a fresh `state_dir` and processing.guarantee `guarantee`
// (at_least_once or exactly_once_v2: then its restore consumer reads committed records only);
// `version` receives Kafka Streams' own.
absl::StatusOr<Measurement> RunStreamsPeer(const std::string& bootstrap, const AppSpec& app,
                                           const std::string& guarantee,
                                           const std::string& state_dir,
                                           const std::vector<StoreDigest>& expected,
                                           const std::string& log_path, std::string* version);

// The processing pair's run by Kafka Streams: `app` (partition 1 has `input_records` of input,
// partition 0's changelog holds records when `restoring` is 1) runs until every input record
// is processed (or `stop` says it may stop) and the restoration has ended; times in seconds
// since KafkaStreams#start.
absl::StatusOr<ProcessingRun> RunStreamsPeerProcessing(const std::string& bootstrap,
                                                       const AppSpec& app, int32_t restoring,
                                                       int64_t input_records,
                                                       ProcessingStop stop,
                                                       const std::string& state_dir,
                                                       const std::string& log_path);

// The Java write limit (tools/kafka/streams-peer/.../WriteBatchLimit.java): the records of
// `changelog` written in WriteBatches of `batch_records` with Kafka Streams' RocksDB options,
// through the rocksdbjni Kafka Streams bundles, in the peer's JVM; beside limit.write.writebatch
// it separates the RocksDB library from the restore loop (issue 27). The records go to files
// under `records_dir` first (untimed; written once, kept for the next round), the stores to
// `dir`/db; each store is checked against `expected`. `rocksdb_version` receives the
// library's version.
absl::StatusOr<Measurement> RunJavaWriteLimit(
    const std::vector<std::vector<KeyValueWrite>>& changelog, int32_t batch_records,
    const std::string& records_dir, const std::string& dir,
    const std::vector<StoreDigest>& expected, const std::string& log_path,
    std::string* rocksdb_version);

}  // namespace restoresim::bench

#endif  // RESTORESIM_BENCH_STREAMS_PEER_H_
