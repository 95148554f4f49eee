#include "sim/repro.h"

#include <charconv>
#include <iterator>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "sim/failure_signature.h"
#include "sim/repro_document.h"
#include "sim/simulation.h"
#include "sim/strategy.h"

namespace restoresim::sim {
namespace {

using Json = nlohmann::json;

// Abseil 20220623 (as Debian builds it) has its own absl::string_view, not std::string_view.
std::string_view StdView(absl::string_view s) { return std::string_view(s.data(), s.size()); }
absl::string_view AbslView(std::string_view s) { return absl::string_view(s.data(), s.size()); }

constexpr size_t kChoicesLineColumnsMax = 96;
constexpr size_t kValueShownCharsMax = 60;  // of an offending value, in error messages

// A JSON string literal; invalid UTF-8 becomes U+FFFD rather than an exception.
std::string Quote(std::string_view s) {
  return Json(std::string(s)).dump(-1, ' ', false, Json::error_handler_t::replace);
}

// "string \"abc\"", "number -5", "array of 2 elements": what was found instead, for error
// messages. Containers are not dumped: nlohmann's serializer recurses, and input may nest
// deeper than the stack allows (its parser and destructor do not recurse).
std::string Describe(const Json& value) {
  if (value.is_array()) return fmt::format("array of {} elements", value.size());
  if (value.is_object()) return fmt::format("object with {} keys", value.size());
  std::string text = value.dump(-1, ' ', false, Json::error_handler_t::replace);
  if (text.size() > kValueShownCharsMax) text = text.substr(0, kValueShownCharsMax) + "...";
  return fmt::format("{} {}", value.type_name(), text);
}

bool IsOutcomeName(std::string_view name) { return ParseOutcomeKind(name).has_value(); }

// Whether a failure of `kind` belongs to an outcome of `outcome`.
bool KindFitsOutcome(FailureKind kind, RunOutcome::Kind outcome) {
  switch (outcome) {
    case RunOutcome::Kind::kOk: return kind == FailureKind::kNone;
    case RunOutcome::Kind::kDeadlock: return kind == FailureKind::kDeadlock;
    case RunOutcome::Kind::kStepBudget: return kind == FailureKind::kStepBudget;
    case RunOutcome::Kind::kFailed:
      return kind == FailureKind::kInvariant || kind == FailureKind::kCheck ||
             kind == FailureKind::kException || kind == FailureKind::kOther;
  }
  return false;
}

bool ParseDecimalUint64(std::string_view text, uint64_t& out) {
  if (text.empty() || text.size() > 20) return false;
  for (const char c : text) {
    if (c < '0' || c > '9') return false;
  }
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), out);
  return error == std::errc() && end == text.data() + text.size();
}

// "0x" then 1 to 16 hex digits, either case.
bool ParseHexUint64(std::string_view text, uint64_t& out) {
  if (text.size() < 3 || text.size() > 18 || text[0] != '0' || (text[1] != 'x' && text[1] != 'X')) {
    return false;
  }
  const std::string_view digits = text.substr(2);
  for (const char c : digits) {
    const bool hex = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    if (!hex) return false;
  }
  const auto [end, error] =
      std::from_chars(digits.data(), digits.data() + digits.size(), out, /*base=*/16);
  return error == std::errc() && end == digits.data() + digits.size();
}

// Reads typed fields out of JSON objects and keeps the first error: after one, every read
// returns a default, so a parse reads straight through and checks status() once.
class FieldReader {
 public:
  explicit FieldReader(std::string source) : source_(std::move(source)) {}

  bool ok() const { return status_.ok(); }
  const absl::Status& status() const { return status_; }

  void Fail(std::string_view field, std::string_view problem) {
    if (!status_.ok()) return;
    const std::string message =
        field.empty() ? fmt::format("{}: {}", source_, problem)
                      : fmt::format("{}: field \"{}\": {}", source_, field, problem);
    status_ = absl::InvalidArgumentError(AbslView(message));
  }

