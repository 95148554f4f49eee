#include "core/runtime/runtime_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace restoresim {
namespace {

using ::testing::HasSubstr;

TEST(RuntimeConfigTest, ReadsKafkaStreamsNamesAndDefaults) {
  absl::StatusOr<RuntimeConfig> c = RuntimeConfig::FromProperties({
      {"application.id", "word-counts"},
      {"restoresim.input.topic", "words"},
      {"num.stream.threads", "2"},
      {"num.standby.replicas", "1"},
      {"processing.guarantee", "exactly_once_v2"},
      {"restore.consumer.max.poll.records", "500"},
  });
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->num_stream_threads, 2);
  EXPECT_TRUE(c->exactly_once());
  EXPECT_EQ(c->commit_interval_ms, 100) << "Kafka's exactly-once default";
  EXPECT_EQ(c->restore_max_poll_records, 500);
  c = RuntimeConfig::FromProperties({{"application.id", "a"}, {"restoresim.input.topic", "t"}});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->commit_interval_ms, 30000);
}

// Issue 25: values are trimmed as Kafka's ConfigDef.parseType trims them (Java's String.trim:
// every character up to U+0020 off both ends), numbers and text alike.
TEST(RuntimeConfigTest, ValuesAreTrimmedAsKafkaTrimsThem) {
  absl::StatusOr<RuntimeConfig> c = RuntimeConfig::FromProperties({
      {"application.id", " word-counts\t"},
      {"restoresim.input.topic", "words "},
      {"state.dir", "/var/lib/streams \r"},
      {"num.stream.threads", " 2 "},
      {"processing.guarantee", "exactly_once_v2 "},
      {"max.poll.records", "\t700"},
      {"restore.consumer.max.poll.records", "800\x01"},  // a control character is <= U+0020
  });
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->application_id, "word-counts");
  EXPECT_EQ(c->input_topic, "words");
  EXPECT_EQ(c->state_dir, "/var/lib/streams");
  EXPECT_EQ(c->num_stream_threads, 2);
  EXPECT_TRUE(c->exactly_once());
  EXPECT_EQ(c->max_poll_records, 700);
  EXPECT_EQ(c->restore_max_poll_records, 800);
  // Inside the value nothing changes: a space between digits is still no number.
  c = RuntimeConfig::FromProperties(
      {{"application.id", "a"}, {"restoresim.input.topic", "t"}, {"num.stream.threads", " 2 x"}});
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(std::string(c.status().message()), HasSubstr("num.stream.threads"));
  // The old name of the input topic too.
  c = RuntimeConfig::FromProperties({{"application.id", "a"}, {"input.topic", " old "}});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->input_topic, "old");
}

// The same through a properties file: java.util.Properties drops the value's leading
// whitespace and keeps its trailing whitespace; ConfigDef's trim takes the rest.
TEST(RuntimeConfigTest, PropertiesFileValuesWithTrailingSpacesLoad) {
  std::vector<std::string> warnings;
  absl::StatusOr<RuntimeConfig> c = RuntimeConfig::FromPropertiesText(
      "application.id = app \nnum.stream.threads= 2 \nprocessing.guarantee=at_least_once\t\n",
      &warnings);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->application_id, "app");
  EXPECT_EQ(c->num_stream_threads, 2);
  EXPECT_FALSE(c->exactly_once());
  EXPECT_TRUE(warnings.empty());
}

TEST(RuntimeConfigTest, TaskTimeoutMsDefaultsToKafkasFiveMinutesAndZeroIsAllowed) {
  absl::StatusOr<RuntimeConfig> c =
      RuntimeConfig::FromProperties({{"application.id", "a"}, {"restoresim.input.topic", "t"}});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->task_timeout_ms, 300000);
  c = RuntimeConfig::FromProperties(
      {{"application.id", "a"}, {"restoresim.input.topic", "t"}, {"task.timeout.ms", "0"}});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->task_timeout_ms, 0) << "0: the first retryable error fails the task";
}

