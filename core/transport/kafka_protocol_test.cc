// The Kafka protocol codec (issue 26) without a broker: primitives against bytes worked out by
// hand from Kafka's protocol guide, every message through encode and decode, and every
// truncation and a few forgeries refused as errors. Byte-for-byte agreement with Kafka's own
// classes is kafka/kafka_protocol_conformance_test.cc (suite kafka: it needs the JDK).
#include <gtest/gtest.h>

#include <string>

#include "core/transport/kafka_protocol.h"
#include "core/transport/kafka_protocol_messages.h"

namespace restoresim::kafka_protocol {
namespace {

std::string Hex(const std::string& b) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (char c : b) {
    out += kDigits[(static_cast<uint8_t>(c) >> 4) & 0xf];
    out += kDigits[static_cast<uint8_t>(c) & 0xf];
  }
  return out;
}

TEST(KafkaProtocolTest, VarintsAndCompactFormsMatchTheProtocolGuide) {
  Writer w;
  w.UnsignedVarint(0);
  w.UnsignedVarint(127);
  w.UnsignedVarint(128);
  w.UnsignedVarint(300);
  w.UnsignedVarint(0xffffffffu);
  EXPECT_EQ(Hex(w.bytes()), "007f8001ac02ffffffff0f");
  Writer s;
  s.CompactString("ab");
  s.CompactNullableString(std::nullopt);
  s.NullableString(std::nullopt);
  s.NullableString("c");
  s.CompactNullableArrayLength(std::nullopt);
  s.CompactArrayLength(0);
  s.TaggedFields({{1, "x"}, {300, ""}});
  EXPECT_EQ(Hex(s.bytes()), "036162" "00" "ffff" "000163" "00" "01" "02" "0101" "78" "ac0200");
  Reader r(w.bytes());
  EXPECT_EQ(r.UnsignedVarint(), 0u);
  EXPECT_EQ(r.UnsignedVarint(), 127u);
  EXPECT_EQ(r.UnsignedVarint(), 128u);
  EXPECT_EQ(r.UnsignedVarint(), 300u);
  EXPECT_EQ(r.UnsignedVarint(), 0xffffffffu);
  r.ExpectEnd();
  EXPECT_TRUE(r.ok()) << r.status();
}

TEST(KafkaProtocolTest, MalformedPrimitivesAreErrorsThatStick) {
  const std::string too_long_bytes("\xff\xff\xff\xff\x1f", 5);  // more than 32 bits
  Reader too_long(too_long_bytes);
  too_long.UnsignedVarint();
  EXPECT_FALSE(too_long.ok());
  const std::string forged_bytes("\xff\xff\x03", 3);  // 65534 elements in 0 bytes
  Reader forged(forged_bytes);
  forged.CompactArrayLength(1);
  EXPECT_FALSE(forged.ok());
  EXPECT_EQ(forged.status().code(), absl::StatusCode::kDataLoss);
  const std::string null_bytes("\x00", 1);
  Reader null_required(null_bytes);
  null_required.CompactString();
  EXPECT_FALSE(null_required.ok());
  const std::string unsorted_bytes("\x02\x05\x00\x03\x00", 5);  // tags 5 then 3
  Reader unsorted(unsorted_bytes);
  unsorted.TaggedFields();
  EXPECT_FALSE(unsorted.ok());
  EXPECT_EQ(unsorted.Int32(), 0) << "reads after a failure return zeros";
}

StreamsGroupHeartbeatRequest JoiningRequest() {
  StreamsGroupHeartbeatRequest m;
  m.group_id = "app";
  m.member_id = "member-1";
  m.rebalance_timeout_ms = 300000;
  Subtopology s{.subtopology_id = "0", .source_topics = {"input"}};
  s.state_changelog_topics.push_back(TopicInfo{"app-store-changelog", 0, 0, {{"k", "v"}}});
  s.copartition_groups.push_back(CopartitionGroup{{0}, {}, {}});
  m.topology = Topology{1, {s}};
  m.active_tasks = std::vector<TaskIds>{};
  m.process_id = "process-1";
  m.user_endpoint = Endpoint{"localhost", 65535};
  m.task_offsets = std::vector<TaskOffset>{{"0", 3, int64_t{1} << 40}};
  m.tagged_fields = {{7, std::string("\x01\x02", 2)}};
  return m;
}

StreamsGroupHeartbeatResponse AssigningResponse() {
  StreamsGroupHeartbeatResponse m;
  m.error_code = 0;
  m.member_id = "member-1";
  m.member_epoch = 2;
  m.heartbeat_interval_ms = 1000;
  m.acceptable_recovery_lag = 10000;
  m.task_offset_interval_ms = 60000;
  m.status = std::vector<StreamsGroupStatus>{{3, "missing app-store-changelog"}};
  m.active_tasks = std::vector<TaskIds>{{"0", {0, 2}}};
  m.standby_tasks = std::vector<TaskIds>{{"0", {1}}};
  m.topology_description_required = true;
  m.partitions_by_user_endpoint = std::vector<EndpointToPartitions>{
      {Endpoint{"h", 1}, {{"input", {0}}}, {}}};
  return m;
}

// Every proper prefix of `bytes` is refused, and the whole decodes to `want`.
template <typename T, typename Decode>
void ExpectRoundTripAndTruncationsRefused(const T& want, const std::string& bytes, Decode d) {
  absl::StatusOr<T> got = d(bytes);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE(*got == want);
  for (size_t n = 0; n < bytes.size(); ++n) {
    EXPECT_FALSE(d(bytes.substr(0, n)).ok()) << "prefix of " << n << " bytes accepted";
  }
  EXPECT_FALSE(d(bytes + std::string(1, '\0')).ok()) << "a trailing byte accepted";
}

TEST(KafkaProtocolTest, HeartbeatsRoundTripAtBothVersions) {
  for (int16_t v : {int16_t{0}, int16_t{1}}) {
    ExpectRoundTripAndTruncationsRefused(JoiningRequest(), Encode(JoiningRequest(), v),
        [v](const std::string& b) { return DecodeStreamsGroupHeartbeatRequest(b, v); });
    StreamsGroupHeartbeatResponse want = AssigningResponse();
    if (v == 0) want.topology_description_required = false;  // a v1 field
    ExpectRoundTripAndTruncationsRefused(want, Encode(want, v),
        [v](const std::string& b) { return DecodeStreamsGroupHeartbeatResponse(b, v); });
  }
  EXPECT_EQ(DecodeStreamsGroupHeartbeatResponse("", 2).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(KafkaProtocolTest, TheLeaveHeartbeatHasTheSizeOfItsFields) {
  StreamsGroupHeartbeatRequest leave{.group_id = "g", .member_id = "m", .member_epoch = -1};
  // 2 + 2 strings, 4 + 4 epochs, 1 + 1 nulls, 4 timeout, 1 topology marker, 3 null arrays,
  // 1 null string, 1 endpoint marker, 3 null arrays, 1 bool, 1 tagged fields.
  EXPECT_EQ(Encode(leave, 1).size(), 29u);
}

TEST(KafkaProtocolTest, DescribeAndApiVersionsRoundTrip) {
  StreamsGroupDescribeRequest req{{"app", "other"}, true, true, {}};
  ExpectRoundTripAndTruncationsRefused(req, Encode(req, 1), [](const std::string& b) {
    return DecodeStreamsGroupDescribeRequest(b, 1);
  });
  DescribedMember member{.member_id = "m", .client_id = "c", .client_host = "/127.0.0.1",
                         .process_id = "p"};
  member.assignment.active_tasks = {{"0", {0}}};
  member.target_assignment.standby_tasks = {{"0", {1}}};
  DescribedGroup group{.group_id = "app", .group_state = "Stable", .group_epoch = 3};
  group.topology = DescribedTopology{1, std::vector<Subtopology>{{.subtopology_id = "0"}}};
  group.members = {member};
  group.topology_description = TopologyDescription{
      {{"0", {DescribedNode{.name = "KSTREAM-SOURCE-0000000000", .successors = {"x"}}}}}, {}};
  group.assignor_name = "sticky";
  StreamsGroupDescribeResponse resp{0, {group}, {}};
  ExpectRoundTripAndTruncationsRefused(resp, Encode(resp, 1), [](const std::string& b) {
    return DecodeStreamsGroupDescribeResponse(b, 1);
  });
  ApiVersionsResponse versions{0, {{18, 0, 4}, {88, 0, 1}}, 0, {{0, "features"}}};
  ExpectRoundTripAndTruncationsRefused(versions, Encode(versions, 3), [](const std::string& b) {
    return DecodeApiVersionsResponse(b, 3);
  });
  FindCoordinatorResponse found{0, {{"app", 2, "127.0.0.1", 9092, 15, std::nullopt}}, {}};
  ExpectRoundTripAndTruncationsRefused(found, Encode(found, 6), [](const std::string& b) {
    return DecodeFindCoordinatorResponse(b, 6);
  });
  ASSERT_TRUE(versions.Find(88).has_value());
  EXPECT_EQ(versions.Find(88)->max, 1);
  EXPECT_FALSE(versions.Find(89).has_value());
}

// OffsetFetch v8-v9 (an admin's fetch and a member's): the member's fields are v9's only, a
// null topic list (every topic) differs from an empty one, and the response's per-group and
// per-partition errors survive.
TEST(KafkaProtocolTest, OffsetFetchRoundTripsAtBothVersions) {
  OffsetFetchRequest member{.groups = {OffsetFetchGroup{
                                .group_id = "app", .member_id = "m-1", .member_epoch = 4,
                                .topics = std::vector<OffsetFetchTopic>{{"in", {0, 3}}}},
                                       OffsetFetchGroup{.group_id = "other"}},
                            .require_stable = true};
  ExpectRoundTripAndTruncationsRefused(member, Encode(member, 9), [](const std::string& b) {
    return DecodeOffsetFetchRequest(b, 9);
  });
  OffsetFetchRequest admin = member;
  admin.groups[0].member_id.reset();
  admin.groups[0].member_epoch = -1;
  ExpectRoundTripAndTruncationsRefused(admin, Encode(member, 8), [](const std::string& b) {
    return DecodeOffsetFetchRequest(b, 8);
  });
  // v8 leaves out the member fields: 1 + 3 + 4 bytes in the first group, 1 + 4 (a null id) in the
  // second.
  EXPECT_EQ(Encode(member, 9).size(), Encode(member, 8).size() + 8 + 5);
  OffsetFetchResponse got{
      .throttle_time_ms = 2,
      .groups = {{"app", {{"in", {{0, 42, 3, "meta", 0}, {3, -1, -1, std::nullopt, 88}}}}, 0},
                 {"other", {}, 16}}};
  for (int16_t v : {int16_t{8}, int16_t{9}}) {
    ExpectRoundTripAndTruncationsRefused(got, Encode(got, v), [v](const std::string& b) {
      return DecodeOffsetFetchResponse(b, v);
    });
  }
  EXPECT_EQ(DecodeOffsetFetchResponse("", 10).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(KafkaProtocolTest, HeadersCarryTheirTaggedFields) {
  RequestHeader h{kStreamsGroupHeartbeatKey, 1, 42, "restoresim", {{0, "t"}}};
  std::string b = EncodeRequestHeader(h);
  EXPECT_EQ(Hex(b), "0058" "0001" "0000002a" "000a" + Hex("restoresim") + "01" "0001" "74");
  Reader r(b);
  absl::StatusOr<RequestHeader> back = DecodeRequestHeader(r);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_TRUE(*back == h);
  const std::string v0_bytes = EncodeResponseHeader({7, {}}, 0);
  Reader v0(v0_bytes);
  EXPECT_EQ(DecodeResponseHeader(v0, 0)->correlation_id, 7);
}

}  // namespace
}  // namespace restoresim::kafka_protocol
