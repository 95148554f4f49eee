#include "bench/streams_peer.h"

#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "bench/project_paths.h"

namespace restoresim::bench {
namespace {

std::string PeerScript() {
  return fmt::format("{} --build {}", ShellQuote(SourceRoot() + "/tools/kafka/peer"),
                     ShellQuote(BuildRoot()));
}

}  // namespace

absl::Status BuildStreamsPeer(const std::string& log_path) {
  std::string out;
  const int rc = RunCommand(PeerScript() + " build", log_path, &out);
  if (rc != 0) {
    return absl::UnavailableError(fmt::format(
        "could not build the Kafka Streams peer (tools/kafka/peer build, exit {}; see {})", rc,
        log_path));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> StreamsPeerRocksDbLibrary(const std::string& log_path) {
  std::string out;
  const int rc = RunCommand(PeerScript() + " rocksdb-library", log_path, &out);
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  const size_t line = out.rfind('\n');
  std::string path = line == std::string::npos ? out : out.substr(line + 1);
  if (rc != 0 || path.empty() || path[0] != '/') {
    return absl::UnavailableError(fmt::format(
        "could not find Kafka Streams' RocksDB library (tools/kafka/peer rocksdb-library, exit "
        "{}; see {})", rc, log_path));
  }
  return path;
}

absl::StatusOr<Measurement> RunStreamsPeer(const std::string& bootstrap, const AppSpec& app,
                                           const std::string& guarantee,
                                           const std::string& state_dir,
                                           const std::vector<StoreDigest>& expected,
                                           const std::string& log_path, std::string* version) {
  const std::string command = fmt::format(
      "{} run --bootstrap-servers {} --application-id {} --input-topic {} --partitions {} "
      "--state-dir {} --processing-guarantee {}",
      PeerScript(), ShellQuote(bootstrap), ShellQuote(app.app_id), ShellQuote(app.input_topic),
      app.partitions, ShellQuote(state_dir), ShellQuote(guarantee));
  std::string out;
  int64_t peak_rss = -1;
  const int rc = RunCommand(command, log_path, &out, &peak_rss);
  const size_t brace = out.rfind("\n{");
  const std::string line = out.substr(brace == std::string::npos ? 0 : brace + 1);
  nlohmann::json result = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (rc != 0 || result.is_discarded() || !result.value("restored", false)) {
    return absl::UnavailableError(fmt::format(
        "the Kafka Streams peer failed (exit {}): {}; its log is {}", rc,
        line.substr(0, 300), log_path));
  }
  if (version != nullptr) *version = result.value("kafka_streams_version", "?");
  Measurement m;
  m.peak_rss_bytes = peak_rss;  // the JVM's whole life: start-up, restoration, queries
  m.records = result.value("records", int64_t{0});
  m.seconds = result.value("restore_seconds", 0.0);
  m.cpu_seconds = result.value("cpu_seconds", 0.0);
  for (const auto& sample : result["progress"]) {
    m.progress.emplace_back(sample[0].get<double>(), sample[1].get<int64_t>());
  }
  m.note = "state updater, WriteBatch per poll (RocksDBStore#restoreBatch), " +
           result.value("processing_guarantee", std::string("?"));
  m.contents_checked = true;
  const auto& stores = result["stores"];
  for (size_t p = 0; p < expected.size(); ++p) {
    StoreDigest got;
    if (p < stores.size()) {
      got.entries = stores[p].value("entries", int64_t{0});
      got.hash = std::stoull(stores[p].value("hash", std::string("0")), nullptr, 16);
    }
    if (!(got == expected[p])) {
      m.contents_ok = false;
      m.note += fmt::format("; partition {} holds {} (expected {})", p, got.ToString(),
                            expected[p].ToString());
    }
  }
  return m;
}

absl::StatusOr<ProcessingRun> RunStreamsPeerProcessing(const std::string& bootstrap,
                                                       const AppSpec& app, int32_t restoring,
                                                       int64_t input_records,
                                                       ProcessingStop stop,
                                                       const std::string& state_dir,
                                                       const std::string& log_path) {
  const std::string command = fmt::format(
      "{} run --bootstrap-servers {} --application-id {} --input-topic {} --partitions {} "
      "--state-dir {} --process-records {} --restoring {} --stop-at-restore-end {} "
      "--stop-after-first-s {}",
      PeerScript(), ShellQuote(bootstrap), ShellQuote(app.app_id), ShellQuote(app.input_topic),
      app.partitions, ShellQuote(state_dir), input_records, restoring, stop.at_restore_end,
      stop.after_first_s);
  std::string out;
  const int rc = RunCommand(command, log_path, &out);
  const size_t brace = out.rfind("\n{");
  const std::string line = out.substr(brace == std::string::npos ? 0 : brace + 1);
  nlohmann::json result = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (rc != 0 || result.is_discarded() || !result.value("done", false)) {
    return absl::UnavailableError(fmt::format(
        "the Kafka Streams peer's processing run failed (exit {}): {}; its log is {}", rc,
        line.substr(0, 300), log_path));
  }
  ProcessingRun run;
  run.first_processed_s = result.value("first_processed_s", -1.0);
  run.restore_start_s = result.value("restore_start_s", -1.0);
  run.restore_end_s = result.value("restore_end_s", -1.0);
  run.restored = result.value("restored_records", int64_t{0});
  run.input_records = input_records;
  for (const auto& sample : result["samples"]) {
    run.processed.emplace_back(sample[0].get<double>(), sample[1].get<int64_t>());
  }
  return run;
}

namespace {

void PutInt32(std::ofstream& out, int32_t v) {
  const uint32_t u = static_cast<uint32_t>(v);
  const char bytes[4] = {static_cast<char>(u >> 24), static_cast<char>(u >> 16),
                         static_cast<char>(u >> 8), static_cast<char>(u)};
  out.write(bytes, 4);
}

// p<N>.bin per partition, as WriteBatchLimit.java reads them; written once per run.
absl::Status WriteLimitRecords(const std::vector<std::vector<KeyValueWrite>>& changelog,
                               const std::string& dir) {
  if (std::filesystem::exists(dir + "/complete")) return absl::OkStatus();
  std::filesystem::create_directories(dir);
  for (size_t p = 0; p < changelog.size(); ++p) {
    std::ofstream out(fmt::format("{}/p{}.bin", dir, p), std::ios::binary | std::ios::trunc);
    for (const KeyValueWrite& w : changelog[p]) {
      PutInt32(out, static_cast<int32_t>(w.key.size()));
      out.write(w.key.data(), static_cast<std::streamsize>(w.key.size()));
      PutInt32(out, w.value ? static_cast<int32_t>(w.value->size()) : -1);
      if (w.value) out.write(w.value->data(), static_cast<std::streamsize>(w.value->size()));
    }
    if (!out.flush()) {
      return absl::UnavailableError(fmt::format("could not write the Java limit's records in {}",
                                                dir));
    }
  }
  std::ofstream(dir + "/complete") << "ok\n";
  return absl::OkStatus();
}

// The stores WriteBatchLimit reported, against what they must hold.
absl::Status CheckJavaStores(const nlohmann::json& result,
                             const std::vector<StoreDigest>& expected) {
  size_t checked = 0;
  for (const auto& store : result["stores"]) {
    const auto p = store.value("partition", -1);
    if (p < 0 || static_cast<size_t>(p) >= expected.size()) continue;
    StoreDigest got;
    got.entries = store.value("entries", int64_t{-1});
    got.hash = std::stoull(store.value("hash", std::string("0")), nullptr, 16);
    if (!(got == expected[static_cast<size_t>(p)])) {
      return absl::DataLossError(fmt::format("the Java write limit's store {} holds {}, not {}",
                                             p, got.ToString(),
                                             expected[static_cast<size_t>(p)].ToString()));
    }
    ++checked;
  }
  if (checked != expected.size()) {
    return absl::DataLossError(fmt::format("the Java write limit reported {} of {} stores",
                                           checked, expected.size()));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Measurement> RunJavaWriteLimit(
    const std::vector<std::vector<KeyValueWrite>>& changelog, int32_t batch_records,
    const std::string& records_dir, const std::string& dir,
    const std::vector<StoreDigest>& expected, const std::string& log_path,
    std::string* rocksdb_version) {
  if (absl::Status s = WriteLimitRecords(changelog, records_dir); !s.ok()) return s;
  std::filesystem::create_directories(dir + "/db");
  const std::string command = fmt::format(
      "{} write-limit --records-dir {} --partitions {} --db-dir {} --batch-records {}",
      PeerScript(), ShellQuote(records_dir), changelog.size(), ShellQuote(dir + "/db"),
      batch_records);
  std::string out;
  int64_t peak_rss = -1;
  const int rc = RunCommand(command, log_path, &out, &peak_rss);
  const size_t brace = out.rfind('{', out.find("\"records\""));
  const std::string line = brace == std::string::npos ? out : out.substr(brace);
  nlohmann::json result = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (rc != 0 || result.is_discarded() || !result.contains("seconds")) {
    return absl::UnavailableError(fmt::format("the Java write limit failed (exit {}): {}; its "
                                              "log is {}", rc, line.substr(0, 300), log_path));
  }
  if (absl::Status s = CheckJavaStores(result, expected); !s.ok()) return s;
  if (rocksdb_version != nullptr) *rocksdb_version = result.value("rocksdb_version", "?");
  Measurement m;
  m.peak_rss_bytes = peak_rss;
  m.records = result.value("records", int64_t{0});
  m.seconds = result.value("seconds", 0.0);
  m.cpu_seconds = result.value("cpu_seconds", 0.0);
  for (const auto& p : changelog) {
    for (const KeyValueWrite& w : p) {
      m.bytes += static_cast<int64_t>(w.key.size() + (w.value ? w.value->size() : 0));
    }
  }
  m.note = fmt::format("WriteBatch of {} records, rocksdbjni {} (Kafka Streams' RocksDB) with "
                       "its RocksDBStore options, in the peer's JVM", batch_records,
                       result.value("rocksdb_version", "?"));
  return m;
}

}  // namespace restoresim::bench