  // The member `key` of `object` (named `field` in errors); null, after failing, if absent.
  const Json* Require(const Json& object, const std::string& field, const char* key) {
    if (!ok()) return nullptr;
    const auto it = object.find(key);
    if (it == object.end()) {
      Fail(field, "missing (a required field)");
      return nullptr;
    }
    return &*it;
  }

  std::string String(const Json* value, const std::string& field) {
    if (value == nullptr || !ok()) return "";
    if (!value->is_string()) {
      Fail(field, fmt::format("expected a string, got {}", Describe(*value)));
      return "";
    }
    return value->get_ref<const std::string&>();
  }

  uint64_t Unsigned(const Json* value, const std::string& field, uint64_t max) {
    if (value == nullptr || !ok()) return 0;
    if (value->is_number_unsigned()) {
      const uint64_t n = value->get<uint64_t>();
      if (n <= max) return n;
      Fail(field, fmt::format("{} is too large: the limit is {}", n, max));
    } else if (value->is_number_integer() && value->get<int64_t>() >= 0) {
      const auto n = static_cast<uint64_t>(value->get<int64_t>());
      if (n <= max) return n;
      Fail(field, fmt::format("{} is too large: the limit is {}", n, max));
    } else if (value->is_number_integer()) {
      Fail(field, fmt::format("must not be negative, got {}", value->get<int64_t>()));
    } else {
      Fail(field, fmt::format("expected an integer in [0, {}], got {}", max, Describe(*value)));
    }
    return 0;
  }

 private:
  std::string source_;
  absl::Status status_;
};

// Returns the version read (0 after an error).
uint64_t ReadHeader(FieldReader& r, const Json& doc) {
  const std::string format = r.String(r.Require(doc, "format", "format"), "format");
  if (r.ok() && format != kReproFormat) {
    r.Fail("format", fmt::format("expected \"{}\", got {} (not a restoresim repro file)",
                                 kReproFormat, Quote(format)));
  }
  const uint64_t version = r.Unsigned(r.Require(doc, "version", "version"), "version", UINT64_MAX);
  if (r.ok() && (version < kReproVersionOldest || version > kReproVersion)) {
    r.Fail("version", fmt::format("unsupported version {}: this build reads versions {} to {}",
                                  version, kReproVersionOldest, kReproVersion));
  }
  return r.ok() ? version : 0;
}

void ReadConfig(FieldReader& r, const Json& doc, Repro& repro) {
  repro.scenario = r.String(r.Require(doc, "scenario", "scenario"), "scenario");
  if (r.ok() && repro.scenario.empty()) r.Fail("scenario", "must not be empty");

  const Json* seed = r.Require(doc, "seed", "seed");
  if (seed != nullptr && !seed->is_string()) {
    r.Fail("seed", fmt::format("expected the seed as a decimal string (e.g. \"42\"; a JSON "
                               "number loses bits past 2^53), got {}", Describe(*seed)));
  }
  const std::string seed_text = r.String(seed, "seed");
  if (r.ok() && !ParseDecimalUint64(seed_text, repro.config.seed)) {
    r.Fail("seed", fmt::format("expected a decimal unsigned 64-bit integer (0 to {}), got {}",
                               UINT64_MAX, Quote(seed_text)));
  }

  const std::string strategy = r.String(r.Require(doc, "strategy", "strategy"), "strategy");
  if (r.ok()) {
    absl::StatusOr<StrategySpec> spec = StrategySpec::Parse(strategy);
    if (spec.ok()) {
      repro.config.strategy = *spec;
    } else {
      r.Fail("strategy", StdView(spec.status().message()));
    }
  }

  repro.config.steps_max =
      r.Unsigned(r.Require(doc, "steps_max", "steps_max"), "steps_max", kReproStepsMax);
  repro.config.spurious_wakeup_per_mille = static_cast<uint32_t>(r.Unsigned(
      r.Require(doc, "spurious_wakeup_per_mille", "spurious_wakeup_per_mille"),
      "spurious_wakeup_per_mille", kReproSpuriousPerMilleMax));
}