TEST(RuntimeConfigTest, AssignorSettingsDefaultToKafkasAndParse) {
  absl::StatusOr<RuntimeConfig> c =
      RuntimeConfig::FromProperties({{"application.id", "a"}, {"restoresim.input.topic", "t"}});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->max_warmup_replicas, 2);
  EXPECT_EQ(c->acceptable_recovery_lag, 10000);
  EXPECT_EQ(c->probing_rebalance_interval_ms, 600000);
  EXPECT_FALSE(c->streams_assignor()) << "the group's default assignment unless asked";
  c = RuntimeConfig::FromProperties({{"application.id", "a"},
                                     {"restoresim.input.topic", "t"},
                                     {"max.warmup.replicas", "5"},
                                     {"acceptable.recovery.lag", "0"},
                                     {"probing.rebalance.interval.ms", "60000"},
                                     {"restoresim.group.assignor", "streams"}});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->max_warmup_replicas, 5);
  EXPECT_EQ(c->acceptable_recovery_lag, 0);
  EXPECT_EQ(c->probing_rebalance_interval_ms, 60000);
  EXPECT_TRUE(c->streams_assignor());
}

TEST(RuntimeConfigTest, GroupProtocolIsClassicUnlessStreamsIsAskedWithoutTheStreamsAssignor) {
  const std::map<std::string, std::string> base = {{"application.id", "a"},
                                                   {"restoresim.input.topic", "t"}};
  absl::StatusOr<RuntimeConfig> c = RuntimeConfig::FromProperties(base);
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c->streams_group());
  std::map<std::string, std::string> props = base;
  props["restoresim.group.protocol"] = "streams";
  c = RuntimeConfig::FromProperties(props);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(c->streams_group());
  EXPECT_THAT(c->ToProperties(),
              ::testing::Contains(std::pair<std::string, std::string>(
                  "restoresim.group.protocol", "streams")));
  props["restoresim.group.protocol"] = "consumer";
  c = RuntimeConfig::FromProperties(props);
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(std::string(c.status().message()),
              HasSubstr("restoresim.group.protocol: 'consumer' is not classic or streams"));
  props["restoresim.group.protocol"] = "streams";
  props["restoresim.group.assignor"] = "streams";
  c = RuntimeConfig::FromProperties(props);
  ASSERT_FALSE(c.ok()) << "the broker assigns a streams group: no client-side assignor";
  EXPECT_THAT(std::string(c.status().message()),
              HasSubstr("restoresim.group.assignor must stay default"));
}

TEST(RuntimeConfigTest, RejectsBadSettingsNamingThem) {
  const std::map<std::string, std::string> base = {{"application.id", "app"},
                                                   {"restoresim.input.topic", "in"}};
  struct Case {
    std::string key, value, message;
  } cases[] = {
      {"num.stream.threads", "0", "num.stream.threads: 0 is outside [1, 64]"},
      {"num.stream.threads", "two", "num.stream.threads: expected an integer, got 'two'"},
      {"processing.guarantee", "exactly_once", "processing.guarantee: 'exactly_once'"},
      {"commit.interval.ms", "-5", "commit.interval.ms: -5 is outside"},
      {"application.id", "bad id!", "application.id: 'bad id!'"},
      {"state.dir", "", "state.dir: must not be empty"},
      {"restore.consumer.max.poll.records", "0", "restore.consumer.max.poll.records"},
      {"task.timeout.ms", "-1", "task.timeout.ms: -1 is outside"},
      {"max.warmup.replicas", "0", "max.warmup.replicas: 0 is outside [1, "},
      {"acceptable.recovery.lag", "-1", "acceptable.recovery.lag: -1 is outside"},
      {"probing.rebalance.interval.ms", "59999", "probing.rebalance.interval.ms: 59999 is"},
      {"restoresim.group.assignor", "sticky", "restoresim.group.assignor: 'sticky' is not"},
  };
  for (const Case& c : cases) {
    std::map<std::string, std::string> props = base;
    props[c.key] = c.value;
    absl::StatusOr<RuntimeConfig> r = RuntimeConfig::FromProperties(props);
    ASSERT_FALSE(r.ok()) << c.key << "=" << c.value;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(r.status().message()), HasSubstr(c.message));
  }
  absl::StatusOr<RuntimeConfig> missing =
      RuntimeConfig::FromProperties({{"restoresim.input.topic", "in"}});
  ASSERT_FALSE(missing.ok()) << "no application.id";
  EXPECT_THAT(std::string(missing.status().message()), HasSubstr("application.id: missing"));
}

