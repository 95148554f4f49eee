// The process id kept in the state directory (core/runtime/process_file.h) on real threads, with
// the fake broker: two hosts that use the same state.dir path (two file systems) are two
// processes; a restart over the same state directory is the same process; the file is Kafka
// Streams' own. Before 2026-12-06 the id was the path made an id, so the first check failed.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "core/port/system_clock.h"
#include "core/runtime/process_file.h"
#include "core/runtime/runtime.h"
#include "core/state/log_store.h"
#include "fakes/fake_broker.h"
#include "fakes/mem_file_system.h"

namespace restoresim {
namespace {

constexpr char kStateDir[] = "/state";
constexpr char kProcessFile[] = "/state/app/kafka-streams-process-metadata";

class RealThreadProcessIdTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(broker_.CreateTopic("app-counts-changelog", 2).ok());
    ASSERT_TRUE(broker_.CreateTopic("input", 2).ok());
    config_.application_id = "app";
    config_.input_topic = "input";
    config_.state_dir = kStateDir;
    config_.poll_ms = 5;
  }
  static StoreOpener Opener(fakes::MemFileSystem& fs) {
    return [&fs](const std::string& dir,
                 const std::string& name) -> absl::StatusOr<std::unique_ptr<KeyValueStore>> {
      auto store = LogStore::Open(fs, dir, name);
      if (!store.ok()) return store.status();
      return std::unique_ptr<KeyValueStore>(std::move(*store));
    };
  }
  std::unique_ptr<Runtime> Host(fakes::MemFileSystem& fs) {
    return std::make_unique<Runtime>(config_, broker_, clock_, fs, Opener(fs));
  }

  SystemClock& clock_ = *SystemClock::Default();
  fakes::FakeBroker broker_{clock_, nullptr, fakes::BrokerFaults{}};
  RuntimeConfig config_;
};

TEST_F(RealThreadProcessIdTest, TwoHostsWithOneStateDirPathAreTwoProcesses) {
  fakes::MemFileSystem host_a;
  fakes::MemFileSystem host_b;
  std::unique_ptr<Runtime> a = Host(host_a);
  std::unique_ptr<Runtime> b = Host(host_b);
  ASSERT_TRUE(a->Start().ok());
  ASSERT_TRUE(b->Start().ok());
  EXPECT_NE(a->group_process_id(), b->group_process_id());
  for (auto [fs, runtime] : {std::pair{&host_a, a.get()}, std::pair{&host_b, b.get()}}) {
    absl::StatusOr<std::string> file = fs->ReadFile(kProcessFile);
    ASSERT_TRUE(file.ok()) << file.status();
    EXPECT_EQ(ParseProcessFile(*file), runtime->group_process_id()) << *file;
    EXPECT_EQ(runtime->group_process_id().size(), 36u) << "a UUID: " << runtime->group_process_id();
  }
  EXPECT_TRUE(a->Close(10 * kSecond).ok());
  EXPECT_TRUE(b->Close(10 * kSecond).ok());
}

TEST_F(RealThreadProcessIdTest, ARestartOverTheSameStateDirectoryIsTheSameProcess) {
  fakes::MemFileSystem host;
  std::string first;
  {
    std::unique_ptr<Runtime> runtime = Host(host);
    ASSERT_TRUE(runtime->Start().ok());
    first = runtime->group_process_id();
    EXPECT_TRUE(runtime->Close(10 * kSecond).ok());
  }
  std::unique_ptr<Runtime> again = Host(host);
  ASSERT_TRUE(again->Start().ok());
  EXPECT_EQ(again->group_process_id(), first);
  EXPECT_TRUE(again->Close(10 * kSecond).ok());
}

TEST_F(RealThreadProcessIdTest, KafkaStreamsOwnProcessFileIsTaken) {
  fakes::MemFileSystem host;
  ASSERT_TRUE(host.CreateDirIfMissing("/state").ok());
  ASSERT_TRUE(host.CreateDirIfMissing("/state/app").ok());
  ASSERT_TRUE(WriteFileAtomically(host, kProcessFile,
                                  "{\"processId\":\"0f4c2a9e-7d1b-4e8a-b3c5-6a7f8e9d0c1b\"}")
                  .ok());
  std::unique_ptr<Runtime> runtime = Host(host);
  ASSERT_TRUE(runtime->Start().ok());
  EXPECT_EQ(runtime->group_process_id(), "0f4c2a9e-7d1b-4e8a-b3c5-6a7f8e9d0c1b");
  EXPECT_TRUE(runtime->Close(10 * kSecond).ok());
}

}  // namespace
}  // namespace restoresim
