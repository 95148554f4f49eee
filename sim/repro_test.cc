#include "sim/repro.h"

#include <functional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/port/posix_file_system.h"
#include "core/util/prng.h"

namespace restoresim::sim {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::StartsWith;

std::string Message(const absl::Status& status) {
  return std::string(status.message().data(), status.message().size());
}

Repro SampleRepro() {
  Repro r;
  r.scenario = "demo.abba_deadlock";
  r.config.seed = UINT64_MAX - 5;  // far past 2^53: must survive as a string
  r.config.strategy = StrategySpec{.kind = StrategySpec::Kind::kPct, .pct_depth = 3,
                                   .pct_steps = 50};
  r.config.steps_max = 5000;
  r.config.spurious_wakeup_per_mille = 25;
  r.config.replay_choices = std::vector<uint64_t>{0, 1, 1, 2, (uint64_t{1} << 53) + 1,
                                                  UINT64_MAX};
  r.outcome = "deadlock";
  r.message = "deadlock: every thread is blocked\n  thread 'main' (#0): \"join\"";
  r.failure.kind = FailureKind::kDeadlock;
  r.failure.step = 12;
  r.failure.detail = r.message;
  r.failure.waits = {"mutex 'lock_a'", "mutex 'lock_b'"};
  r.failure.notes = {"thread 'x' could not be unwound"};
  r.trace_hash = 0x0e2ec79aaf563e15;
  r.steps = 12;
  r.replay_command = "restoresim replay demo.abba_deadlock --seed 7 --strategy pct:3:50";
  return r;
}

void ExpectSameRepro(const Repro& a, const Repro& b) {
  EXPECT_EQ(a.scenario, b.scenario);
  EXPECT_EQ(a.config.seed, b.config.seed);
  EXPECT_EQ(a.config.strategy, b.config.strategy);
  EXPECT_EQ(a.config.steps_max, b.config.steps_max);
  EXPECT_EQ(a.config.spurious_wakeup_per_mille, b.config.spurious_wakeup_per_mille);
  EXPECT_EQ(a.config.replay_choices, b.config.replay_choices);
  EXPECT_EQ(a.outcome, b.outcome);
  EXPECT_EQ(a.message, b.message);
  EXPECT_EQ(a.failure, b.failure);
  EXPECT_EQ(a.trace_hash, b.trace_hash);
  EXPECT_EQ(a.steps, b.steps);
  EXPECT_EQ(a.replay_command, b.replay_command);
}

// The sample's JSON with one change made through nlohmann.
std::string Edited(const std::function<void(json&)>& edit) {
  json doc = json::parse(ReproToJson(SampleRepro()));
  edit(doc);
  return doc.dump(2);
}

// Expects `text` to be rejected as InvalidArgument with every one of `parts` in the message.
void ExpectRejected(const std::string& text, const std::vector<std::string>& parts) {
  absl::StatusOr<Repro> r = ReproFromJson(text);
  ASSERT_FALSE(r.ok()) << "accepted: " << text;
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << r.status();
  for (const std::string& part : parts) EXPECT_THAT(Message(r.status()), HasSubstr(part));
}

TEST(ReproTest, RoundTripsEveryField) {
  const Repro original = SampleRepro();
  const std::string text = ReproToJson(original);
  absl::StatusOr<Repro> parsed = ReproFromJson(text);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ExpectSameRepro(original, *parsed);
  EXPECT_EQ(ReproToJson(*parsed), text);  // a stable text: rewriting changes nothing
}

TEST(ReproTest, RoundTripsWithoutChoicesAndWithEmptyChoices) {
  Repro r = SampleRepro();
  r.config.replay_choices.reset();
  absl::StatusOr<Repro> parsed = ReproFromJson(ReproToJson(r));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_FALSE(parsed->config.replay_choices.has_value());
  r.config.replay_choices = std::vector<uint64_t>{};
  parsed = ReproFromJson(ReproToJson(r));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_TRUE(parsed->config.replay_choices.has_value());
  EXPECT_TRUE(parsed->config.replay_choices->empty());
}

TEST(ReproTest, RoundTripsLongSchedulesWrappedToTheLineLimit) {
  Repro r = SampleRepro();
  Prng prng(3);
  r.config.replay_choices = std::vector<uint64_t>();
  for (int i = 0; i < 5000; ++i) r.config.replay_choices->push_back(prng.Uniform(1000));
  const std::string text = ReproToJson(r);
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = text.find('\n', start);
    if (text.compare(start, 14, "  \"expected\": ") == 0) break;  // the message may be long
    EXPECT_LE(end - start, 100u) << text.substr(start, end - start);
    start = end + 1;
  }
  absl::StatusOr<Repro> parsed = ReproFromJson(text);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->config.replay_choices, r.config.replay_choices);
}

