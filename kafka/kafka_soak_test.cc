// `restoresim soak` against the suite's three-node cluster ("three", tools/test starts it), run
// as a user runs it: the binary (RESTORESIM_BIN) with --json. A short soak of every fault kind
// must pass (nothing lost, every invariant held, every state directory sound), and a planted
// zoo mutation must be caught by the real-thread oracle of an instance, as the simulator
// catches it. The long soak is a command (docs/SOAK.md), not a test.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include <fmt/format.h>

#include "kafka/kafka_env.h"
#include "tools/restoresim/cli_test_util.h"

namespace restoresim::kafka_test {
namespace {

nlohmann::json Soak(const std::string& args) {
  const char* bin = std::getenv("RESTORESIM_BIN");
  EXPECT_NE(bin, nullptr) << "RESTORESIM_BIN names the restoresim binary (meson sets it)";
  if (bin == nullptr) return {};
  const std::string dir = ::testing::TempDir() + "/" + UniqueName("soak");
  std::filesystem::create_directories(dir);  // for the messages file, before the soak runs
  const tools::testing::CliResult r = tools::testing::RunShell(fmt::format(
      "{} soak --cluster three --json --dir {} {} 2>{}/messages.txt", bin, dir, args, dir));
  nlohmann::json report = nlohmann::json::parse(r.out, nullptr, /*allow_exceptions=*/false);
  EXPECT_TRUE(report.is_object()) << "exit " << r.exit_code << ", stdout:\n" << r.out
                                  << "\n(messages in " << dir << "/messages.txt)";
  if (!report.is_object()) return {};
  EXPECT_EQ(report.value("format", ""), "restoresim-soak-report");
  EXPECT_EQ(r.exit_code, report.value("passed", false) ? 0 : 1) << r.out;
  return report;
}

// Seed 4 over two minutes with two instances draws an instance SIGKILLed, the leader of a
// changelog partition killed and a broker killed, each restarted (`restoresim soak --schedule
// --seed 4 --duration 2m --instances 2` prints it: a pure function of the seed).
TEST(KafkaSoakTest, TwoMinutesOfFaultsLoseNothingAndBreakNoInvariant) {
  const nlohmann::json report = Soak("--seed 4 --duration 2m --instances 2 --rate 100");
  ASSERT_TRUE(report.is_object());
  EXPECT_TRUE(report.value("passed", false)) << report.dump(2);
  EXPECT_GE(report.value("faults_injected", 0), 2);
  EXPECT_EQ(report.value("lost", -1), 0);
  EXPECT_GT(report.value("input_records", 0), 5000);
  EXPECT_GT(report.value("events_judged", 0), 10000);
  EXPECT_GT(report.value("stores_audited", 0), 0);
  EXPECT_GT(report.value("restorations", 0), 0);
}

// The same schedule with the instances in a streams group (--group-protocol streams, issue 26):
// the broker places standbys (the cluster's group.streams.num.standby.replicas=1), so the
// instance killed, the changelog leader killed and the broker killed now move standbys and
// recycle them, under the same oracle and audits.
TEST(KafkaSoakTest, AStreamsGroupUnderTheSameFaultsLosesNothingAndBreaksNoInvariant) {
  const nlohmann::json report =
      Soak("--seed 4 --duration 2m --instances 2 --rate 100 --group-protocol streams");
  ASSERT_TRUE(report.is_object());
  EXPECT_TRUE(report.value("passed", false)) << report.dump(2);
  EXPECT_EQ(report.value("group_protocol", ""), "streams");
  EXPECT_GE(report.value("faults_injected", 0), 2);
  EXPECT_EQ(report.value("lost", -1), 0);
  EXPECT_GT(report.value("events_judged", 0), 10000);
  EXPECT_GT(report.value("stores_audited", 0), 0);
}

// checkpoint-keeps-connections (the zoo's KIP-921 thread mutation): a checkpoint that leaves a
// client connected. The simulator's checkpoint_restore invariant catches it at seed 1; here an
// instance's oracle must, at the first checkpoint notification.
TEST(KafkaSoakTest, APlantedMutationIsCaughtByTheRealThreadOracle) {
  const nlohmann::json report = Soak(
      "--seed 1 --duration 90s --instances 1 --faults checkpoint-restore "
      "--mutation checkpoint-keeps-connections");
  ASSERT_TRUE(report.is_object());
  EXPECT_FALSE(report.value("passed", true)) << report.dump(2);
  EXPECT_THAT(report.value("failure", ""), testing::HasSubstr("checkpoint_restore"));
  EXPECT_THAT(report.value("events_file", ""), testing::EndsWith(".events"));
}

}  // namespace
}  // namespace restoresim::kafka_test
