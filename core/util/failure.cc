#include "core/util/failure.h"

#include <fmt/format.h>

#include <array>

namespace restoresim {
namespace {

constexpr std::array<std::string_view, 7> kKindNames = {
    "none", "invariant", "check", "deadlock", "step-budget", "exception", "other"};

}  // namespace

std::string_view FailureKindName(FailureKind kind) {
  const auto i = static_cast<size_t>(kind);
  return i < kKindNames.size() ? kKindNames[i] : "?";
}

std::optional<FailureKind> FailureKindFromName(std::string_view name) {
  for (size_t i = 0; i < kKindNames.size(); ++i) {
    if (kKindNames[i] == name) return static_cast<FailureKind>(i);
  }
  return std::nullopt;
}

std::string Failure::Render() const {
  std::string text;
  switch (kind) {
    case FailureKind::kNone:
      break;
    case FailureKind::kInvariant:
      text = fmt::format("[invariant:{}] step {}, {}: {}", invariant, step,
                         who.empty() ? "-" : who, detail);
      break;
    case FailureKind::kCheck:
      text = fmt::format("check failed at {}: {}", location, detail);
      break;
    case FailureKind::kDeadlock:
    case FailureKind::kStepBudget:
    case FailureKind::kException:
    case FailureKind::kOther:
      text = detail;
      break;
  }
  for (const std::string& note : notes) text += "\n  note: " + note;
  return text;
}

Failure InvariantFailure(std::string_view invariant, std::string_view who, std::string detail) {
  Failure f;
  f.kind = FailureKind::kInvariant;
  f.invariant = std::string(invariant);
  f.who = std::string(who);
  f.detail = std::move(detail);
  return f;
}

Failure CheckFailure(std::string location, std::string detail) {
  Failure f;
  f.kind = FailureKind::kCheck;
  f.location = std::move(location);
  f.detail = std::move(detail);
  return f;
}

Failure OtherFailure(FailureKind kind, std::string detail) {
  Failure f;
  f.kind = kind;
  f.detail = std::move(detail);
  return f;
}

}  // namespace restoresim
