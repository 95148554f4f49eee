#include "sim/failure_signature.h"

#include <charconv>
#include <set>

#include "absl/strings/str_join.h"

namespace restoresim::sim {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsHexDigit(char c) { return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
bool IsWordChar(char c) {
  return IsDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

std::string_view FirstLine(std::string_view text) { return text.substr(0, text.find('\n')); }

// The objects of a deadlock report's lines
// "  thread 'x' (#1): mutex_lock on mutex 'lock_b' (#2), holding mutex 'lock_a' (#1)".
std::vector<std::string> LegacyDeadlockWaits(std::string_view message) {
  std::set<std::string> objects;
  size_t start = message.find('\n');
  while (start != std::string_view::npos) {
    const size_t end = message.find('\n', start + 1);
    std::string_view line = message.substr(
        start + 1, end == std::string_view::npos ? std::string_view::npos : end - start - 1);
    start = end;
    const size_t colon = line.find("): ");
    if (colon == std::string_view::npos) continue;
    std::string_view wait = line.substr(colon + 3);
    wait = wait.substr(0, wait.find(", holding"));
    const size_t on = wait.find(" on ");
    if (on == std::string_view::npos) continue;  // a join or a sleep: no object
    std::string_view object = wait.substr(on + 4);
    object = object.substr(0, object.find(" (#"));
    object = object.substr(0, object.find(" until "));
    objects.insert(std::string(object));
  }
  return {objects.begin(), objects.end()};
}

// "[invariant:NAME] step N, WHO: detail" -> its parts; false when the line is not one.
bool ParseInvariantLine(std::string_view message, Failure& f) {
  constexpr std::string_view kPrefix = "[invariant:";
  if (!message.starts_with(kPrefix)) return false;
  const size_t close = message.find(']');
  if (close == std::string_view::npos || close == kPrefix.size()) return false;
  f.kind = FailureKind::kInvariant;
  f.invariant = std::string(message.substr(kPrefix.size(), close - kPrefix.size()));
  std::string_view rest = message.substr(close + 1);
  if (rest.starts_with(" step ")) {
    rest.remove_prefix(6);
    const auto [ptr, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), f.step);
    if (ec == std::errc()) rest.remove_prefix(static_cast<size_t>(ptr - rest.data()));
    if (rest.starts_with(", ")) rest.remove_prefix(2);
    const size_t colon = rest.find(": ");
    if (colon != std::string_view::npos) {
      f.who = std::string(rest.substr(0, colon));
      if (f.who == "-") f.who.clear();
      rest.remove_prefix(colon + 2);
    }
  } else if (rest.starts_with(" ")) {
    rest.remove_prefix(1);
  }
  f.detail = std::string(rest);
  return true;
}

}  // namespace

std::string FailureSignature::ToString() const {
  std::string text(OutcomeKindName(kind));
  if (!detail.empty()) text += ": " + detail;
  return text;
}

FailureSignature SignatureOf(RunOutcome::Kind kind, const Failure& failure) {
  FailureSignature s;
  s.kind = kind;
  switch (failure.kind) {
    case FailureKind::kNone:
    case FailureKind::kStepBudget:
      break;
    case FailureKind::kInvariant:
      s.detail = "[invariant:" + failure.invariant + "]";
      break;
    case FailureKind::kCheck:
      s.detail = "check failed at " + failure.location;
      break;
    case FailureKind::kDeadlock: {
      std::set<std::string> masked;
      for (const std::string& w : failure.waits) masked.insert(MaskNumbers(w));
      if (!masked.empty()) s.detail = "waits on " + absl::StrJoin(masked, ", ");
      break;
    }
    case FailureKind::kException:
    case FailureKind::kOther:
      s.detail = MaskNumbers(FirstLine(failure.detail));
      break;
  }
  return s;
}

bool SameFailure(RunOutcome::Kind expected_kind, const Failure& expected,
                 const RunOutcome& actual) {
  return SignatureOf(expected_kind, expected) == SignatureOf(actual);
}

std::string MaskNumbers(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    if (!IsDigit(text[i])) {
      out += text[i++];
      continue;
    }
    const bool word_start = i == 0 || !IsWordChar(text[i - 1]);
    size_t end = i + 1;
    if (text[i] == '0' && i + 2 < text.size() && (text[i + 1] == 'x' || text[i + 1] == 'X') &&
        IsHexDigit(text[i + 2])) {
      end = i + 3;  // "0x" then hex digits
      while (end < text.size() && IsHexDigit(text[end])) ++end;
    } else {
      while (end < text.size() && IsHexDigit(text[end])) ++end;
      const bool word_end = end == text.size() || !IsWordChar(text[end]);
      if (!(word_start && word_end)) {  // not a whole hex word: the decimal digits only
        end = i + 1;
        while (end < text.size() && IsDigit(text[end])) ++end;
      }
    }
    out += '#';
    i = end;
  }
  return out;
}

Failure FailureFromLegacyMessage(RunOutcome::Kind kind, std::string_view message) {
  Failure f;
  // Teardown notes followed the message on "\n  note: " lines.
  std::string_view main = message;
  const size_t note = message.find("\n  note: ");
  if (note != std::string_view::npos) {
    main = message.substr(0, note);
    std::string_view notes = message.substr(note);
    while (notes.starts_with("\n  note: ")) {
      notes.remove_prefix(9);
      const size_t next = notes.find("\n  note: ");
      f.notes.emplace_back(notes.substr(0, next));
      notes = next == std::string_view::npos ? std::string_view() : notes.substr(next);
    }
  }
  switch (kind) {
    case RunOutcome::Kind::kOk:
      return Failure{};
    case RunOutcome::Kind::kStepBudget:
      f.kind = FailureKind::kStepBudget;
      f.detail = std::string(main);
      return f;
    case RunOutcome::Kind::kDeadlock:
      f.kind = FailureKind::kDeadlock;
      f.detail = std::string(main);
      f.waits = LegacyDeadlockWaits(main);
      return f;
    case RunOutcome::Kind::kFailed:
      break;
  }
  if (ParseInvariantLine(main, f)) return f;
  constexpr std::string_view kCheck = "check failed at ";
  if (main.starts_with(kCheck)) {
    std::string_view rest = main.substr(kCheck.size());
    // "FILE:LINE: condition: message"
    const size_t line_colon = rest.find(':');
    const size_t end = line_colon == std::string_view::npos ? std::string_view::npos
                                                            : rest.find(": ", line_colon + 1);
    if (end != std::string_view::npos) {
      f.kind = FailureKind::kCheck;
      f.location = std::string(rest.substr(0, end));
      f.detail = std::string(rest.substr(end + 2));
      return f;
    }
  }
  f.kind = main.starts_with("thread '") || main.starts_with("std::terminate")
               ? FailureKind::kException
               : FailureKind::kOther;
  f.detail = std::string(main);
  return f;
}

}  // namespace restoresim::sim
