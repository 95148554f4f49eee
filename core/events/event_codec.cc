#include "core/events/event_codec.h"

#include <fmt/format.h>

#include <type_traits>
#include <utility>

#include "absl/status/status.h"

namespace restoresim::events {
namespace {

bool Plain(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         c == '-' || c == '_' || c == '.' || c == ':' || c == '/' || c == '#' || c == '@';
}

// ---- encoding ----

struct Writer {
  std::string& out;

  void Token(std::string_view t) {
    out.push_back(' ');
    out.append(t);
  }
  template <typename T>
  void operator()(std::string_view, const T& value) { Put(value); }

  void Put(bool b) { Token(b ? "1" : "0"); }
  template <typename T>
    requires std::is_integral_v<T>
  void Put(T n) { Token(std::to_string(n)); }
  template <typename T>
    requires std::is_enum_v<T>
  void Put(T e) { Put(static_cast<int64_t>(e)); }
  void Put(const std::string& s) {
    out.push_back(' ');
    if (s.empty()) out.push_back('~');
    for (char c : s) {
      if (Plain(c)) {
        out.push_back(c);
      } else {
        out.append(fmt::format("%{:02X}", static_cast<unsigned char>(c)));
      }
    }
  }
  void Put(Name n) { Put(n.str()); }
  void Put(const TopicPartition& tp) { Put(tp.topic); Put(tp.partition); }
  void Put(const TaskId& id) { Put(id.subtopology); Put(id.partition); }
  void Put(const TaskIncarnation& who) { Put(who.id); Put(who.incarnation); }
  void Put(const absl::Status& s) { Put(s.code()); Put(std::string(s.message())); }
  void Put(const TaskView& v) { Put(v.who); Put(v.type); Put(v.where); }
  void Put(const TaskInfo& t) {
    Put(t.who); Put(t.task_dir); Put(t.type); Put(t.changelogs); Put(t.state_id);
    Put(t.exactly_once);
  }
  void Put(const StoreSnapshot& s) {
    Put(s.name); Put(s.changelog); Put(s.readable); Put(s.entries); Put(s.data);
  }
  void Put(const StateInfo& s) {
    Put(s.state_id); Put(s.task_dir); Put(s.flushed); Put(s.pending); Put(s.stores_read);
    Put(s.stores);
  }
  void Put(const RestoreEventInfo& e) {
    Put(e.kind); Put(e.incarnation); Put(e.task); Put(e.state); Put(e.corrupted_changelogs);
    Put(e.error);
  }
  template <typename T>
  void Put(const std::optional<T>& o) {
    if (!o.has_value()) return Token("-");
    Token("+");
    Put(*o);
  }
  template <typename T>
  void Put(const std::vector<T>& items) { PutRange(items); }
  template <typename T>
  void Put(const std::set<T>& items) { PutRange(items); }
  template <typename K, typename V>
  void Put(const std::map<K, V>& items) {
    Put(static_cast<uint64_t>(items.size()));
    for (const auto& [k, v] : items) { Put(k); Put(v); }
  }
  template <typename R>
  void PutRange(const R& items) {
    Put(static_cast<uint64_t>(items.size()));
    for (const auto& item : items) Put(item);
  }
};

}  // namespace

std::string EventFileHeader() {
  return fmt::format("{} {}", kEventFileMagic, kEventFormatVersion);
}

absl::Status CheckEventFileHeader(std::string_view line) {
  const std::string want = EventFileHeader();
  if (line == want) return absl::OkStatus();
  if (line.starts_with(kEventFileMagic)) {
    return absl::FailedPreconditionError(fmt::format(
        "event file of another format version ('{}'; this build reads '{}')", line, want));
  }
  return absl::InvalidArgumentError(
      fmt::format("not an event file: it does not begin with '{}'", want));
}

std::string EncodeEvent(const Event& event) {
  std::string out(EventKindName(event.body));
  Writer w{out};
  w.Put(event.header.thread);
  w.Put(event.header.seq);
  w.Put(event.header.clock_ns);
  std::visit([&](const auto& body) { const_cast<std::decay_t<decltype(body)>&>(body).Fields(w); },
             event.body);
  return out;
}

EventStreamWriter::EventStreamWriter(std::ostream& out) : out_(out) {
  out_ << EventFileHeader() << '\n';
}

void EventStreamWriter::OnEvent(const Event& event) {
  out_ << EncodeEvent(event) << '\n';
  ++events_;
}

}  // namespace restoresim::events
