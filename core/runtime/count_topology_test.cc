#include "core/runtime/count_topology.h"

#include <gtest/gtest.h>

#include "core/runtime/task_id.h"
#include "core/state/log_store.h"

namespace restoresim {
namespace {

ConsumerRecord In(int64_t offset, std::string key, std::optional<std::string> value) {
  return ConsumerRecord{offset, std::move(key), std::move(value), 0};
}

TEST(CountTopologyTest, ReferenceFoldsUpdatesDeletesAndSkipsMalformedValues) {
  const std::vector<ConsumerRecord> inputs = {
      In(0, "a", "1"), In(1, "b", "5"), In(2, "a", "2"),  In(3, "b", std::nullopt),
      In(4, "c", "x"), In(5, "b", "-3"), In(6, "a", "10"),
  };
  EXPECT_EQ(ReferenceCounts(inputs),
            (std::map<std::string, std::string>{{"a", "13"}, {"b", "-3"}}));
  // From a restored store: the input applies on top of it.
  EXPECT_EQ(ReferenceCounts({In(0, "a", "2"), In(1, "z", std::nullopt)}, {{"a", "5"}, {"z", "1"}}),
            (std::map<std::string, std::string>{{"a", "7"}}));
}

TEST(CountTopologyTest, ChangelogOfTheUpdatesFoldsToTheSameContents) {
  const std::vector<ConsumerRecord> inputs = {In(0, "k", "1"), In(1, "k", "1"),
                                              In(2, "j", "4"), In(3, "k", std::nullopt),
                                              In(4, "k", "7")};
  std::map<std::string, std::string> store;
  std::vector<ConsumerRecord> changelog;
  for (const ConsumerRecord& r : inputs) {
    std::optional<std::string> current;
    if (auto it = store.find(r.key); it != store.end()) current = it->second;
    std::optional<KeyValueWrite> w = CountUpdate(r, current);
    ASSERT_TRUE(w.has_value());
    changelog.push_back(In(static_cast<int64_t>(changelog.size()), w->key, w->value));
    if (w->value) {
      store[w->key] = *w->value;
    } else {
      store.erase(w->key);
    }
  }
  EXPECT_EQ(FoldChangelog(changelog), ReferenceCounts(inputs));
  EXPECT_EQ(store, ReferenceCounts(inputs));
  EXPECT_EQ(ChangelogTopic("app", kCountsStoreName), "app-counts-changelog");
}

TEST(TaskIdTest, PrintsAndParsesLikeKafkaStreams) {
  EXPECT_EQ((TaskId{0, 12}).ToString(), "0_12");
  EXPECT_EQ(TaskId::Parse("3_4"), (TaskId{3, 4}));
  for (const char* bad : {"", "3", "3_", "_4", "a_1", "1_-2", "1_2_3"}) {
    EXPECT_EQ(TaskId::Parse(bad), std::nullopt) << bad;
  }
  EXPECT_EQ((TaskIncarnation{{0, 1}, 7}).ToString(), "0_1#7");
  EXPECT_LT((TaskIncarnation{{0, 1}, 7}), (TaskIncarnation{{0, 1}, 8}));
}

}  // namespace
}  // namespace restoresim
