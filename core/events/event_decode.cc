// Decoding of the event file format (event_codec.h): every token validated, every size
// bounded by what is left of the line, so a bad file is an error and never a crash or a
// huge allocation.
#include <fmt/format.h>

#include <charconv>
#include <limits>
#include <type_traits>
#include <utility>

#include "absl/status/status.h"
#include "core/events/event_codec.h"

namespace restoresim::events {
namespace {

template <typename E> constexpr int64_t kEnumCount = 0;
template <> constexpr int64_t kEnumCount<TaskState> = 5;
template <> constexpr int64_t kEnumCount<TaskType> = 2;
template <> constexpr int64_t kEnumCount<TaskHolder> = 4;
template <> constexpr int64_t kEnumCount<ListenerCall> = 7;
template <> constexpr int64_t kEnumCount<CheckpointNotice> = 5;
template <> constexpr int64_t kEnumCount<TaskDecision> = 11;
template <> constexpr int64_t kEnumCount<TaskView::Where> = 7;
template <> constexpr int64_t kEnumCount<StreamThreadState> = 6;
template <> constexpr int64_t kEnumCount<RuntimeState> = 7;
template <> constexpr int64_t kEnumCount<ReaderMode> = 2;
template <> constexpr int64_t kEnumCount<RestoreEvent::Kind> = 5;
template <> constexpr int64_t kEnumCount<absl::StatusCode> = 17;

int Hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// Reads the tokens of one line; the first error sticks and every later read fails.
class Reader {
 public:
  explicit Reader(std::string_view line) : rest_(line) {}

  const absl::Status& status() const { return status_; }
  bool Done() const { return rest_.empty(); }
  template <typename T>
  void operator()(std::string_view field, T& value) {
    field_ = field;
    Get(value);
  }

  std::string_view Token() {
    if (!status_.ok()) return {};
    if (rest_.empty()) return Fail("the line ends early"), std::string_view();
    const size_t space = rest_.find(' ');
    std::string_view token = rest_.substr(0, space);
    rest_ = space == std::string_view::npos ? std::string_view() : rest_.substr(space + 1);
    if (token.empty()) Fail("an empty token (two spaces)");
    return token;
  }
  void Fail(std::string_view what) {
    if (status_.ok()) {
      status_ = absl::InvalidArgumentError(
          field_.empty() ? std::string(what) : fmt::format("field '{}': {}", field_, what));
    }
  }

  void Get(bool& b) {
    std::string_view t = Token();
    if (t == "0" || t == "1") b = t == "1";
    else Fail(fmt::format("'{}' is not 0 or 1", t));
  }
  template <typename T>
    requires std::is_integral_v<T>
  void Get(T& n) {
    std::string_view t = Token();
    if (!status_.ok()) return;
    auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), n);
    if (ec != std::errc() || end != t.data() + t.size()) {
      Fail(fmt::format("'{}' is not a number", t));
    }
  }
  template <typename T>
    requires std::is_enum_v<T>
  void Get(T& e) {
    int64_t n = 0;
    Get(n);
    if (!status_.ok()) return;
    if (n < 0 || n >= kEnumCount<T>) return Fail(fmt::format("{} is out of range", n));
    e = static_cast<T>(n);
  }
  void Get(Name& n) {
    std::string s;
    Get(s);
    n = Name(s);
  }
  void Get(Topic& topic) {
    std::string s;
    Get(s);
    topic = Topic(s);
  }
  void Get(std::string& s) {
    std::string_view t = Token();
    s.clear();
    if (!status_.ok() || t == "~") return;
    for (size_t i = 0; i < t.size(); ++i) {
      if (t[i] != '%') {
        s.push_back(t[i]);
        continue;
      }
      const int hi = i + 2 < t.size() ? Hex(t[i + 1]) : -1;
      const int lo = i + 2 < t.size() ? Hex(t[i + 2]) : -1;
      if (hi < 0 || lo < 0) return Fail("a bad %XX escape");
      s.push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    }
  }
  void Get(TopicPartition& tp) { Get(tp.topic); Get(tp.partition); }
  void Get(TaskId& id) { Get(id.subtopology); Get(id.partition); }
  void Get(TaskIncarnation& who) { Get(who.id); Get(who.incarnation); }
  void Get(absl::Status& s) {
    absl::StatusCode code = absl::StatusCode::kOk;
    std::string message;
    Get(code);
    Get(message);
    s = absl::Status(code, message);
  }
  void Get(TaskView& v) { Get(v.who); Get(v.type); Get(v.where); }
  void Get(TaskInfo& t) {
    Get(t.who); Get(t.task_dir); Get(t.type); Get(t.changelogs); Get(t.state_id);
    Get(t.exactly_once);
  }
  void Get(StoreSnapshot& s) {
    Get(s.name); Get(s.changelog); Get(s.readable); Get(s.entries); Get(s.data);
  }
  void Get(StateInfo& s) {
    Get(s.state_id); Get(s.task_dir); Get(s.flushed); Get(s.pending); Get(s.stores_read);
    Get(s.stores);
  }
  void Get(RestoreEventInfo& e) {
    Get(e.kind); Get(e.incarnation); Get(e.task); Get(e.state); Get(e.corrupted_changelogs);
    Get(e.error);
  }
  template <typename T>
  void Get(std::optional<T>& o) {
    std::string_view t = Token();
    o.reset();
    if (!status_.ok() || t == "-") return;
    if (t != "+") return Fail(fmt::format("'{}' is neither - nor +", t));
    Get(o.emplace());
  }
  template <typename T>
  void Get(std::vector<T>& items) {
    items.clear();
    for (size_t n = Size(); n > 0 && status_.ok(); --n) Get(items.emplace_back());
  }
  template <typename T>
  void Get(std::set<T>& items) {
    items.clear();
    for (size_t n = Size(); n > 0 && status_.ok(); --n) {
      T item{};
      Get(item);
      items.insert(std::move(item));
    }
  }
  template <typename K, typename V>
  void Get(std::map<K, V>& items) {
    items.clear();
    for (size_t n = Size(); n > 0 && status_.ok(); --n) {
      K key{};
      Get(key);
      Get(items[std::move(key)]);
    }
  }