// Issue 27: the restore thread's share of the time while its stream thread has input.
TEST(RuntimeConfigTest, RestoreShareWhileProcessingIsAPercentageDefaulting10) {
  absl::StatusOr<RuntimeConfig> c = RuntimeConfig::FromProperties({{"application.id", "a"}});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->restore_share_while_processing_percent, 10);
  c = RuntimeConfig::FromProperties(
      {{"application.id", "a"}, {"restoresim.restore.share.while.processing.percent", "100"}});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->restore_share_while_processing_percent, 100);
  for (const char* bad : {"0", "101", "-5", "half"}) {
    c = RuntimeConfig::FromProperties(
        {{"application.id", "a"}, {"restoresim.restore.share.while.processing.percent", bad}});
    ASSERT_FALSE(c.ok()) << bad;
    EXPECT_THAT(c.status().message(),
                HasSubstr("restoresim.restore.share.while.processing.percent"));
  }
}

TEST(RuntimeConfigTest, UnknownKeysAreWarnedAboutAndIgnored) {
  std::vector<std::string> warnings;
  absl::StatusOr<RuntimeConfig> c = RuntimeConfig::FromProperties(
      {{"application.id", "app"},
       {"restoresim.input.topic", "in"},
       {"no.such.setting", "1"},
       {"default.key.serde", "org.apache.kafka.common.serialization.Serdes$StringSerde"},
       {"producer.linger.ms", "5"},
       {"bootstrap.servers", "localhost:9092"},
       {"commit.interval.ms", "250"}},
      &warnings);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->commit_interval_ms, 250) << "known keys still apply";
  EXPECT_THAT(warnings,
              ::testing::UnorderedElementsAre(
                  HasSubstr("'no.such.setting' was supplied but isn't a known config"),
                  HasSubstr("'default.key.serde' is Kafka Streams' but not modelled"),
                  HasSubstr("'producer.linger.ms' is for Kafka Streams' clients"),
                  HasSubstr("'bootstrap.servers' is for Kafka Streams' clients")));
  EXPECT_TRUE(RuntimeConfig::FromProperties({{"application.id", "app"},
                                             {"restoresim.input.topic", "in"},
                                             {"no.such.setting", "1"}})
                  .ok())
      << "without a warnings list the key is still ignored";
}

TEST(RuntimeConfigTest, ABadValueOfAKnownKeyIsStillAnErrorAmongUnknownKeys) {
  std::vector<std::string> warnings;
  absl::StatusOr<RuntimeConfig> c = RuntimeConfig::FromProperties(
      {{"application.id", "app"},
       {"restoresim.input.topic", "in"},
       {"x.y", "1"},
       {"poll.ms", "soon"}},
      &warnings);
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(std::string(c.status().message()), HasSubstr("poll.ms: expected an integer"));
}

TEST(RuntimeConfigTest, CheckpointIntervalIsCommitIntervalMsAndItsOldKeyIsUnknown) {
  std::vector<std::string> warnings;
  absl::StatusOr<RuntimeConfig> c = RuntimeConfig::FromProperties(
      {{"application.id", "app"},
       {"restoresim.input.topic", "in"},
       {"checkpoint.interval.ms", "5"}},
      &warnings);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_THAT(warnings, ::testing::ElementsAre(HasSubstr("'checkpoint.interval.ms'")));
  EXPECT_EQ(c->checkpoint_offset_delta_min, 10000) << "Kafka's threshold by default";
}

