// The event file format: events survive a round trip, and broken input is an error (never a
// crash): unknown kinds, bad numbers, enums out of range, impossible counts, left-over fields,
// bad headers, and every truncation and single-byte change of valid lines.
#include "core/events/event_codec.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <sstream>

namespace restoresim::events {
namespace {

std::vector<Event> Samples() {
  StateInfo state{.state_id = 77, .task_dir = "/state/a b/0_1"};
  state.flushed[{"app-counts-changelog", 1}] = 12;
  state.stores_read = true;
  state.stores.push_back(StoreSnapshot{.name = "counts",
                                       .changelog = {"app-counts-changelog", 1},
                                       .readable = true,
                                       .entries = 2,
                                       .data = {{"k 1", "v%~"}, {"", "\n"}}});
  RestoreEventInfo restored{.kind = RestoreEvent::Kind::kRestored,
                            .incarnation = {{0, 1}, 3},
                            .task = TaskInfo{.who = {{0, 1}, 3}, .task_dir = "/d"},
                            .state = state,
                            .error = absl::UnavailableError("broker gone: é")};
  return {
      Event{{"a-StreamThread-1", 1, 5}, TaskOpened{.task = *restored.task}},
      Event{{"", 2, 0}, AssignmentChanged{.stream_thread = "s", .active = {{0, 1}, {0, 2}}}},
      Event{{"r", 3, 9}, RestoreEventMoved{.restore_thread = "r", .event = restored,
                                           .drained = true}},
      Event{{"r", 4, 9}, CheckpointWritten{.state = state, .offsets = state.flushed}},
      Event{{"w", 5, 10}, Appended{.tp = {"x-changelog", 0}, .offset = 4, .key = "k"}},
      Event{{"s", 6, 11},
            CorruptionHandled{.reported = {{1, 2}, 3}, .acted_on = TaskIncarnation{{1, 2}, 3}}},
      Event{{"s", 7, 12}, OffsetSumsReported{.stream_thread = "s",
                                              .sums = {{{0, 1}, -2}, {{1, 2}, 17}}}},
      Event{{"s", 8, 13}, RunFinished{}},
  };
}

TEST(EventCodecTest, EveryEventSurvivesARoundTrip) {
  for (const Event& e : Samples()) {
    const std::string line = EncodeEvent(e);
    EXPECT_EQ(line.find('\n'), std::string::npos) << line;
    absl::StatusOr<Event> back = DecodeEvent(line);
    ASSERT_TRUE(back.ok()) << back.status() << "\n" << line;
    EXPECT_EQ(EncodeEvent(*back), line);
    EXPECT_EQ(back->header.thread, e.header.thread);
    EXPECT_EQ(back->body.index(), e.body.index());
  }
}

TEST(EventCodecTest, BrokenLinesAreErrors) {
  for (const std::string line : {
           "", "nonsense a 1 2", "task_destroyed t 1 2 0 1 5 9",   // enum out of range
           "task_destroyed t 1 2 0 1 x 1", "task_destroyed t 1 2 0 1 5 1 extra",
           "task_destroyed t 1", "assignment t 1 2 s 99999999999 0 1",  // count cannot fit
           "assignment t 1 2 s 1  0 1", "hand_off t 1 2 %4 0 1 1 0 1",  // bad escape
           "registered t 1 2 r tp 0 0 1 1 0 1 *",                       // optional neither
           "task_destroyed t 1 -5 0 1 5 1",  // a negative clock is fine; seq is not
           "task_destroyed t -1 5 0 1 5 1"}) {
    absl::StatusOr<Event> e = DecodeEvent(line);
    if (line == "task_destroyed t 1 -5 0 1 5 1") {
      EXPECT_TRUE(e.ok()) << e.status();
      continue;
    }
    EXPECT_FALSE(e.ok()) << "accepted: " << line;
  }
}

// Every truncation and every single-byte change of every sample line decodes or fails; the
// test passing at all (no crash, no hang) is the point, and a decoded line re-encodes.
TEST(EventCodecTest, MangledLinesNeverCrash) {
  size_t decoded = 0, refused = 0;
  for (const Event& e : Samples()) {
    const std::string line = EncodeEvent(e);
    for (size_t i = 0; i <= line.size(); ++i) {
      std::vector<std::string> variants = {line.substr(0, i)};
      for (char c : {' ', '0', '9', '-', '+', '~', '%', 'z', '\0'}) {
        if (i < line.size()) variants.push_back(line.substr(0, i) + c + line.substr(i + 1));
      }
      for (const std::string& v : variants) {
        absl::StatusOr<Event> d = DecodeEvent(v);
        if (!d.ok()) {
          ++refused;
          continue;
        }
        ++decoded;
        EXPECT_TRUE(DecodeEvent(EncodeEvent(*d)).ok());
      }
    }
  }
  EXPECT_GT(refused, 0u);
  EXPECT_GT(decoded, 0u);
}

TEST(EventCodecTest, FilesNeedTheirHeader) {
  for (const std::string text : {"", "hello\n", "restoresim-events 999\n", "\n"}) {
    std::istringstream in(text);
    EventFileReader reader(in);
    EXPECT_FALSE(reader.Open().ok()) << text;
  }
  std::ostringstream out;
  EventStreamWriter writer(out);
  for (const Event& e : Samples()) writer.OnEvent(e);
  std::istringstream in(out.str() + "task_opened broken\n");
  EventFileReader reader(in);
  ASSERT_TRUE(reader.Open().ok());
  for (size_t i = 0; i < Samples().size(); ++i) {
    absl::StatusOr<std::optional<Event>> e = reader.Next();
    ASSERT_TRUE(e.ok() && e->has_value()) << i;
  }
  absl::StatusOr<std::optional<Event>> bad = reader.Next();
  ASSERT_FALSE(bad.ok());
  const std::string line = fmt::format("line {}", Samples().size() + 2);  // header, samples
  EXPECT_NE(std::string(bad.status().message()).find(line), std::string::npos)
      << bad.status();
}

}  // namespace
}  // namespace restoresim::events
