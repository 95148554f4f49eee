// The librdkafka adapter's parts that need no broker: the error table, the settings table, and
// how clients behave when the cluster cannot be reached (retryable errors within the request
// timeout, never a hang; a poll with nothing assigned waits out its timeout).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <librdkafka/rdkafka.h>

#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/port/system_clock.h"
#include "core/transport/rdkafka/kafka_protocol_connection.h"
#include "core/transport/rdkafka/rdkafka_errors.h"
#include "core/transport/rdkafka/rdkafka_settings.h"
#include "core/transport/rdkafka/rdkafka_transport.h"

namespace restoresim::rdkafka {
namespace {

using ::testing::HasSubstr;

TEST(RdKafkaErrorsTest, RetryableCodesAreTheOnesACallerMayRetry) {
  for (rd_kafka_resp_err_t err :
       {RD_KAFKA_RESP_ERR__TIMED_OUT, RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT,
        RD_KAFKA_RESP_ERR__TRANSPORT, RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN,
        RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION, RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE,
        RD_KAFKA_RESP_ERR_COORDINATOR_LOAD_IN_PROGRESS, RD_KAFKA_RESP_ERR__QUEUE_FULL}) {
    EXPECT_TRUE(IsRetryable(ToStatus(err, "call"))) << rd_kafka_err2name(err);
  }
  for (rd_kafka_resp_err_t err :
       {RD_KAFKA_RESP_ERR_OFFSET_OUT_OF_RANGE, RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART,
        RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS, RD_KAFKA_RESP_ERR_PRODUCER_FENCED,
        RD_KAFKA_RESP_ERR_ILLEGAL_GENERATION, RD_KAFKA_RESP_ERR__INVALID_ARG,
        RD_KAFKA_RESP_ERR_CLUSTER_AUTHORIZATION_FAILED}) {
    EXPECT_FALSE(IsRetryable(ToStatus(err, "call"))) << rd_kafka_err2name(err);
  }
}

TEST(RdKafkaErrorsTest, CodesFollowThePortsTable) {
  using C = absl::StatusCode;
  EXPECT_TRUE(ToStatus(RD_KAFKA_RESP_ERR_NO_ERROR, "call").ok());
  EXPECT_EQ(StatusCodeOf(RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET), C::kOutOfRange);
  EXPECT_EQ(StatusCodeOf(RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION), C::kNotFound);
  EXPECT_EQ(StatusCodeOf(RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS), C::kAlreadyExists);
  EXPECT_EQ(StatusCodeOf(RD_KAFKA_RESP_ERR__FENCED), C::kAborted);
  EXPECT_EQ(StatusCodeOf(RD_KAFKA_RESP_ERR_REBALANCE_IN_PROGRESS), C::kFailedPrecondition);
  EXPECT_EQ(StatusCodeOf(RD_KAFKA_RESP_ERR__TIMED_OUT), C::kDeadlineExceeded);
  EXPECT_EQ(StatusCodeOf(RD_KAFKA_RESP_ERR_CLUSTER_AUTHORIZATION_FAILED), C::kPermissionDenied);
  EXPECT_EQ(StatusCodeOf(RD_KAFKA_RESP_ERR_INCONSISTENT_VOTER_SET), C::kInternal);
  const absl::Status s = ToStatus(RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART, "end offsets of t-0");
  EXPECT_THAT(s.message(), HasSubstr("end offsets of t-0"));
  EXPECT_THAT(s.message(), HasSubstr("UNKNOWN_TOPIC_OR_PART")) << "names librdkafka's code";
}

// Every error code of StreamsGroupHeartbeat, StreamsGroupDescribe and ApiVersions (Kafka 4.4's
// schemas list them), by its wire number: librdkafka 2.0.2 names none past 97.
TEST(RdKafkaErrorsTest, TheStreamsGroupMessagesErrorsHaveRows) {
  using C = absl::StatusCode;
  const std::vector<std::pair<int16_t, C>> rows = {
      {0, C::kOk}, {14, C::kUnavailable}, {15, C::kUnavailable}, {16, C::kUnavailable},
      {24, C::kInvalidArgument}, {25, C::kFailedPrecondition}, {29, C::kPermissionDenied},
      {30, C::kPermissionDenied}, {31, C::kPermissionDenied}, {35, C::kUnimplemented},
      {42, C::kInvalidArgument}, {69, C::kNotFound}, {81, C::kResourceExhausted},
      {110, C::kFailedPrecondition}, {111, C::kAborted}, {130, C::kInvalidArgument},
      {131, C::kInvalidArgument}, {132, C::kFailedPrecondition}};
  for (const auto& [code, want] : rows) {
    EXPECT_EQ(KafkaErrorToStatus(code, std::nullopt, "heartbeat").code(), want) << code;
  }
  const absl::Status fenced = KafkaErrorToStatus(110, "epoch 3 is stale", "heartbeat of m");
  EXPECT_THAT(fenced.message(), HasSubstr("heartbeat of m: FENCED_MEMBER_EPOCH (110)"));
  EXPECT_THAT(fenced.message(), HasSubstr("epoch 3 is stale")) << "the broker's own message";
  EXPECT_THAT(KafkaErrorToStatus(69, std::nullopt, "describe").message(),
              HasSubstr("GROUP_ID_NOT_FOUND"));
}

// Every error code of OffsetFetch v8-v9 (Kafka 4.4's schema lists them), and UNKNOWN_TOPIC_ID of
// v10: the admin's committed offsets judge them through this table.
TEST(RdKafkaErrorsTest, TheOffsetFetchErrorsHaveRows) {
  using C = absl::StatusCode;
  const std::vector<std::pair<int16_t, C>> rows = {
      {30, C::kPermissionDenied}, {16, C::kUnavailable}, {15, C::kUnavailable},
      {14, C::kUnavailable},      {69, C::kNotFound},    {88, C::kUnavailable},
      {25, C::kFailedPrecondition}, {113, C::kFailedPrecondition}, {100, C::kNotFound}};
  for (const auto& [code, want] : rows) {
    EXPECT_EQ(KafkaErrorToStatus(code, std::nullopt, "offset fetch").code(), want) << code;
  }
  EXPECT_TRUE(RetriableCoordinatorError(16) && RetriableCoordinatorError(15) &&
              RetriableCoordinatorError(14));
  EXPECT_FALSE(RetriableCoordinatorError(88)) << "an unstable offset is not the coordinator's";
}

TEST(RdKafkaErrorsTest, ErrorObjectsKeepTheirCodeAndMessage) {
  EXPECT_TRUE(ToStatus(static_cast<rd_kafka_error_t*>(nullptr), "call").ok());
  absl::Status s = ToStatus(rd_kafka_error_new(RD_KAFKA_RESP_ERR__STATE, "not now"), "assign");
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("not now"));
}

TEST(RdKafkaSettingsTest, EveryClientsSettingsAreAcceptedAndExplained) {
  RdKafkaOptions options;
  options.bootstrap_servers = "127.0.0.1:1";
  ConsumerConfig config;
  config.client_id = "c";
  TransactionalProducerConfig transactional;
  transactional.transactional_id = "t";
  for (ClientKind kind :
       {ClientKind::kRestoreConsumer, ClientKind::kMainConsumer,
        ClientKind::kStreamsGroupConsumer, ClientKind::kAdmin,
        ClientKind::kAdminReadCommitted, ClientKind::kProducer,
        ClientKind::kTransactionalProducer}) {
    const std::vector<Setting> settings =
        SettingsFor(kind, options, "c", &config, "g", &transactional);
    std::set<std::string> names;
    for (const Setting& setting : settings) {
      EXPECT_TRUE(names.insert(setting.name).second) << setting.name << " set twice";
      EXPECT_GT(std::string(setting.reason).size(), 10u) << setting.name << " without a reason";
    }
    absl::StatusOr<rd_kafka_conf_t*> conf = NewConf(settings);
    ASSERT_TRUE(conf.ok()) << conf.status();
    rd_kafka_conf_destroy(*conf);
  }
}

TEST(RdKafkaSettingsTest, ConsumersPrefetchMoreThanASecondOfRestoreThroughput) {
  RdKafkaOptions options;
  options.bootstrap_servers = "127.0.0.1:1";
  ConsumerConfig config;
  int found = 0;
  for (const Setting& s : SettingsFor(ClientKind::kRestoreConsumer, options, "c", &config, "")) {
    // librdkafka 2.0.2 pauses fetching past queued.min.messages for about a second.
    if (s.name != "queued.min.messages") continue;
    ++found;
    EXPECT_GE(std::stoll(s.value), 1'000'000);
  }
  EXPECT_EQ(found, 1);
}

TEST(RdKafkaSettingsTest, ConsumersTakeTheIsolationLevelOfTheirConfig) {
  RdKafkaOptions options;
  options.bootstrap_servers = "127.0.0.1:1";
  ConsumerConfig config;
  for (IsolationLevel level : {IsolationLevel::kReadUncommitted, IsolationLevel::kReadCommitted}) {
    config.isolation_level = level;
    int found = 0;
    for (const Setting& s : SettingsFor(ClientKind::kRestoreConsumer, options, "c", &config, "")) {
      if (s.name != "isolation.level") continue;
      ++found;
      EXPECT_EQ(s.value, level == IsolationLevel::kReadCommitted ? "read_committed"
                                                                 : "read_uncommitted");
    }
    EXPECT_EQ(found, 1);
  }
}

TEST(RdKafkaErrorsTest, TransactionalErrorsAreFatalAbortableOrRetriable) {
  EXPECT_EQ(StatusCodeOf(RD_KAFKA_RESP_ERR_PRODUCER_FENCED), absl::StatusCode::kAborted);
  EXPECT_EQ(StatusCodeOf(RD_KAFKA_RESP_ERR_INVALID_PRODUCER_EPOCH), absl::StatusCode::kAborted);
  EXPECT_EQ(StatusCodeOf(RD_KAFKA_RESP_ERR_CONCURRENT_TRANSACTIONS),
            absl::StatusCode::kUnavailable);
  EXPECT_EQ(StatusCodeOf(RD_KAFKA_RESP_ERR_INVALID_TXN_STATE),
            absl::StatusCode::kFailedPrecondition);
  rd_kafka_error_t* abortable = rd_kafka_error_new(RD_KAFKA_RESP_ERR__STATE, "x");
  // No public constructor marks an error abortable or fatal; the plain one keeps its code.
  EXPECT_EQ(ToStatus(abortable, "commit").code(), absl::StatusCode::kFailedPrecondition);
}

TEST(RdKafkaSettingsTest, ARefusedSettingIsNamed) {
  absl::StatusOr<rd_kafka_conf_t*> conf = NewConf({{"no.such.setting", "1", "a test"}});
  EXPECT_EQ(conf.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(conf.status().message(), HasSubstr("no.such.setting"));
}

// Nothing listens on port 1: every call that needs the cluster gives a retryable error within
// the request timeout.
TEST(RdKafkaTransportTest, AnUnreachableClusterGivesRetryableErrorsWithinTheTimeout) {
  SystemClock& clock = *SystemClock::Default();
  RdKafkaOptions options;
  options.bootstrap_servers = "127.0.0.1:1";
  options.request_timeout_ns = 500 * kMillisecond;
  RdKafkaTransport transport(options, clock);
  auto admin = transport.NewAdmin("unreachable");
  const TimeNs start = clock.NowNs();
  absl::StatusOr<int32_t> count = admin->PartitionCount("t");
  EXPECT_TRUE(IsRetryable(count.status())) << count.status();
  absl::StatusOr<std::map<TopicPartition, int64_t>> end = admin->EndOffsets({{"t", 0}});
  EXPECT_TRUE(IsRetryable(end.status())) << end.status();
  EXPECT_LT(clock.NowNs() - start, 5 * kSecond);
}

TEST(RdKafkaTransportTest, APollWithNothingAssignedWaitsOutItsTimeoutAndReturnsNothing) {
  SystemClock& clock = *SystemClock::Default();
  RdKafkaOptions options;
  options.bootstrap_servers = "127.0.0.1:1";
  RdKafkaTransport transport(options, clock);
  auto consumer = transport.NewRestoreConsumer({.client_id = "idle"});
  const TimeNs start = clock.NowNs();
  absl::StatusOr<PollResult> polled = consumer->Poll(300 * kMillisecond);
  const TimeNs waited = clock.NowNs() - start;
  // A transport error event about the unreachable broker may end the poll early as
  // kUnavailable; otherwise it waited the whole timeout and got nothing.
  if (polled.ok()) {
    EXPECT_EQ(polled->RecordCount(), 0u);
    EXPECT_GE(waited, 300 * kMillisecond);
  } else {
    EXPECT_TRUE(IsRetryable(polled.status())) << polled.status();
  }
  EXPECT_LT(waited, 2 * kSecond);
}

}  // namespace
}  // namespace restoresim::rdkafka