 private:
  // A count: each item takes at least one token, so no more than what is left can be real.
  size_t Size() {
    uint64_t n = 0;
    Get(n);
    if (status_.ok() && n > rest_.size() / 2 + 1) Fail(fmt::format("{} items cannot fit", n));
    return status_.ok() ? n : 0;
  }

  std::string_view rest_;
  std::string_view field_;
  absl::Status status_;
};

template <typename T>
absl::StatusOr<EventBody> DecodeAs(Reader& r) {
  T body;
  body.Fields(r);
  if (!r.status().ok()) return r.status();
  return EventBody(std::move(body));
}

template <size_t... I>
absl::StatusOr<EventBody> DecodeBody(std::string_view kind, Reader& r,
                                     std::index_sequence<I...>) {
  std::optional<absl::StatusOr<EventBody>> body;
  auto try_one = [&]<size_t J>(std::integral_constant<size_t, J>) {
    using T = std::variant_alternative_t<J, EventBody>;
    if (!body.has_value() && T::kName == kind) body = DecodeAs<T>(r);
  };
  (try_one(std::integral_constant<size_t, I>{}), ...);
  if (!body.has_value()) return absl::InvalidArgumentError(fmt::format("unknown kind '{}'", kind));
  return *std::move(body);
}

}  // namespace

absl::StatusOr<Event> DecodeEvent(std::string_view line) {
  Reader r(line);
  std::string kind;
  Event event;
  r("kind", kind);
  r("thread", event.header.thread);
  r("seq", event.header.seq);
  r("clock_ns", event.header.clock_ns);
  if (!r.status().ok()) return r.status();
  absl::StatusOr<EventBody> body = DecodeBody(
      kind, r, std::make_index_sequence<std::variant_size_v<EventBody>>());
  if (!body.ok()) return body.status();
  if (!r.Done()) return absl::InvalidArgumentError("fields left over after the last");
  event.body = *std::move(body);
  return event;
}

absl::Status EventFileReader::Open() {
  absl::StatusOr<std::optional<std::string>> header = ReadLine();
  if (!header.ok()) return header.status();
  if (!header->has_value()) return absl::InvalidArgumentError("empty file: no header line");
  return CheckEventFileHeader(**header);
}

absl::StatusOr<std::optional<Event>> EventFileReader::Next() {
  absl::StatusOr<std::optional<std::string>> line = ReadLine();
  if (!line.ok()) return line.status();
  if (!line->has_value()) return std::optional<Event>();
  absl::StatusOr<Event> event = DecodeEvent(**line);
  if (!event.ok()) {
    return absl::InvalidArgumentError(
        fmt::format("line {}: {}", line_, std::string(event.status().message())));
  }
  return std::optional<Event>(*std::move(event));
}

absl::StatusOr<std::optional<std::string>> EventFileReader::ReadLine() {
  std::string line;
  char c = 0;
  bool any = false;
  while (in_.get(c)) {
    any = true;
    if (c == '\n') break;
    if (line.size() >= kEventLineBytesMax) {
      return absl::InvalidArgumentError(
          fmt::format("line {}: longer than {} bytes", line_ + 1, kEventLineBytesMax));
    }
    line.push_back(c);
  }
  if (!any) return std::optional<std::string>();
  ++line_;
  return std::optional<std::string>(std::move(line));
}

}  // namespace restoresim::events
