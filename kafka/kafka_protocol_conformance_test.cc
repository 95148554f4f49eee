// The Kafka protocol codec (core/transport/kafka_protocol_messages.h, issue 26) byte for byte
// against Kafka 4.4's own generated message classes: tools/kafka/ProtocolConformance.java builds
// the same messages with the kafka-clients jar the build fetches (tools/kafka/broker fetch),
// encodes them, and decodes ours. Each case checks both ways: our bytes equal Kafka's, Kafka's
// class decodes ours to its own message, and our decoder reads Kafka's bytes back to ours. The
// cases cover nested structs, nulls (nullable strings, arrays and structs), an unknown tagged
// field at the top, both versions of each streams message, a v1-only field, FindCoordinator, and
// OffsetCommit v9 and OffsetFetch v8-v9.
// Needs java and the jars (suite kafka), not a running broker: about 3 s, most of it the JVM.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>

#include "core/transport/kafka_protocol_messages.h"

namespace restoresim::kafka_test {
namespace {

using namespace restoresim::kafka_protocol;  // NOLINT(build/namespaces)

std::string Hex(const std::string& b) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (char c : b) {
    out += kDigits[(static_cast<uint8_t>(c) >> 4) & 0xf];
    out += kDigits[static_cast<uint8_t>(c) & 0xf];
  }
  return out;
}

std::string Unhex(const std::string& h) {
  std::string out;
  for (size_t i = 0; i + 1 < h.size(); i += 2) {
    out += static_cast<char>(std::stoi(h.substr(i, 2), nullptr, 16));
  }
  return out;
}

// One case: our encoding, and whether our decoder reads `bytes` back to the same message.
struct Case {
  std::string ours;
  std::function<bool(const std::string& bytes)> decodes_to_same;
};

template <typename M, typename Decode>
Case Make(const M& m, int16_t v, Decode decode) {
  return Case{Encode(m, v), [m, v, decode](const std::string& b) {
                absl::StatusOr<M> got = decode(b, v);
                return got.ok() && *got == m;
              }};
}

StreamsGroupHeartbeatRequest Join() {
  StreamsGroupHeartbeatRequest m{.group_id = "app", .member_id = "member-1"};
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

StreamsGroupHeartbeatResponse Assign() {
  StreamsGroupHeartbeatResponse m{.member_id = "member-1", .member_epoch = 2};
  m.heartbeat_interval_ms = 1000;
  m.acceptable_recovery_lag = 10000;
  m.task_offset_interval_ms = 60000;
  m.status = std::vector<StreamsGroupStatus>{{3, "missing app-store-changelog"}};
  m.active_tasks = std::vector<TaskIds>{{"0", {0, 2}}};
  m.standby_tasks = std::vector<TaskIds>{{"0", {1}}};
  m.topology_description_required = true;
  m.partitions_by_user_endpoint =
      std::vector<EndpointToPartitions>{{Endpoint{"h", 1}, {{"input", {0}}}, {}}};
  return m;
}

StreamsGroupDescribeResponse Described() {
  DescribedMember member{.member_id = "m", .client_id = "c", .client_host = "/127.0.0.1",
                         .process_id = "p"};
  member.assignment.active_tasks = {{"0", {0}}};
  member.target_assignment.standby_tasks = {{"0", {1}}};
  DescribedGroup g{.group_id = "app", .group_state = "Stable", .group_epoch = 3};
  g.topology = DescribedTopology{1, std::vector<Subtopology>{{.subtopology_id = "0"}}};
  g.members = {member};
  g.topology_description = TopologyDescription{
      {{"0", {DescribedNode{.name = "KSTREAM-SOURCE-0000000000", .successors = {"x"}}}}}, {}};
  g.assignor_name = "sticky";
  return StreamsGroupDescribeResponse{0, {g}, {}};
}

// OffsetCommit v9 (a streams member's commit): the same messages as OffsetCommitCases in
// ProtocolConformance.java.
void AddOffsetCommitCases(std::map<std::string, Case>& c) {
  OffsetCommitRequest commit{.group_id = "app", .generation_id_or_member_epoch = 5,
                             .member_id = "member-1", .group_instance_id = "instance-1"};
  commit.topics = {{"app-input", {{0, 42}, {3, int64_t{1} << 40, 7, std::nullopt}}}, {"x", {}}};
  c["offset_commit_request_v9"] = Make(commit, 9, DecodeOffsetCommitRequest);
  c["offset_commit_defaults_v9"] = Make(OffsetCommitRequest{.group_id = "g"}, 9,
                                        DecodeOffsetCommitRequest);
  c["offset_commit_response_v9"] = Make(
      OffsetCommitResponse{3, {{"app-input", {{0, 0}, {3, 113}}}}, {}}, 9,
      DecodeOffsetCommitResponse);
}

// OffsetFetch v8-v9: the same messages as OffsetFetchCases in ProtocolConformance.java.
void AddOffsetFetchCases(std::map<std::string, Case>& c) {
  OffsetFetchRequest member{
      .groups = {OffsetFetchGroup{.group_id = "app", .member_id = "member-1", .member_epoch = 5,
                                  .topics = std::vector<OffsetFetchTopic>{{"app-input", {0, 3}}}},
                 OffsetFetchGroup{.group_id = "other"}},
      .require_stable = true};
  c["offset_fetch_member_v9"] = Make(member, 9, DecodeOffsetFetchRequest);
  OffsetFetchRequest admin{.groups = {OffsetFetchGroup{
                               .group_id = "app",
                               .topics = std::vector<OffsetFetchTopic>{{"app-input", {1}}}}}};
  c["offset_fetch_admin_v8"] = Make(admin, 8, DecodeOffsetFetchRequest);
  OffsetFetchResponse response{
      .throttle_time_ms = 1,
      .groups = {{"app", {{"app-input", {{0, 42, 3, "m", 0}, {3, -1, -1, std::nullopt, 88}}}}, 0},
                 {"other", {}, 16}}};
  c["offset_fetch_response_v9"] = Make(response, 9, DecodeOffsetFetchResponse);
  c["offset_fetch_response_v8"] = Make(response, 8, DecodeOffsetFetchResponse);
}

std::map<std::string, Case> Cases() {
  std::map<std::string, Case> c;
  c["heartbeat_join_v1"] = Make(Join(), 1, DecodeStreamsGroupHeartbeatRequest);
  c["heartbeat_join_v0"] = Make(Join(), 0, DecodeStreamsGroupHeartbeatRequest);
  c["heartbeat_leave_v1"] = Make(StreamsGroupHeartbeatRequest{.group_id = "g", .member_id = "m",
                                                              .member_epoch = -1},
                                 1, DecodeStreamsGroupHeartbeatRequest);
  c["heartbeat_assign_v1"] = Make(Assign(), 1, DecodeStreamsGroupHeartbeatResponse);
  c["heartbeat_fenced_v0"] = Make(
      StreamsGroupHeartbeatResponse{.error_code = 110, .error_message = "fenced",
                                    .member_id = "member-1", .member_epoch = -1,
                                    .acceptable_recovery_lag = 10000},
      0, DecodeStreamsGroupHeartbeatResponse);
  c["describe_request_v1"] = Make(StreamsGroupDescribeRequest{{"app", "other"}, true, true, {}},
                                  1, DecodeStreamsGroupDescribeRequest);
  c["describe_group_v1"] = Make(Described(), 1, DecodeStreamsGroupDescribeResponse);
  DescribedGroup missing{.error_code = 69, .error_message = "Group app not found.",
                         .group_id = "app"};
  c["describe_missing_v0"] = Make(StreamsGroupDescribeResponse{5, {missing}, {}}, 0,
                                  DecodeStreamsGroupDescribeResponse);
  c["api_versions_request_v3"] = Make(ApiVersionsRequest{"restoresim", "0.1", {}}, 3,
                                      DecodeApiVersionsRequest);
  c["api_versions_response_v3"] =
      Make(ApiVersionsResponse{0, {{18, 0, 4}, {88, 0, 1}}, 0, {{9, "\x01\x02\x03"}}}, 3,
           DecodeApiVersionsResponse);
  c["find_coordinator_request_v6"] = Make(FindCoordinatorRequest{0, {"app"}, {}}, 6,
                                          DecodeFindCoordinatorRequest);
  c["find_coordinator_response_v4"] = Make(
      FindCoordinatorResponse{0, {{"app", 1, "127.0.0.1", 9092},
                                  {"other", -1, "", -1, 15, "not available"}}, {}},
      4, DecodeFindCoordinatorResponse);
  AddOffsetCommitCases(c);
  AddOffsetFetchCases(c);
  return c;
}

std::string RunCommand(const std::string& command) {
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return out;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, pipe)) > 0;) out.append(buf, n);
  EXPECT_EQ(pclose(pipe), 0) << command;
  return out;
}