TEST(RuntimeConfigTest, ARealKafkaStreamsPropertiesFileLoads) {
  const std::string text =
      "# streams.properties of a word-count application\n"
      "application.id=word-counts\n"
      "bootstrap.servers = broker-1:9092,\\\n"
      "                    broker-2:9092\n"
      "restoresim.input.topic: words\n"
      "default.key.serde=org.apache.kafka.common.serialization.Serdes$StringSerde\n"
      "processing.guarantee=exactly_once_v2\n"
      "num.standby.replicas=1\n"
      "statestore.cache.max.bytes=10485760\n"
      "consumer.session.timeout.ms=45000\n";
  std::vector<std::string> warnings;
  absl::StatusOr<RuntimeConfig> c = RuntimeConfig::FromPropertiesText(text, &warnings);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->application_id, "word-counts");
  EXPECT_EQ(c->input_topic, "words");
  EXPECT_TRUE(c->exactly_once());
  EXPECT_EQ(c->num_standby_replicas, 1);
  EXPECT_EQ(warnings.size(), 4u);
  absl::StatusOr<RuntimeConfig> bad =
      RuntimeConfig::FromPropertiesText("application.id=a\nx=\\u12\n", &warnings);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("line 2: malformed \\uxxxx"));
}

// Issue 24: the consumers' max.poll.records as Kafka Streams resolves it for each consumer:
// the bare client key, overridden by "consumer.", overridden by the consumer's own prefix.
TEST(RuntimeConfigTest, MaxPollRecordsFollowsKafkasPrecedenceForEachConsumer) {
  const std::map<std::string, std::string> base = {{"application.id", "app"}};
  auto resolved = [&](std::map<std::string, std::string> extra) {
    extra.insert(base.begin(), base.end());
    std::vector<std::string> warnings;
    absl::StatusOr<RuntimeConfig> c = RuntimeConfig::FromProperties(extra, &warnings);
    EXPECT_TRUE(c.ok()) << c.status();
    EXPECT_THAT(warnings, ::testing::IsEmpty()) << "every key here is modelled";
    return std::pair{c->max_poll_records, c->restore_max_poll_records};
  };
  EXPECT_EQ(resolved({}), std::pair(1000, 1000)) << "Kafka's default";
  EXPECT_EQ(resolved({{"max.poll.records", "7"}}), std::pair(7, 7));
  EXPECT_EQ(resolved({{"max.poll.records", "7"}, {"consumer.max.poll.records", "8"}}),
            std::pair(8, 8));
  EXPECT_EQ(resolved({{"max.poll.records", "7"},
                      {"consumer.max.poll.records", "8"},
                      {"main.consumer.max.poll.records", "9"}}),
            std::pair(9, 8));
  EXPECT_EQ(resolved({{"consumer.max.poll.records", "8"},
                      {"restore.consumer.max.poll.records", "10"}}),
            std::pair(8, 10));
  absl::StatusOr<RuntimeConfig> bad =
      RuntimeConfig::FromProperties({{"application.id", "a"}, {"consumer.max.poll.records", "x"}});
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()),
              HasSubstr("consumer.max.poll.records: expected an integer"));
}

// Issue 24: restoresim's own settings are under "restoresim." with defaults; the old
// `input.topic` is still read, with a warning naming the new key.
TEST(RuntimeConfigTest, OwnSettingsHaveThePrefixAndDefaults) {
  std::vector<std::string> warnings;
  absl::StatusOr<RuntimeConfig> c =
      RuntimeConfig::FromProperties({{"application.id", "app"}}, &warnings);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->input_topic, "input");
  EXPECT_THAT(warnings, ::testing::IsEmpty());
  c = RuntimeConfig::FromProperties({{"application.id", "app"}, {"input.topic", "old"}},
                                    &warnings);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->input_topic, "old");
  EXPECT_THAT(warnings, ::testing::ElementsAre(HasSubstr("use that")));
  c = RuntimeConfig::FromProperties({{"application.id", "app"},
                                     {"input.topic", "old"},
                                     {"restoresim.input.topic", "new"}});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->input_topic, "new") << "the prefixed key wins";
  c = RuntimeConfig::FromProperties({{"application.id", "app"}, {"restoresim.input.topic", ""}});
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(std::string(c.status().message()), HasSubstr("restoresim.input.topic: ''"));
  // Bare client settings are classed as client settings.
  warnings.clear();
  ASSERT_TRUE(RuntimeConfig::FromProperties({{"application.id", "app"}, {"linger.ms", "5"}},
                                            &warnings)
                  .ok());
  EXPECT_THAT(warnings, ::testing::ElementsAre(HasSubstr("is for Kafka Streams' clients")));
}

}  // namespace
}  // namespace restoresim
