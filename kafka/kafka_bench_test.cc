// The restore benchmark (`restoresim bench restore`) against real Kafka, small (suite kafka):
// over the cluster tools/test started (RESTORESIM_KAFKA_BOOTSTRAP) every restoration ends with
// the changelog's fold in its store, on both write paths, from scratch and from a checkpoint,
// with repeated keys and tombstones; under exactly_once_v2 (a transactional changelog with
// aborted transactions), with the fold of its committed records; and with no address the
// command starts a broker of its own and stops it (its cluster directory is gone afterwards).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "kafka/kafka_env.h"

namespace restoresim::kafka_test {
namespace {

struct Result {
  int exit_code = -1;
  std::string out;  // stdout; stderr goes to the test's log
};

Result RunBench(const std::string& args) {
  const char* bin = std::getenv("RESTORESIM_BIN");
  Result r;
  const std::string command =
      std::string(bin != nullptr ? bin : "build/tools/restoresim") + " bench restore " + args;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return r;
  std::array<char, 4096> buffer;
  size_t n;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) r.out.append(buffer.data(), n);
  const int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

void ExpectEveryStoreChecked(const nlohmann::json& j) {
  EXPECT_TRUE(j["problems"].empty()) << j["problems"].dump();
  int checked = 0;
  for (const auto& c : j["cases"]) {
    for (const auto& round : c["rounds"]) {
      EXPECT_GT(round["records_per_second"].get<double>(), 0) << c["id"];
      if (!round["contents_checked"].get<bool>()) continue;
      ++checked;
      EXPECT_TRUE(round["contents_ok"].get<bool>()) << c["id"] << ": " << round["note"];
    }
  }
  EXPECT_GE(checked, 7);
}

TEST(KafkaBench, EveryRestorationEndsWithTheChangelogsFold) {
  absl::StatusOr<std::string> bootstrap = Bootstrap(kBootstrapEnv);
  ASSERT_TRUE(bootstrap.ok()) << bootstrap.status();
  const Result r = RunBench("--backend kafka --bootstrap-servers " + *bootstrap +
                            " --records 20000 --key-space 8000 --tombstones 0.05 --sizes 5000 "
                            "--rounds 1 --bulk-min-records 4000 --json --svg ''");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_THAT(j["backend"].get<std::string>(), ::testing::HasSubstr("kafka at"));
  ExpectEveryStoreChecked(j);
}

// --guarantee exactly_once_v2 over the suite's cluster: the records written again through
// librdkafka's transactional producer (a marker every 250 records, a fifth of the transactions
// aborted, the last one too) are restored by ours on both paths with read_committed, and every
// store holds the fold of the committed records, which leaves the aborted ones out.
TEST(KafkaBench, UnderExactlyOnceEveryStoreHoldsTheFoldOfTheCommittedRecords) {
  absl::StatusOr<std::string> bootstrap = Bootstrap(kBootstrapEnv);
  ASSERT_TRUE(bootstrap.ok()) << bootstrap.status();
  const Result r = RunBench("--backend kafka --bootstrap-servers " + *bootstrap +
                            " --guarantee exactly_once_v2 --records 10000 --key-space 6000 "
                            "--tombstones 0.05 --sizes 3000 --rounds 1 --bulk-min-records 3000 "
                            "--transaction-records 250 --aborted-share 0.2 --json --svg ''");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  ExpectEveryStoreChecked(j);
  EXPECT_THAT(j["eos_changelog"].get<std::string>(),
              ::testing::HasSubstr("40 transactions of up to 250, 10 aborted transactions"));
  int eos_cases = 0;
  for (const auto& c : j["cases"]) {
    if (!c["id"].get<std::string>().starts_with("ours.eos.")) continue;
    ++eos_cases;
    EXPECT_TRUE(c["rounds"][0]["contents_ok"].get<bool>()) << c["id"];
    EXPECT_EQ(c["rounds"][0]["records"], 10000) << c["id"] << ": committed records only";
  }
  EXPECT_EQ(eos_cases, 2);
}

TEST(KafkaBench, WithNoAddressItStartsAndStopsABrokerOfItsOwn) {
  const Result r = RunBench("--backend kafka --records 5000 --sizes 2000 --rounds 1 --json "
                            "--svg ''");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  ExpectEveryStoreChecked(nlohmann::json::parse(r.out));
  const char* build = std::getenv("RESTORESIM_KAFKA_BUILD_DIR");
  ASSERT_NE(build, nullptr);
  for (const auto& entry : std::filesystem::directory_iterator(std::string(build) + "/kafka")) {
    EXPECT_FALSE(entry.path().filename().string().starts_with("bench-"))
        << entry.path() << " was left behind";
  }
}

}  // namespace
}  // namespace restoresim::kafka_test