TEST(KafkaProtocolConformance, EveryCaseMatchesKafkasOwnClassesByteForByte) {
  const char* tool = std::getenv("RESTORESIM_KAFKA_BROKER_TOOL");
  const char* build = std::getenv("RESTORESIM_KAFKA_BUILD_DIR");
  ASSERT_TRUE(tool != nullptr && build != nullptr) << "run through meson test (suite kafka)";
  const std::string dir = std::string(tool).substr(0, std::string(tool).rfind('/'));
  RunCommand(fmt::format("'{}' --build '{}' fetch", tool, build));
  const std::map<std::string, Case> cases = Cases();
  const std::string file = std::string(build) + "/kafka/protocol-conformance-cases.txt";
  {
    std::ofstream f(file);
    for (const auto& [name, c] : cases) f << name << ' ' << Hex(c.ours) << '\n';
  }
  std::istringstream out(RunCommand(fmt::format(
      "java -cp '{}/kafka/lib/*' '{}/ProtocolConformance.java' '{}'", build, dir, file)));
  size_t checked = 0;
  for (std::string name, theirs, decoded; out >> name >> theirs >> decoded; ++checked) {
    ASSERT_TRUE(cases.contains(name)) << name << ": " << theirs << ' ' << decoded;
    const Case& c = cases.at(name);
    EXPECT_EQ(Hex(c.ours), theirs) << name << ": our bytes, then Kafka's";
    EXPECT_EQ(decoded, "equal") << name << ": Kafka's class on our bytes";
    EXPECT_TRUE(c.decodes_to_same(Unhex(theirs))) << name << ": our decoder on Kafka's bytes";
  }
  EXPECT_EQ(checked, cases.size());
}

}  // namespace
}  // namespace restoresim::kafka_test