TEST(ReproTest, WritesStableKeyOrderAndTheSeedAsAString) {
  const std::string text = ReproToJson(SampleRepro());
  EXPECT_THAT(text, StartsWith("{\n  \"format\": \"restoresim-repro\",\n  \"version\": 2,\n"
                               "  \"scenario\": \"demo.abba_deadlock\",\n"
                               "  \"seed\": \"18446744073709551610\",\n"
                               "  \"strategy\": \"pct:3:50\",\n"));
  EXPECT_THAT(text, HasSubstr("\"trace_hash\": \"0x0e2ec79aaf563e15\""));
  const json doc = json::parse(text);
  EXPECT_TRUE(doc["seed"].is_string());
  EXPECT_EQ(doc["expected"]["steps"], 12);
}

TEST(ReproTest, IgnoresUnknownKeys) {
  absl::StatusOr<Repro> r = ReproFromJson(Edited([](json& d) {
    d["added_in_a_later_writer"] = {{"x", 1}};
    d["expected"]["duration_ms"] = 3.5;
  }));
  ASSERT_TRUE(r.ok()) << r.status();
  ExpectSameRepro(SampleRepro(), *r);
}

TEST(ReproTest, OptionalFieldsMayBeMissing) {
  absl::StatusOr<Repro> r = ReproFromJson(Edited([](json& d) {
    d.erase("choices");
    d.erase("replay");
  }));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->config.replay_choices.has_value());
  EXPECT_EQ(r->replay_command, "");
}

TEST(ReproTest, RejectsTextThatIsNotJson) {
  ExpectRejected("{\"format\": \"restoresim-repro\",\n  \"version\": 1,,}",
                 {"not JSON", "parse error at line 2, column"});
  ExpectRejected("", {"not JSON"});
  ExpectRejected("[1, 2]", {"expected a JSON object, got array"});
}

TEST(ReproTest, RejectsAnotherFormat) {
  ExpectRejected(Edited([](json& d) { d["format"] = "restoresim-trace"; }),
                 {"field \"format\"", "expected \"restoresim-repro\"", "\"restoresim-trace\""});
  ExpectRejected(Edited([](json& d) { d.erase("format"); }), {"field \"format\"", "missing"});
}

TEST(ReproTest, RejectsAnUnsupportedVersion) {
  ExpectRejected(Edited([](json& d) { d["version"] = 3; }),
                 {"unsupported version 3", "reads versions 1 to 2"});
  ExpectRejected(Edited([](json& d) { d["version"] = 0; }), {"unsupported version 0"});
  ExpectRejected(Edited([](json& d) { d["version"] = "1"; }),
                 {"field \"version\"", "expected an integer", "string \"1\""});
}

TEST(ReproTest, RejectsMissingFields) {
  for (const char* key : {"scenario", "seed", "strategy", "steps_max",
                          "spurious_wakeup_per_mille", "expected"}) {
    ExpectRejected(Edited([key](json& d) { d.erase(key); }),
                   {fmt::format("field \"{}\": missing", key)});
  }
  for (const char* key : {"outcome", "message", "trace_hash", "steps"}) {
    ExpectRejected(Edited([key](json& d) { d["expected"].erase(key); }),
                   {fmt::format("field \"expected.{}\": missing", key)});
  }
}

TEST(ReproTest, RejectsMistypedFields) {
  ExpectRejected(Edited([](json& d) { d["scenario"] = 5; }),
                 {"field \"scenario\"", "expected a string, got number 5"});
  ExpectRejected(Edited([](json& d) { d["scenario"] = ""; }), {"scenario", "empty"});
  ExpectRejected(Edited([](json& d) { d["strategy"] = json::array(); }),
                 {"field \"strategy\"", "expected a string"});
  ExpectRejected(Edited([](json& d) { d["expected"] = "deadlock"; }),
                 {"field \"expected\"", "expected an object"});
  ExpectRejected(Edited([](json& d) { d["expected"]["message"] = nullptr; }),
                 {"field \"expected.message\"", "expected a string, got null"});
  ExpectRejected(Edited([](json& d) { d["replay"] = true; }),
                 {"field \"replay\"", "expected a string, got boolean"});
}