// The choices were streamed out of the document as it was parsed (repro_document.h): the
// array left in it is empty, and the first element that was not a non-negative integer kept.
void ReadChoices(FieldReader& r, ReproDocument& parsed, Repro& repro) {
  const auto it = parsed.doc.find("choices");
  if (it == parsed.doc.end() || !r.ok()) return;
  if (!it->is_array()) {
    r.Fail("choices", fmt::format("expected an array of non-negative integers, got {}",
                                  Describe(*it)));
    return;
  }
  if (parsed.bad_choice_index) {
    const std::string field = fmt::format("choices[{}]", *parsed.bad_choice_index);
    const Json& value = parsed.bad_choice;
    if (!parsed.bad_choice_container.empty()) {
      r.Fail(field, fmt::format("expected a non-negative integer, got {}",
                                parsed.bad_choice_container));
    } else if (!value.is_number_integer()) {  // strings, floats, ...: before Unsigned's wording
      r.Fail(field, fmt::format("expected a non-negative integer, got {}", Describe(value)));
    } else {
      (void)r.Unsigned(&value, field, UINT64_MAX);  // says why (negative)
    }
    return;
  }
  repro.config.replay_choices = std::move(parsed.choices);
}

std::vector<std::string> ReadStrings(FieldReader& r, const Json& object, const char* key,
                                     const std::string& field) {
  std::vector<std::string> out;
  const auto it = object.find(key);
  if (it == object.end() || !r.ok()) return out;
  if (!it->is_array()) {
    r.Fail(field, fmt::format("expected an array of strings, got {}", Describe(*it)));
    return out;
  }
  if (it->size() > kReproFailureListMax) {
    r.Fail(field, fmt::format("{} entries: the limit is {}", it->size(), kReproFailureListMax));
    return out;
  }
  for (size_t i = 0; i < it->size() && r.ok(); ++i) {
    out.push_back(r.String(&(*it)[i], fmt::format("{}[{}]", field, i)));
  }
  return out;
}

// "expected.failure" (version 2): the structured failure.
void ReadFailure(FieldReader& r, const Json& expected, RunOutcome::Kind outcome, Failure& f) {
  const Json* failure = r.Require(expected, "expected.failure", "failure");
  if (failure == nullptr) return;
  if (!failure->is_object()) {
    r.Fail("expected.failure", fmt::format("expected an object, got {}", Describe(*failure)));
    return;
  }
  const std::string kind =
      r.String(r.Require(*failure, "expected.failure.kind", "kind"), "expected.failure.kind");
  if (!r.ok()) return;
  const std::optional<FailureKind> parsed = FailureKindFromName(kind);
  if (!parsed || !KindFitsOutcome(*parsed, outcome)) {
    r.Fail("expected.failure.kind",
           fmt::format("{} is not a failure kind of outcome \"{}\"", Quote(kind),
                       OutcomeKindName(outcome)));
    return;
  }
  f.kind = *parsed;
  auto optional_string = [&](const char* key) {
    const auto it = failure->find(key);
    return it == failure->end() ? std::string()
                                : r.String(&*it, std::string("expected.failure.") + key);
  };
  f.invariant = optional_string("invariant");
  f.who = optional_string("who");
  f.detail = optional_string("detail");
  f.location = optional_string("location");
  if (const auto it = failure->find("step"); it != failure->end()) {
    f.step = r.Unsigned(&*it, "expected.failure.step", kReproStepsMax);
  }
  f.waits = ReadStrings(r, *failure, "waits", "expected.failure.waits");
  f.notes = ReadStrings(r, *failure, "notes", "expected.failure.notes");
  if (r.ok() && f.kind == FailureKind::kInvariant && f.invariant.empty()) {
    r.Fail("expected.failure.invariant", "an invariant failure must name its invariant");
  }
}

