#include "core/transport/rdkafka/kafka_protocol_connection.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <netdb.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <vector>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_split.h"
#include "core/transport/kafka_protocol.h"
#include "core/transport/rdkafka/rdkafka_errors.h"

namespace restoresim::rdkafka {

namespace kp = restoresim::kafka_protocol;

namespace {

constexpr int kIoTimeoutS = 10;
// A response larger than this is refused before it is read (the broker's default
// socket.request.max.bytes is 100 MiB; ours are a few KiB).
constexpr int32_t kResponseBytesMax = 16 << 20;

absl::Status WriteAll(int fd, const std::string& bytes) {
  for (size_t done = 0; done < bytes.size();) {
    const ssize_t n = send(fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
    if (n <= 0) return absl::UnavailableError("send to the broker failed");
    done += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadExactly(int fd, size_t size) {
  std::string out(size, '\0');
  for (size_t done = 0; done < size;) {
    const ssize_t n = recv(fd, out.data() + done, size - done, 0);
    if (n <= 0) return absl::UnavailableError("the broker closed or timed out mid-response");
    done += static_cast<size_t>(n);
  }
  return out;
}

// A socket to one HOST:PORT: each address the name resolves to, in turn (IPv4 or IPv6), the
// I/O timeouts set before connect() so that they bound it too (Linux applies SO_SNDTIMEO to
// connect).
absl::StatusOr<int> ConnectOne(const std::string& address) {
  const size_t colon = address.rfind(':');
  if (colon == std::string::npos || colon == 0) {
    return absl::InvalidArgumentError("no HOST:PORT in '" + address + "'");
  }
  std::string host = address.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);  // [::1]:9092
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (getaddrinfo(host.c_str(), address.substr(colon + 1).c_str(), &hints, &found) != 0) {
    return absl::UnavailableError("cannot resolve " + address);
  }
  int fd = -1;
  for (addrinfo* a = found; a != nullptr && fd < 0; a = a->ai_next) {
    fd = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
    if (fd < 0) continue;
    timeval timeout{kIoTimeoutS, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
    if (connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
      close(fd);
      fd = -1;
    }
  }
  freeaddrinfo(found);
  if (fd < 0) return absl::UnavailableError("cannot connect to " + address);
  return fd;
}

// The first address of a comma-separated list that accepts a connection, tried in order as
// Kafka's clients try their bootstrap servers (spaces around an entry and empty entries are
// skipped). Found on 2026-12-06 (KafkaStreamsGroup.TheBootstrapListIsTriedInTurn): only the first
// was tried, so a member whose coordinator died could not reconnect while the first broker
// listed was that one.
absl::StatusOr<int> Connect(const std::string& addresses) {
  std::vector<std::string> refused;
  absl::Status invalid;
  for (absl::string_view entry : absl::StrSplit(addresses, ',', absl::SkipWhitespace())) {
    const std::string one(absl::StripAsciiWhitespace(entry));
    absl::StatusOr<int> fd = ConnectOne(one);
    if (fd.ok()) return fd;
    if (fd.status().code() == absl::StatusCode::kInvalidArgument) {
      invalid = fd.status();
      continue;
    }
    refused.push_back(one);
  }
  if (refused.empty()) {
    return invalid.ok() ? absl::InvalidArgumentError("no broker address given") : invalid;
  }
  return absl::UnavailableError(
      fmt::format("cannot connect to any of {}", fmt::join(refused, ", ")));
}

// The highest version both sides speak, or -1.
int16_t Common(const kp::ApiVersionsResponse& broker, int16_t key, kp::VersionRange ours) {
  std::optional<kp::VersionRange> theirs = broker.Find(key);
  if (!theirs) return -1;
  const int16_t top = std::min(theirs->max, ours.max);
  return top >= std::max(theirs->min, ours.min) ? top : int16_t{-1};
}

}  // namespace

absl::StatusOr<KafkaProtocolConnection> KafkaProtocolConnection::Open(
    const std::string& address, const std::string& client_id, Clock& clock) {
  absl::StatusOr<int> fd = Connect(address);
  if (!fd.ok()) return fd.status();
  KafkaProtocolConnection c(*fd, client_id, clock);
  if (absl::Status s = c.Negotiate(); !s.ok()) return s;
  return c;
}

KafkaProtocolConnection::Socket::~Socket() {
  if (fd >= 0) close(fd);
}

absl::StatusOr<std::string> KafkaProtocolConnection::RoundTrip(int16_t api_key, int16_t version,
                                                               const std::string& body,
                                                               int response_header_version) {
  const int32_t correlation_id = next_correlation_id_++;
  const std::string header =
      kp::EncodeRequestHeader({api_key, version, correlation_id, client_id_, {}});
  kp::Writer frame;
  frame.Int32(static_cast<int32_t>(header.size() + body.size()));
  frame.Raw(header);
  frame.Raw(body);
  if (absl::Status s = WriteAll(fd_.fd, frame.bytes()); !s.ok()) return s;
  absl::StatusOr<std::string> size_bytes = ReadExactly(fd_.fd, 4);
  if (!size_bytes.ok()) return size_bytes.status();
  kp::Reader size_reader(*size_bytes);
  const int32_t size = size_reader.Int32();
  if (size < 4 || size > kResponseBytesMax) {
    return absl::DataLossError(fmt::format("a response of {} bytes", size));
  }
  absl::StatusOr<std::string> response = ReadExactly(fd_.fd, static_cast<size_t>(size));
  if (!response.ok()) return response.status();
  kp::Reader r(*response);
  absl::StatusOr<kp::ResponseHeader> h = kp::DecodeResponseHeader(r, response_header_version);
  if (!h.ok()) return h.status();
  if (h->correlation_id != correlation_id) {
    return absl::DataLossError(fmt::format("response to request {} for request {}",
                                           h->correlation_id, correlation_id));
  }
  return response->substr(response->size() - r.remaining());
}

absl::Status KafkaProtocolConnection::Negotiate() {
  const int16_t v = kp::kApiVersionsVersions.min;
  // ApiVersions responses carry header v0 whatever the version (KIP-511).
  absl::StatusOr<std::string> body = RoundTrip(
      kp::kApiVersionsKey, v, kp::Encode(kp::ApiVersionsRequest{"restoresim", "0", {}}, v), 0);
  if (!body.ok()) return body.status();
  absl::StatusOr<kp::ApiVersionsResponse> versions = kp::DecodeApiVersionsResponse(*body, v);
  if (!versions.ok()) return versions.status();
  if (absl::Status s = KafkaErrorToStatus(versions->error_code, std::nullopt,
                                                   "ApiVersions");
      !s.ok()) {
    return s;
  }
  api_versions_ = *std::move(versions);
  heartbeat_version_ = Common(api_versions_, kp::kStreamsGroupHeartbeatKey,
                              kp::kStreamsGroupHeartbeatVersions);
  describe_version_ = Common(api_versions_, kp::kStreamsGroupDescribeKey,
                             kp::kStreamsGroupDescribeVersions);
  find_coordinator_version_ = Common(api_versions_, kp::kFindCoordinatorKey,
                                     kp::kFindCoordinatorVersions);
  offset_commit_version_ = Common(api_versions_, kp::kOffsetCommitKey, kp::kOffsetCommitVersions);
  offset_fetch_version_ = Common(api_versions_, kp::kOffsetFetchKey, kp::kOffsetFetchVersions);
  return absl::OkStatus();
}

absl::StatusOr<KafkaProtocolConnection> KafkaProtocolConnection::OpenToCoordinator(
    const std::string& bootstrap, const std::string& group, const std::string& client_id,
    Clock& clock, bool retry) {
  absl::StatusOr<KafkaProtocolConnection> any = Open(bootstrap, client_id, clock);
  if (!any.ok()) return any.status();
  if (retry) {
    absl::StatusOr<std::string> address = any->FindCoordinator(group);
    if (!address.ok()) return address.status();
    return Open(*address, client_id, clock);
  }
  absl::StatusOr<kp::Coordinator> c = any->FindCoordinatorOnce(group);
  if (!c.ok()) return c.status();
  if (RetriableCoordinatorError(c->error_code)) {
    return absl::UnavailableError(fmt::format("FindCoordinator of {}: error {} (retried later)",
                                              group, c->error_code));
  }
  if (absl::Status s = KafkaErrorToStatus(c->error_code, c->error_message,
                                          "FindCoordinator of " + group);
      !s.ok()) {
    return s;
  }
  return Open(fmt::format("{}:{}", c->host, c->port), client_id, clock);
}

namespace {

// As Kafka's default.api.timeout.ms: how long a retriable coordinator error is retried.
constexpr TimeNs kCoordinatorWaitNs = 60 * kSecond;

}  // namespace

// Found by `tools/test --ci` on 2026-12-04: on freshly started clusters the streams-group test
// ran before any other group existed and its first FindCoordinator got
// COORDINATOR_NOT_AVAILABLE (15).
bool RetriableCoordinatorError(int16_t code) {
  return code == 14 /* COORDINATOR_LOAD_IN_PROGRESS */ ||
         code == 15 /* COORDINATOR_NOT_AVAILABLE */ || code == 16 /* NOT_COORDINATOR */;
}

absl::StatusOr<std::string> KafkaProtocolConnection::FindCoordinator(const std::string& group) {
  absl::StatusOr<kp::Coordinator> c = FindCoordinatorEntry(group);
  if (!c.ok()) return c.status();
  return fmt::format("{}:{}", c->host, c->port);
}

absl::StatusOr<kp::Coordinator> KafkaProtocolConnection::FindCoordinatorEntry(
    const std::string& group) {
  const TimeNs deadline = DeadlineAfter(clock_->NowNs(), kCoordinatorWaitNs);
  TimeNs backoff = 100 * kMillisecond;  // Kafka's retry.backoff.ms, then doubled
  for (;;) {
    absl::StatusOr<kp::Coordinator> c = FindCoordinatorOnce(group);
    if (!c.ok()) return c.status();
    if (!RetriableCoordinatorError(c->error_code) ||
        clock_->NowNs() + backoff > deadline) {
      if (absl::Status s = KafkaErrorToStatus(c->error_code, c->error_message,
                                                       "FindCoordinator of " + group);
          !s.ok()) {
        return s;
      }
      return *std::move(c);
    }
    clock_->SleepFor(backoff);
    backoff = std::min(backoff * 2, kSecond);
  }
}

absl::StatusOr<kp::Coordinator> KafkaProtocolConnection::FindCoordinatorOnce(
    const std::string& group) {
  if (find_coordinator_version_ < 0) {
    return absl::UnimplementedError("the broker does not offer FindCoordinator v4-6");
  }
  const int16_t v = find_coordinator_version_;
  absl::StatusOr<std::string> body = RoundTrip(
      kp::kFindCoordinatorKey, v, kp::Encode(kp::FindCoordinatorRequest{0, {group}, {}}, v), 1);
  if (!body.ok()) return body.status();
  absl::StatusOr<kp::FindCoordinatorResponse> resp = kp::DecodeFindCoordinatorResponse(*body, v);
  if (!resp.ok()) return resp.status();
  if (resp->coordinators.size() != 1 || resp->coordinators[0].key != group) {
    return absl::DataLossError("FindCoordinator answered for another group");
  }
  return resp->coordinators[0];
}

absl::StatusOr<kp::StreamsGroupHeartbeatResponse> KafkaProtocolConnection::Heartbeat(
    const kp::StreamsGroupHeartbeatRequest& request) {
  if (heartbeat_version_ < 0) {
    return absl::UnimplementedError(
        "the broker does not offer streams groups (no StreamsGroupHeartbeat v0-1 in ApiVersions:"
        " Kafka 4.1+ with streams.version 1 does)");
  }
  absl::StatusOr<std::string> body = RoundTrip(
      kp::kStreamsGroupHeartbeatKey, heartbeat_version_,
      kp::Encode(request, heartbeat_version_), 1);
  if (!body.ok()) return body.status();
  return kp::DecodeStreamsGroupHeartbeatResponse(*body, heartbeat_version_);
}

absl::StatusOr<kp::StreamsGroupDescribeResponse> KafkaProtocolConnection::Describe(
    const kp::StreamsGroupDescribeRequest& request) {
  if (describe_version_ < 0) {
    return absl::UnimplementedError("the broker does not offer StreamsGroupDescribe v0-1");
  }
  absl::StatusOr<std::string> body = RoundTrip(
      kp::kStreamsGroupDescribeKey, describe_version_, kp::Encode(request, describe_version_), 1);
  if (!body.ok()) return body.status();
  return kp::DecodeStreamsGroupDescribeResponse(*body, describe_version_);
}

absl::StatusOr<kp::OffsetCommitResponse> KafkaProtocolConnection::OffsetCommit(
    const kp::OffsetCommitRequest& request) {
  if (offset_commit_version_ < 0) {
    return absl::UnimplementedError("the broker does not offer OffsetCommit v9 (Kafka 3.7+)");
  }
  absl::StatusOr<std::string> body = RoundTrip(
      kp::kOffsetCommitKey, offset_commit_version_, kp::Encode(request, offset_commit_version_),
      1);
  if (!body.ok()) return body.status();
  return kp::DecodeOffsetCommitResponse(*body, offset_commit_version_);
}

absl::StatusOr<kp::OffsetFetchResponse> KafkaProtocolConnection::OffsetFetch(
    const kp::OffsetFetchRequest& request) {
  if (offset_fetch_version_ < 0) {
    return absl::UnimplementedError("the broker does not offer OffsetFetch v8-9 (Kafka 3.0+)");
  }
  const bool member = std::any_of(request.groups.begin(), request.groups.end(),
                                  [](const kp::OffsetFetchGroup& g) { return g.member_id; });
  if (member && offset_fetch_version_ < 9) {
    return absl::UnimplementedError("the broker does not offer OffsetFetch v9 (a member's fetch)");
  }
  absl::StatusOr<std::string> body = RoundTrip(
      kp::kOffsetFetchKey, offset_fetch_version_, kp::Encode(request, offset_fetch_version_), 1);
  if (!body.ok()) return body.status();
  return kp::DecodeOffsetFetchResponse(*body, offset_fetch_version_);
}

}  // namespace restoresim::rdkafka