TEST(ReproTest, RejectsSeedsThatAreNotDecimalUint64Strings) {
  ExpectRejected(Edited([](json& d) { d["seed"] = 42; }),
                 {"field \"seed\"", "decimal string", "2^53"});
  for (const char* seed : {"", "abc", "-1", "+1", " 1", "0x10", "1e3",
                           "18446744073709551616", "99999999999999999999999"}) {
    ExpectRejected(Edited([seed](json& d) { d["seed"] = seed; }),
                   {"field \"seed\"", "decimal unsigned 64-bit integer"});
  }
  absl::StatusOr<Repro> max =
      ReproFromJson(Edited([](json& d) { d["seed"] = "18446744073709551615"; }));
  ASSERT_TRUE(max.ok()) << max.status();
  EXPECT_EQ(max->config.seed, UINT64_MAX);
}

TEST(ReproTest, RejectsUnparsableStrategies) {
  ExpectRejected(Edited([](json& d) { d["strategy"] = "bogus"; }),
                 {"field \"strategy\"", "unknown strategy 'bogus'"});
  ExpectRejected(Edited([](json& d) { d["strategy"] = "pct:0"; }),
                 {"field \"strategy\"", "pct depth"});
}

TEST(ReproTest, RejectsNegativeAndHugeNumbers) {
  ExpectRejected(Edited([](json& d) { d["steps_max"] = -1; }),
                 {"field \"steps_max\"", "must not be negative, got -1"});
  ExpectRejected(Edited([](json& d) { d["steps_max"] = (uint64_t{1} << 53) + 1; }),
                 {"field \"steps_max\"", "too large"});
  ExpectRejected(R"({"format": "restoresim-repro", "version": 1, "scenario": "s",
                     "seed": "1", "strategy": "random", "steps_max": 1e30})",
                 {"field \"steps_max\"", "expected an integer", "number 1e+30"});
  ExpectRejected(R"({"format": "restoresim-repro", "version": 1, "scenario": "s",
                     "seed": "1", "strategy": "random", "steps_max": 99999999999999999999})",
                 {"field \"steps_max\"", "expected an integer"});
  ExpectRejected(Edited([](json& d) { d["steps_max"] = 2.5; }),
                 {"field \"steps_max\"", "expected an integer", "2.5"});
  ExpectRejected(Edited([](json& d) { d["spurious_wakeup_per_mille"] = 1001; }),
                 {"field \"spurious_wakeup_per_mille\"", "1001 is too large", "1000"});
  ExpectRejected(Edited([](json& d) { d["expected"]["steps"] = -3; }),
                 {"field \"expected.steps\"", "must not be negative"});
  ExpectRejected(Edited([](json& d) { d["version"] = -1; }),
                 {"field \"version\"", "must not be negative"});
}

TEST(ReproTest, RejectsChoicesThatAreNotNonNegativeIntegers) {
  ExpectRejected(Edited([](json& d) { d["choices"] = "0,1"; }),
                 {"field \"choices\"", "expected an array of non-negative integers"});
  ExpectRejected(Edited([](json& d) { d["choices"] = json::object(); }),
                 {"field \"choices\"", "expected an array"});
  ExpectRejected(Edited([](json& d) { d["choices"] = {0, 1, -2}; }),
                 {"field \"choices[2]\"", "must not be negative, got -2"});
  ExpectRejected(Edited([](json& d) { d["choices"] = {0, 1.5}; }),
                 {"field \"choices[1]\"", "expected a non-negative integer, got number 1.5"});
  ExpectRejected(Edited([](json& d) { d["choices"] = {"1"}; }),
                 {"field \"choices[0]\"", "expected a non-negative integer, got string"});
  ExpectRejected(Edited([](json& d) { d["choices"] = {json::array()}; }),
                 {"field \"choices[0]\"", "got array"});
}

TEST(ReproTest, RejectsUnknownOutcomes) {
  ExpectRejected(Edited([](json& d) { d["expected"]["outcome"] = "crashed"; }),
                 {"field \"expected.outcome\"", "unknown outcome \"crashed\"", "step-budget"});
  const std::pair<const char*, const char*> kFits[] = {
      {"failed", "invariant"}, {"failed", "check"},       {"failed", "other"},
      {"failed", "exception"}, {"deadlock", "deadlock"},  {"step-budget", "step-budget"}};
  for (const auto& fit : kFits) {
    // Named copies, not a structured binding: clang before 16 cannot capture one.
    const char* outcome = fit.first;
    const char* kind = fit.second;
    absl::StatusOr<Repro> r = ReproFromJson(Edited([&](json& d) {
      d["expected"]["outcome"] = outcome;
      d["expected"]["failure"]["kind"] = kind;
      d["expected"]["failure"]["invariant"] = "registration";
    }));
    EXPECT_TRUE(r.ok()) << outcome << "/" << kind << ": " << r.status();
  }
  absl::StatusOr<Repro> ok = ReproFromJson(Edited([](json& d) {
    d["expected"]["outcome"] = "ok";
    d["expected"].erase("failure");
  }));
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_FALSE(ok->failure.failed());
}