void ReadExpected(FieldReader& r, const Json& doc, uint64_t version, Repro& repro) {
  const Json* expected = r.Require(doc, "expected", "expected");
  if (expected == nullptr) return;
  if (!expected->is_object()) {
    r.Fail("expected", fmt::format("expected an object, got {}", Describe(*expected)));
    return;
  }
  repro.outcome = r.String(r.Require(*expected, "expected.outcome", "outcome"),
                           "expected.outcome");
  if (r.ok() && !IsOutcomeName(repro.outcome)) {
    r.Fail("expected.outcome",
           fmt::format("unknown outcome {}: expected \"ok\", \"failed\", \"deadlock\" or "
                       "\"step-budget\"", Quote(repro.outcome)));
  }
  repro.message = r.String(r.Require(*expected, "expected.message", "message"),
                           "expected.message");
  const std::string hash = r.String(r.Require(*expected, "expected.trace_hash", "trace_hash"),
                                    "expected.trace_hash");
  if (r.ok() && !ParseHexUint64(hash, repro.trace_hash)) {
    r.Fail("expected.trace_hash",
           fmt::format("expected \"0x\" and 1 to 16 hex digits, got {}", Quote(hash)));
  }
  repro.steps = r.Unsigned(r.Require(*expected, "expected.steps", "steps"), "expected.steps",
                           kReproStepsMax);
  if (!r.ok()) return;
  const RunOutcome::Kind outcome = *ParseOutcomeKind(repro.outcome);
  if (version == 1) {
    // Version 1 kept the failure as text only: rebuild its structure from it.
    repro.failure = FailureFromLegacyMessage(outcome, repro.message);
  } else if (outcome != RunOutcome::Kind::kOk || expected->contains("failure")) {
    ReadFailure(r, *expected, outcome, repro.failure);
  }
}

absl::StatusOr<Repro> ParseRepro(std::string_view text, const std::string& source) {
  FieldReader r(source);
  if (text.size() > kReproBytesMax) {
    r.Fail("", fmt::format("{} bytes: the limit is {}", text.size(), kReproBytesMax));
    return r.status();
  }
  ReproDocument parsed;
  std::string field;
  std::string problem;
  if (!ParseReproDocument(text,
                          ReproDocumentLimits{.choices_max = kReproChoicesMax,
                                              .entries_max = kReproFailureListMax},
                          parsed, field, problem)) {
    r.Fail(field, problem);
    return r.status();
  }
  const Json& doc = parsed.doc;
  if (!doc.is_object()) {
    r.Fail("", fmt::format("expected a JSON object, got {}", Describe(doc)));
    return r.status();
  }
  Repro repro;
  const uint64_t version = ReadHeader(r, doc);  // first: versions differ in their fields
  ReadConfig(r, doc, repro);
  ReadChoices(r, parsed, repro);
  ReadExpected(r, doc, version, repro);
  if (const auto replay = doc.find("replay"); replay != doc.end()) {
    repro.replay_command = r.String(&*replay, "replay");
  }
  if (!r.ok()) return r.status();
  return repro;
}

std::string QuoteList(const std::vector<std::string>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) out += (i == 0 ? "" : ", ") + Quote(items[i]);
  return out + "]";
}

