// Byte-for-byte conformance of restoresim's Kafka protocol codec (core/transport/
// kafka_protocol_messages.h, issue 26) against Kafka's own generated message classes in the
// kafka-clients jar. Run as a single-file program on the broker's classpath, as ClusterProbe:
//
//   java -cp 'build/kafka/lib/*' tools/kafka/ProtocolConformance.java CASES_FILE
//   java -cp 'build/kafka/lib/*' tools/kafka/ProtocolConformance.java --seeds DIR
//
// CASES_FILE has one line per case, "NAME HEX": the case's message as the C++ codec encoded it.
// For each, this program builds the same message with Kafka's classes (the cases below mirror
// kafka/kafka_protocol_conformance_test.cc field for field) and prints one line
// "NAME JAVA_HEX DECODED", where JAVA_HEX is Kafka's encoding and DECODED says whether Kafka's
// class decoded the C++ bytes, every byte read, to a message equal to its own ("equal"), or
// what went wrong. The C++ test compares the bytes and decodes JAVA_HEX with its own codec.
// --seeds writes Kafka's encodings as the fuzz target's seed corpus (fuzz/corpus/).
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.message.ApiVersionsRequestData;
import org.apache.kafka.common.message.ApiVersionsResponseData;
import org.apache.kafka.common.message.FindCoordinatorRequestData;
import org.apache.kafka.common.message.FindCoordinatorResponseData;
import org.apache.kafka.common.message.OffsetCommitRequestData;
import org.apache.kafka.common.message.OffsetCommitResponseData;
import org.apache.kafka.common.message.OffsetFetchRequestData;
import org.apache.kafka.common.message.OffsetFetchResponseData;
import org.apache.kafka.common.message.StreamsGroupDescribeRequestData;
import org.apache.kafka.common.message.StreamsGroupDescribeResponseData;
import org.apache.kafka.common.message.StreamsGroupHeartbeatRequestData;
import org.apache.kafka.common.message.StreamsGroupHeartbeatResponseData;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.apache.kafka.common.protocol.types.RawTaggedField;

public class ProtocolConformance {
  interface Decoder {
    ApiMessage decode(ByteBufferAccessor a, short v);
  }

  record Case(ApiMessage message, short version, Decoder decoder, int fuzzSelector) {}

  static byte[] encode(ApiMessage m, short v) {
    ObjectSerializationCache cache = new ObjectSerializationCache();
    ByteBuffer buf = ByteBuffer.allocate(m.size(cache, v));
    m.write(new ByteBufferAccessor(buf), cache, v);
    return buf.array();
  }