TEST(ReproTest, RejectsAFailureThatDoesNotFitItsOutcome) {
  ExpectRejected(Edited([](json& d) { d["expected"]["failure"]["kind"] = "invariant"; }),
                 {"field \"expected.failure.kind\"", "\"invariant\" is not a failure kind of "
                                                     "outcome \"deadlock\""});
  ExpectRejected(Edited([](json& d) { d["expected"]["failure"]["kind"] = "boom"; }),
                 {"field \"expected.failure.kind\"", "\"boom\""});
  ExpectRejected(Edited([](json& d) { d["expected"].erase("failure"); }),
                 {"field \"expected.failure\": missing"});
  ExpectRejected(Edited([](json& d) { d["expected"]["failure"]["waits"] = "lock_a"; }),
                 {"field \"expected.failure.waits\"", "expected an array of strings"});
  ExpectRejected(Edited([](json& d) { d["expected"]["failure"]["waits"] = {1}; }),
                 {"field \"expected.failure.waits[0]\"", "expected a string"});
  ExpectRejected(Edited([](json& d) {
                   d["expected"]["outcome"] = "failed";
                   d["expected"]["failure"]["kind"] = "invariant";
                 }),
                 {"field \"expected.failure.invariant\"", "must name its invariant"});
}

// A version-1 file (the failure as text only) still loads: its failure is rebuilt from the
// message, so it shrinks and replays by the same rule as a new one.
TEST(ReproTest, ReadsVersionOneFilesRebuildingTheFailureFromTheMessage) {
  absl::StatusOr<Repro> r = ReproFromJson(Edited([](json& d) {
    d["version"] = 1;
    d["expected"].erase("failure");
    d["expected"]["outcome"] = "failed";
    d["expected"]["message"] = "[invariant:registration] step 81, 0_2#14: registered twice";
  }));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->failure.kind, FailureKind::kInvariant);
  EXPECT_EQ(r->failure.invariant, "registration");
  EXPECT_EQ(r->failure.who, "0_2#14");
  EXPECT_EQ(r->failure.step, 81u);
  EXPECT_EQ(r->failure.detail, "registered twice");
  // Written back, it is a version-2 file with the structure.
  EXPECT_THAT(ReproToJson(*r), HasSubstr("\"invariant\": \"registration\""));
  absl::StatusOr<Repro> deadlock = ReproFromJson(Edited([](json& d) {
    d["version"] = 1;
    d["expected"].erase("failure");
    d["expected"]["message"] =
        "deadlock: every thread is blocked\n  thread 'a' (#1): mutex_lock on mutex 'm' (#2)";
  }));
  ASSERT_TRUE(deadlock.ok()) << deadlock.status();
  EXPECT_EQ(deadlock->failure.waits, std::vector<std::string>{"mutex 'm'"});
}

TEST(ReproTest, RejectsTraceHashesThatAreNotHex) {
  for (const char* hash : {"", "0x", "zz", "0xzz", "1234", "0x12345678901234567", "0x-1",
                           " 0x1"}) {
    ExpectRejected(Edited([hash](json& d) { d["expected"]["trace_hash"] = hash; }),
                   {"field \"expected.trace_hash\"", "hex digits"});
  }
  ExpectRejected(Edited([](json& d) { d["expected"]["trace_hash"] = 1234; }),
                 {"field \"expected.trace_hash\"", "expected a string"});
  absl::StatusOr<Repro> short_hash =
      ReproFromJson(Edited([](json& d) { d["expected"]["trace_hash"] = "0XaBc"; }));
  ASSERT_TRUE(short_hash.ok()) << short_hash.status();
  EXPECT_EQ(short_hash->trace_hash, 0xabcu);
}