// ",\n    \"failure\": {...}" inside "expected".
void AppendFailure(std::string& out, const Failure& f) {
  out += ",\n    \"failure\": {\n";
  std::vector<std::string> fields;
  fields.push_back(fmt::format("\"kind\": {}", Quote(FailureKindName(f.kind))));
  if (!f.invariant.empty()) fields.push_back(fmt::format("\"invariant\": {}", Quote(f.invariant)));
  if (!f.who.empty()) fields.push_back(fmt::format("\"who\": {}", Quote(f.who)));
  fields.push_back(fmt::format("\"step\": {}", f.step));
  if (!f.location.empty()) fields.push_back(fmt::format("\"location\": {}", Quote(f.location)));
  fields.push_back(fmt::format("\"detail\": {}", Quote(f.detail)));
  if (!f.waits.empty()) fields.push_back(fmt::format("\"waits\": {}", QuoteList(f.waits)));
  if (!f.notes.empty()) fields.push_back(fmt::format("\"notes\": {}", QuoteList(f.notes)));
  for (size_t i = 0; i < fields.size(); ++i) {
    out += "      " + fields[i] + (i + 1 < fields.size() ? ",\n" : "\n");
  }
  out += "    }";
}

void AppendChoices(std::string& out, const std::vector<uint64_t>& choices) {
  out += "  \"choices\": [";
  size_t line_start = out.size();
  for (size_t i = 0; i < choices.size(); ++i) {
    const std::string value = std::to_string(choices[i]);
    if (i == 0) {
      out += "\n    ";
      line_start = out.size() - 4;
    } else if (out.size() - line_start + value.size() + 2 > kChoicesLineColumnsMax) {
      out += ",\n    ";
      line_start = out.size() - 4;
    } else {
      out += ", ";
    }
    out += value;
  }
  out += choices.empty() ? "],\n" : "\n  ],\n";
}

}  // namespace

std::string ReproToJson(const Repro& repro) {
  const RunConfig& c = repro.config;
  std::string out = "{\n";
  auto line = [&out](std::string_view key, std::string_view json_value) {
    fmt::format_to(std::back_inserter(out), "  \"{}\": {},\n", key, json_value);
  };
  line("format", Quote(kReproFormat));
  line("version", std::to_string(kReproVersion));
  line("scenario", Quote(repro.scenario));
  line("seed", Quote(std::to_string(c.seed)));
  line("strategy", Quote(c.strategy.ToString()));
  line("steps_max", std::to_string(c.steps_max));
  line("spurious_wakeup_per_mille", std::to_string(c.spurious_wakeup_per_mille));
  if (c.replay_choices.has_value()) AppendChoices(out, *c.replay_choices);
  fmt::format_to(std::back_inserter(out),
                 "  \"expected\": {{\n    \"outcome\": {},\n    \"message\": {},\n"
                 "    \"trace_hash\": \"0x{:016x}\",\n    \"steps\": {}",
                 Quote(repro.outcome), Quote(repro.message), repro.trace_hash, repro.steps);
  if (repro.failure.failed()) AppendFailure(out, repro.failure);
  out += "\n  },\n";
  fmt::format_to(std::back_inserter(out), "  \"replay\": {}\n}}\n", Quote(repro.replay_command));
  return out;
}

absl::StatusOr<Repro> ReproFromJson(std::string_view text) { return ParseRepro(text, "repro"); }

absl::StatusOr<std::string> ReproToCheckedJson(const Repro& repro, const std::string& path) {
  std::string text = ReproToJson(repro);
  // Checked when written and when read back: never write a file the reader rejects.
  absl::StatusOr<Repro> check = ParseRepro(text, fmt::format("repro for {}", path));
  if (!check.ok()) {
    const std::string message =
        fmt::format("refusing to write an unreadable {}", StdView(check.status().message()));
    return absl::InvalidArgumentError(AbslView(message));
  }
  return text;
}

absl::Status WriteRepro(FileSystem& fs, const std::string& path, const Repro& repro) {
  absl::StatusOr<std::string> text = ReproToCheckedJson(repro, path);
  if (!text.ok()) return text.status();
  return WriteFileAtomically(fs, path, *text);
}

absl::StatusOr<Repro> ReadRepro(FileSystem& fs, const std::string& path) {
  absl::StatusOr<std::string> text = fs.ReadFile(path);
  if (!text.ok()) return text.status();
  return ParseRepro(*text, fmt::format("repro file {}", path));
}

}  // namespace restoresim::sim