  static Map<String, Case> cases() {
    Map<String, Case> c = new LinkedHashMap<>();
    Decoder hbReq = (a, v) -> new StreamsGroupHeartbeatRequestData(a, v);
    Decoder hbResp = (a, v) -> new StreamsGroupHeartbeatResponseData(a, v);
    Decoder descReq = (a, v) -> new StreamsGroupDescribeRequestData(a, v);
    Decoder descResp = (a, v) -> new StreamsGroupDescribeResponseData(a, v);
    c.put("heartbeat_join_v1", new Case(HeartbeatCases.join(), (short) 1, hbReq, 9));
    c.put("heartbeat_join_v0", new Case(HeartbeatCases.join(), (short) 0, hbReq, 1));
    c.put("heartbeat_leave_v1", new Case(HeartbeatCases.leave(), (short) 1, hbReq, 9));
    c.put("heartbeat_assign_v1", new Case(HeartbeatCases.assign(), (short) 1, hbResp, 8));
    c.put("heartbeat_fenced_v0", new Case(HeartbeatCases.fenced(), (short) 0, hbResp, 0));
    c.put("describe_request_v1", new Case(DescribeCases.request(), (short) 1, descReq, 11));
    c.put("describe_group_v1", new Case(DescribeCases.group(), (short) 1, descResp, 10));
    c.put("describe_missing_v0", new Case(DescribeCases.missing(), (short) 0, descResp, 2));
    c.put("api_versions_request_v3", new Case(new ApiVersionsRequestData()
        .setClientSoftwareName("restoresim").setClientSoftwareVersion("0.1"), (short) 3,
        (a, v) -> new ApiVersionsRequestData(a, v), 5));
    ApiVersionsResponseData av = new ApiVersionsResponseData().setThrottleTimeMs(0);
    av.apiKeys().add(new ApiVersionsResponseData.ApiVersion().setApiKey((short) 18)
        .setMinVersion((short) 0).setMaxVersion((short) 4));
    av.apiKeys().add(new ApiVersionsResponseData.ApiVersion().setApiKey((short) 88)
        .setMinVersion((short) 0).setMaxVersion((short) 1));
    av.unknownTaggedFields().add(new RawTaggedField(9, new byte[] {1, 2, 3}));
    c.put("api_versions_response_v3", new Case(av, (short) 3,
        (a, v) -> new ApiVersionsResponseData(a, v), 4));
    c.put("find_coordinator_request_v6", new Case(new FindCoordinatorRequestData()
        .setKeyType((byte) 0).setCoordinatorKeys(List.of("app")), (short) 6,
        (a, v) -> new FindCoordinatorRequestData(a, v), 15));
    var fc = new FindCoordinatorResponseData().setCoordinators(List.of(
        new FindCoordinatorResponseData.Coordinator().setKey("app").setNodeId(1)
            .setHost("127.0.0.1").setPort(9092),
        new FindCoordinatorResponseData.Coordinator().setKey("other").setNodeId(-1).setHost("")
            .setPort(-1).setErrorCode((short) 15).setErrorMessage("not available")));
    c.put("find_coordinator_response_v4", new Case(fc, (short) 4,
        (a, v) -> new FindCoordinatorResponseData(a, v), 6));
    c.put("offset_commit_request_v9", new Case(OffsetCommitCases.request(), (short) 9,
        (a, v) -> new OffsetCommitRequestData(a, v), 17));
    c.put("offset_commit_defaults_v9", new Case(new OffsetCommitRequestData().setGroupId("g"),
        (short) 9, (a, v) -> new OffsetCommitRequestData(a, v), 17));
    c.put("offset_commit_response_v9", new Case(OffsetCommitCases.response(), (short) 9,
        (a, v) -> new OffsetCommitResponseData(a, v), 16));
    c.put("offset_fetch_member_v9", new Case(OffsetFetchCases.member(), (short) 9,
        (a, v) -> new OffsetFetchRequestData(a, v), 27));
    c.put("offset_fetch_admin_v8", new Case(OffsetFetchCases.admin(), (short) 8,
        (a, v) -> new OffsetFetchRequestData(a, v), 19));
    c.put("offset_fetch_response_v9", new Case(OffsetFetchCases.response(), (short) 9,
        (a, v) -> new OffsetFetchResponseData(a, v), 26));
    c.put("offset_fetch_response_v8", new Case(OffsetFetchCases.response(), (short) 8,
        (a, v) -> new OffsetFetchResponseData(a, v), 18));
    return c;
  }

  static String decodeOurs(Case k, byte[] ours) {
    try {
      ByteBuffer buf = ByteBuffer.wrap(ours);
      ApiMessage back = k.decoder().decode(new ByteBufferAccessor(buf), k.version());
      if (buf.hasRemaining()) return "left-" + buf.remaining() + "-bytes";
      return back.equals(k.message()) ? "equal" : "differs";
    } catch (RuntimeException e) {
      return "refused:" + e.getClass().getSimpleName();
    }
  }

  public static void main(String[] args) throws Exception {
    Map<String, Case> cases = cases();
    if (args.length == 2 && args[0].equals("--seeds")) {
      for (Map.Entry<String, Case> e : cases.entrySet()) {
        byte[] body = encode(e.getValue().message(), e.getValue().version());
        byte[] seed = new byte[body.length + 1];
        seed[0] = (byte) e.getValue().fuzzSelector();
        System.arraycopy(body, 0, seed, 1, body.length);
        Files.write(Path.of(args[1], "kafka-" + e.getKey()), seed);
      }
      return;
    }
    List<String> out = new ArrayList<>();
    for (String line : Files.readAllLines(Path.of(args[0]))) {
      if (line.isBlank()) continue;
      String[] parts = line.trim().split(" ");
      Case k = cases.get(parts[0]);
      if (k == null) {
        out.add(parts[0] + " - unknown-case");
        continue;
      }
      byte[] ours = HexFormat.of().parseHex(parts.length > 1 ? parts[1] : "");
      String theirs = HexFormat.of().formatHex(encode(k.message(), k.version()));
      out.add(parts[0] + " " + theirs + " " + decodeOurs(k, ours));
    }
    out.forEach(System.out::println);
  }
}

