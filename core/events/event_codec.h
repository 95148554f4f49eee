// The event file format (docs/EVENTS.md has the field table): text, one event per line,
// after a first line that names the format and its version:
//
//   restoresim-events 1
//   task_opened a-StreamThread-1 7 120000000 0 1 14 /state/a/app/0_1 0 1 app-counts-changelog 1 ...
//
// A line is space-separated tokens: the kind (Event::kName), the header (thread, seq,
// clock_ns), then the kind's fields in the order its Fields() lists them. Integers and enums
// are decimal; bools 0/1; strings percent-encoded ("~" is the empty string); an optional is
// "-" or "+" and its value; a list, set or map is its size and then its items (a map's as
// key value pairs); a struct is its fields in order.
//
// Decoding validates everything (kinds, numbers, enum ranges, sizes against what is left of
// the line, nothing left over) and returns a Status: bad input is an error, never a crash.
//
// Thread-safety: pure functions; an EventFileReader is used by one thread.
#ifndef RESTORESIM_CORE_EVENTS_EVENT_CODEC_H_
#define RESTORESIM_CORE_EVENTS_EVENT_CODEC_H_

#include <cstddef>
#include <istream>
#include <ostream>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "core/events/event.h"

namespace restoresim::events {

inline constexpr std::string_view kEventFileMagic = "restoresim-events";
// The longest line a reader accepts (a store snapshot can be large; beyond this is an error).
inline constexpr size_t kEventLineBytesMax = size_t{64} << 20;

// "restoresim-events <kEventFormatVersion>".
std::string EventFileHeader();
// OK when `line` is a header of the version this build reads.
absl::Status CheckEventFileHeader(std::string_view line);

// One event as one line (no newline).
std::string EncodeEvent(const Event& event);
absl::StatusOr<Event> DecodeEvent(std::string_view line);

// Writes an event file: the header at construction, then one line per event. Its caller
// serialises OnEvent (the recorder or the oracle does).
class EventStreamWriter final : public EventSink {
 public:
  explicit EventStreamWriter(std::ostream& out);
  void OnEvent(const Event& event) override;
  uint64_t events() const { return events_; }

 private:
  std::ostream& out_;
  uint64_t events_ = 0;
};

// Reads an event file: the header, then one event per Next(). Errors name the line.
class EventFileReader {
 public:
  explicit EventFileReader(std::istream& in) : in_(in) {}
  // Reads and checks the header line.
  absl::Status Open();
  // The next event; nullopt at the end of the file.
  absl::StatusOr<std::optional<Event>> Next();
  size_t line() const { return line_; }

 private:
  // The next line without its newline; nullopt at the end. Errors past kEventLineBytesMax.
  absl::StatusOr<std::optional<std::string>> ReadLine();

  std::istream& in_;
  size_t line_ = 0;
};

}  // namespace restoresim::events

#endif  // RESTORESIM_CORE_EVENTS_EVENT_CODEC_H_