TEST(ReproTest, WriteAndReadThroughTheFileSystem) {
  PosixFileSystem& fs = *PosixFileSystem::Default();
  const std::string path = testing::TempDir() + "/repro_test.json";
  ASSERT_TRUE(WriteRepro(fs, path, SampleRepro()).ok());
  absl::StatusOr<Repro> read = ReadRepro(fs, path);
  ASSERT_TRUE(read.ok()) << read.status();
  ExpectSameRepro(SampleRepro(), *read);

  ASSERT_TRUE(WriteFileAtomically(fs, path, "{\"format\": 3}").ok());
  read = ReadRepro(fs, path);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Message(read.status()), StartsWith("repro file " + path + ": field \"format\""));
  ASSERT_TRUE(fs.DeleteFile(path).ok());

  EXPECT_EQ(ReadRepro(fs, path).status().code(), absl::StatusCode::kNotFound);
}

TEST(ReproTest, WriteRefusesAReproThatWouldNotReadBack) {
  PosixFileSystem& fs = *PosixFileSystem::Default();
  const std::string path = testing::TempDir() + "/repro_test_refused.json";
  Repro r = SampleRepro();
  r.outcome = "exploded";
  const absl::Status s = WriteRepro(fs, path, r);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Message(s), HasSubstr("unknown outcome \"exploded\""));
  EXPECT_EQ(fs.FileExists(path).code(), absl::StatusCode::kNotFound);
}

TEST(ReproTest, DeepNestingIsAnErrorNotACrash) {
  const std::string deep_array(200'000, '[');
  ExpectRejected(deep_array, {"not JSON"});
  std::string deep_choices = Edited([](json&) {});
  deep_choices.replace(deep_choices.find("\"choices\": ["), 12,
                       "\"choices\": " + std::string(100'000, '[') + std::string(100'000, ']') +
                           ", \"x\": [");
  ExpectRejected(deep_choices, {"field \"choices[0]\"", "got array of 1 elements"});
  std::string deep_unknown = Edited([](json&) {});
  deep_unknown.replace(deep_unknown.find("\"replay\""), 0,
                       "\"ignored\": " + std::string(100'000, '[') +
                           std::string(100'000, ']') + ", ");
  absl::StatusOr<Repro> r = ReproFromJson(deep_unknown);
  EXPECT_TRUE(r.ok()) << r.status();
  ExpectRejected("{\"format\": " + std::string(100'000, '{') + "}", {"not JSON"});
}

// Must parse or fail with InvalidArgument: never crash, never another code. What parses must
// write back to text that parses to the same repro.
void ExpectHandled(const std::string& text) {
  absl::StatusOr<Repro> r = ReproFromJson(text);
  if (!r.ok()) {
    ASSERT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << r.status();
    ASSERT_FALSE(r.status().message().empty());
    return;
  }
  absl::StatusOr<Repro> again = ReproFromJson(ReproToJson(*r));
  ASSERT_TRUE(again.ok()) << again.status() << "\nfrom: " << text;
  ExpectSameRepro(*r, *again);
}

TEST(ReproTest, FuzzRandomBytes) {
  Prng prng(20240601);
  constexpr std::string_view kJsonish = "{}[]\":,0123456789-+.eEtrufalsn \\/u\n";
  for (int i = 0; i < 2000; ++i) {
    std::string text(prng.Uniform(200), '\0');
    const bool jsonish = prng.OneIn(2);
    for (char& c : text) {
      c = jsonish ? kJsonish[prng.Uniform(kJsonish.size())] : static_cast<char>(prng.Next64());
    }
    ExpectHandled(text);
  }
}

TEST(ReproTest, FuzzMutationsOfAValidFile) {
  const std::string valid = ReproToJson(SampleRepro());
  Prng prng(7);
  int accepted = 0;
  for (int i = 0; i < 2000; ++i) {
    std::string text = valid;
    const uint64_t mutations = 1 + prng.Uniform(4);
    for (uint64_t m = 0; m < mutations && !text.empty(); ++m) {
      const size_t at = prng.Uniform(text.size());
      switch (prng.Uniform(5)) {
        case 0: text[at] = static_cast<char>(prng.Next64()); break;
        case 1: text.erase(at, 1 + prng.Uniform(8)); break;
        case 2: text.insert(at, 1, "{}[]\",:-09e."[prng.Uniform(12)]); break;
        case 3: text.resize(at); break;
        case 4: text.insert(at, text.substr(prng.Uniform(text.size()), prng.Uniform(16))); break;
      }
    }
    ExpectHandled(text);
    accepted += ReproFromJson(text).ok() ? 1 : 0;
  }
  // Some mutations land in strings or whitespace and keep the file valid.
  EXPECT_GT(accepted, 0);
}

}  // namespace
}  // namespace restoresim::sim