// The heartbeat cases: a join with a topology (nested structs, an unknown tagged field at the
// top), a leave (every nullable field null), an assignment and a fenced member.
class HeartbeatCases {
  static StreamsGroupHeartbeatRequestData join() {
    var changelog = new StreamsGroupHeartbeatRequestData.TopicInfo().setName("app-store-changelog")
        .setPartitions(0).setReplicationFactor((short) 0)
        .setTopicConfigs(List.of(new StreamsGroupHeartbeatRequestData.KeyValue().setKey("k")
            .setValue("v")));
    var sub = new StreamsGroupHeartbeatRequestData.Subtopology().setSubtopologyId("0")
        .setSourceTopics(List.of("input")).setStateChangelogTopics(List.of(changelog))
        .setCopartitionGroups(List.of(new StreamsGroupHeartbeatRequestData.CopartitionGroup()
            .setSourceTopics(List.of((short) 0))));
    var m = new StreamsGroupHeartbeatRequestData().setGroupId("app").setMemberId("member-1")
        .setMemberEpoch(0).setEndpointInformationEpoch(0).setRebalanceTimeoutMs(300000)
        .setTopology(new StreamsGroupHeartbeatRequestData.Topology().setEpoch(1)
            .setSubtopologies(List.of(sub)))
        .setActiveTasks(List.of()).setProcessId("process-1")
        .setUserEndpoint(new StreamsGroupHeartbeatRequestData.Endpoint().setHost("localhost")
            .setPort(65535))
        .setTaskOffsets(List.of(new StreamsGroupHeartbeatRequestData.TaskOffset()
            .setSubtopologyId("0").setPartition(3).setOffset(1L << 40)));
    m.unknownTaggedFields().add(new RawTaggedField(7, new byte[] {1, 2}));
    return m;
  }

  static StreamsGroupHeartbeatRequestData leave() {
    return new StreamsGroupHeartbeatRequestData().setGroupId("g").setMemberId("m")
        .setMemberEpoch(-1);
  }

  static StreamsGroupHeartbeatResponseData assign() {
    var endpoint = new StreamsGroupHeartbeatResponseData.EndpointToPartitions()
        .setUserEndpoint(new StreamsGroupHeartbeatResponseData.Endpoint().setHost("h").setPort(1))
        .setActivePartitions(List.of(new StreamsGroupHeartbeatResponseData.TopicPartition()
            .setTopic("input").setPartitions(List.of(0))));
    return new StreamsGroupHeartbeatResponseData().setMemberId("member-1").setMemberEpoch(2)
        .setHeartbeatIntervalMs(1000).setAcceptableRecoveryLag(10000)
        .setTaskOffsetIntervalMs(60000)
        .setStatus(List.of(new StreamsGroupHeartbeatResponseData.Status().setStatusCode((byte) 3)
            .setStatusDetail("missing app-store-changelog")))
        .setActiveTasks(List.of(new StreamsGroupHeartbeatResponseData.TaskIds()
            .setSubtopologyId("0").setPartitions(List.of(0, 2))))
        .setStandbyTasks(List.of(new StreamsGroupHeartbeatResponseData.TaskIds()
            .setSubtopologyId("0").setPartitions(List.of(1))))
        .setTopologyDescriptionRequired(true).setPartitionsByUserEndpoint(List.of(endpoint));
  }

  static StreamsGroupHeartbeatResponseData fenced() {
    return new StreamsGroupHeartbeatResponseData().setErrorCode((short) 110)
        .setErrorMessage("fenced").setMemberId("member-1").setMemberEpoch(-1)
        .setAcceptableRecoveryLagLegacy(10000);
  }
}

// The describe cases: a request, a described group with a member, its topology and its
// description (v1), and a group that does not exist (v0).
class DescribeCases {
  static StreamsGroupDescribeRequestData request() {
    return new StreamsGroupDescribeRequestData().setGroupIds(List.of("app", "other"))
        .setIncludeAuthorizedOperations(true).setIncludeTopologyDescription(true);
  }

  static StreamsGroupDescribeResponseData group() {
    var member = new StreamsGroupDescribeResponseData.Member().setMemberId("m")
        .setClientId("c").setClientHost("/127.0.0.1").setProcessId("p")
        .setAssignment(new StreamsGroupDescribeResponseData.Assignment().setActiveTasks(List.of(
            new StreamsGroupDescribeResponseData.TaskIds().setSubtopologyId("0")
                .setPartitions(List.of(0)))))
        .setTargetAssignment(new StreamsGroupDescribeResponseData.Assignment().setStandbyTasks(
            List.of(new StreamsGroupDescribeResponseData.TaskIds().setSubtopologyId("0")
                .setPartitions(List.of(1)))));
    var node = new StreamsGroupDescribeResponseData.TopologyDescriptionNode()
        .setName("KSTREAM-SOURCE-0000000000").setSuccessors(List.of("x"));
    var group = new StreamsGroupDescribeResponseData.DescribedGroup().setGroupId("app")
        .setGroupState("Stable").setGroupEpoch(3)
        .setTopology(new StreamsGroupDescribeResponseData.Topology().setEpoch(1)
            .setSubtopologies(List.of(new StreamsGroupDescribeResponseData.Subtopology()
                .setSubtopologyId("0"))))
        .setMembers(List.of(member))
        .setTopologyDescription(new StreamsGroupDescribeResponseData.TopologyDescription()
            .setSubtopologies(List.of(new StreamsGroupDescribeResponseData
                .TopologyDescriptionSubtopology().setSubtopologyId("0").setNodes(List.of(node)))))
        .setAssignorName("sticky");
    return new StreamsGroupDescribeResponseData().setGroups(List.of(group));
  }

  static StreamsGroupDescribeResponseData missing() {
    return new StreamsGroupDescribeResponseData().setThrottleTimeMs(5).setGroups(List.of(
        new StreamsGroupDescribeResponseData.DescribedGroup().setErrorCode((short) 69)
            .setErrorMessage("Group app not found.").setGroupId("app")));
  }
}

// The OffsetCommit cases (v9, a streams member's commit with its epoch): two topics, a null and a
// set metadata, a static member; the response with a partition refused (STALE_MEMBER_EPOCH).
class OffsetCommitCases {
  static OffsetCommitRequestData request() {
    var input = new OffsetCommitRequestData.OffsetCommitRequestTopic().setName("app-input")
        .setPartitions(List.of(
            new OffsetCommitRequestData.OffsetCommitRequestPartition().setPartitionIndex(0)
                .setCommittedOffset(42L),
            new OffsetCommitRequestData.OffsetCommitRequestPartition().setPartitionIndex(3)
                .setCommittedOffset(1L << 40).setCommittedLeaderEpoch(7)
                .setCommittedMetadata(null)));
    var other = new OffsetCommitRequestData.OffsetCommitRequestTopic().setName("x")
        .setPartitions(List.of());
    return new OffsetCommitRequestData().setGroupId("app").setGenerationIdOrMemberEpoch(5)
        .setMemberId("member-1").setGroupInstanceId("instance-1")
        .setTopics(List.of(input, other));
  }

  static OffsetCommitResponseData response() {
    return new OffsetCommitResponseData().setThrottleTimeMs(3).setTopics(List.of(
        new OffsetCommitResponseData.OffsetCommitResponseTopic().setName("app-input")
            .setPartitions(List.of(
                new OffsetCommitResponseData.OffsetCommitResponsePartition().setPartitionIndex(0),
                new OffsetCommitResponseData.OffsetCommitResponsePartition().setPartitionIndex(3)
                    .setErrorCode((short) 113)))));
  }
}

// The OffsetFetch cases: a member's fetch (v9: its id and epoch, stable offsets) of two
// partitions beside a group asking every topic (null); an admin's (v8: no member fields); the
// response with a committed offset, a partition refused (UNSTABLE_OFFSET_COMMIT) and a group
// refused (NOT_COORDINATOR), at both versions.
class OffsetFetchCases {
  static OffsetFetchRequestData member() {
    var topic = new OffsetFetchRequestData.OffsetFetchRequestTopics().setName("app-input")
        .setPartitionIndexes(List.of(0, 3));
    var app = new OffsetFetchRequestData.OffsetFetchRequestGroup().setGroupId("app")
        .setMemberId("member-1").setMemberEpoch(5).setTopics(List.of(topic));
    var all = new OffsetFetchRequestData.OffsetFetchRequestGroup().setGroupId("other")
        .setTopics(null);
    return new OffsetFetchRequestData().setGroups(List.of(app, all)).setRequireStable(true);
  }

  static OffsetFetchRequestData admin() {
    var topic = new OffsetFetchRequestData.OffsetFetchRequestTopics().setName("app-input")
        .setPartitionIndexes(List.of(1));
    return new OffsetFetchRequestData().setGroups(List.of(
        new OffsetFetchRequestData.OffsetFetchRequestGroup().setGroupId("app")
            .setTopics(List.of(topic))));
  }

  static OffsetFetchResponseData response() {
    var partitions = List.of(
        new OffsetFetchResponseData.OffsetFetchResponsePartitions().setPartitionIndex(0)
            .setCommittedOffset(42L).setCommittedLeaderEpoch(3).setMetadata("m"),
        new OffsetFetchResponseData.OffsetFetchResponsePartitions().setPartitionIndex(3)
            .setCommittedOffset(-1L).setMetadata(null).setErrorCode((short) 88));
    var app = new OffsetFetchResponseData.OffsetFetchResponseGroup().setGroupId("app")
        .setTopics(List.of(new OffsetFetchResponseData.OffsetFetchResponseTopics()
            .setName("app-input").setPartitions(partitions)));
    var other = new OffsetFetchResponseData.OffsetFetchResponseGroup().setGroupId("other")
        .setErrorCode((short) 16);
    return new OffsetFetchResponseData().setThrottleTimeMs(1).setGroups(List.of(app, other));
  }
}
