// Failure signatures: what makes two failures the same, from the structured failure (and from
// a version-1 repro's text, rebuilt by FailureFromLegacyMessage).
#include "sim/failure_signature.h"

#include <gtest/gtest.h>

#include <string>

namespace restoresim::sim {
namespace {

using Kind = RunOutcome::Kind;

FailureSignature Legacy(Kind kind, std::string_view message) {
  return SignatureOf(kind, FailureFromLegacyMessage(kind, message));
}

// ---- signatures ----

TEST(MaskNumbersTest, MasksDecimalHexAndHashLikeWords) {
  EXPECT_EQ(MaskNumbers("step 1234 at offset 56"), "step # at offset #");
  EXPECT_EQ(MaskNumbers("hash 0x0e2ec79aaf563e15 and 0e2ec79a"), "hash # and #");
  EXPECT_EQ(MaskNumbers("thread t3, partition-12, 3rd"), "thread t#, partition-#, #rd");
  EXPECT_EQ(MaskNumbers("no numbers, dead beef"), "no numbers, dead beef");
  EXPECT_EQ(MaskNumbers("0x"), "#x");
  EXPECT_EQ(MaskNumbers(""), "");
}

TEST(LegacyFailureSignatureTest, InvariantPrefixIsTheWholeDetail) {
  const FailureSignature a =
      Legacy(Kind::kFailed, "[invariant:single_owner] step 1234, 0_1#7: two owners");
  const FailureSignature b =
      Legacy(Kind::kFailed, "[invariant:single_owner] step 99, 0_3#1: other words\nmore");
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.detail, "[invariant:single_owner]");
  EXPECT_EQ(a.ToString(), "failed: [invariant:single_owner]");
  EXPECT_NE(a, Legacy(Kind::kFailed, "[invariant:no_lost_update] step 1234"));
  EXPECT_NE(a, Legacy(Kind::kDeadlock, "[invariant:single_owner] step 1234"));
}

TEST(LegacyFailureSignatureTest, OtherFailuresKeepTheirFirstLineWithNumbersMasked) {
  const FailureSignature a = Legacy(Kind::kFailed, "lost update: counter is 4 after 6\n  x");
  EXPECT_EQ(a.ToString(), "failed: lost update: counter is # after #");
  EXPECT_EQ(a, Legacy(Kind::kFailed, "lost update: counter is 3 after 6\n  note: y"));
  EXPECT_NE(a, Legacy(Kind::kFailed, "lost update: the counter is 4 after 6"));
  // A malformed invariant prefix is just text.
  EXPECT_EQ(Legacy(Kind::kFailed, "[invariant:] 12").detail, "[invariant:] #");
}

TEST(LegacyFailureSignatureTest, DeadlocksAreTheObjectsWaitedOn) {
  const std::string report =
      "deadlock: every thread is blocked and no timer is pending (virtual time 0ns, step 12)\n"
      "  thread 'main' (#0): join of thread 'transfer-ab'\n"
      "  thread 'transfer-ab' (#1): mutex_lock on mutex 'lock_b' (#2), holding mutex "
      "'lock_a' (#1)\n"
      "  thread 'transfer-ba' (#2): mutex_lock on mutex 'lock_a' (#1), holding mutex "
      "'lock_b' (#2)";
  const FailureSignature s = Legacy(Kind::kDeadlock, report);
  EXPECT_EQ(s.ToString(), "deadlock: waits on mutex 'lock_a', mutex 'lock_b'");
  // Thread order, steps and ids do not count; the objects do.
  const std::string swapped =
      "deadlock: every thread is blocked and no timer is pending (virtual time 5ns, step 40)\n"
      "  thread 'transfer-ba' (#2): mutex_lock on mutex 'lock_a' (#4)\n"
      "  thread 'transfer-ab' (#1): mutex_lock on mutex 'lock_b' (#3) until t=7ns";
  EXPECT_EQ(Legacy(Kind::kDeadlock, swapped), s);
  EXPECT_NE(Legacy(Kind::kDeadlock,
                        "deadlock\n  thread 'a' (#1): cond_wait on condvar "
                        "'cv' (#3)"),
            s);
}

TEST(LegacyFailureSignatureTest, StepBudgetAndOkAreTheKindOnly) {
  EXPECT_EQ(Legacy(Kind::kStepBudget, "step budget exceeded: 100 scheduling decisions"),
            Legacy(Kind::kStepBudget, "step budget exceeded: 5000 scheduling decisions"));
  EXPECT_EQ(Legacy(Kind::kStepBudget, "x").ToString(), "step-budget");
  EXPECT_EQ(Legacy(Kind::kOk, "").ToString(), "ok");
}

// ---- structured failures ----

TEST(FailureSignatureTest, AnInvariantIsItsNameWhateverTheDetailWhoOrStep) {
  Failure a = InvariantFailure("registration", "0_1#4", "registered twice");
  a.step = 10;
  Failure b = InvariantFailure("registration", "0_2#9", "other words");
  b.step = 99;
  EXPECT_EQ(SignatureOf(Kind::kFailed, a), SignatureOf(Kind::kFailed, b));
  EXPECT_EQ(SignatureOf(Kind::kFailed, a).ToString(), "failed: [invariant:registration]");
  EXPECT_NE(SignatureOf(Kind::kFailed, a),
            SignatureOf(Kind::kFailed, InvariantFailure("single_owner", "0_1#4", "x")));
}

TEST(FailureSignatureTest, ACheckIsItsLocationNotItsMessage) {
  const Failure a = CheckFailure("core/runtime/task.cc:42", "state == kRunning: task 0_1#3");
  const Failure b = CheckFailure("core/runtime/task.cc:42", "state == kRunning: task 0_7#1");
  EXPECT_EQ(SignatureOf(Kind::kFailed, a), SignatureOf(Kind::kFailed, b));
  EXPECT_NE(SignatureOf(Kind::kFailed, a),
            SignatureOf(Kind::kFailed, CheckFailure("core/runtime/task.cc:43", "same")));
  EXPECT_EQ(a.Render(), "check failed at core/runtime/task.cc:42: state == kRunning: task 0_1#3");
}

TEST(FailureSignatureTest, ADeadlockIsItsWaitsAndNotesDoNotCount) {
  Failure a = OtherFailure(FailureKind::kDeadlock, "deadlock: ... step 12");
  a.waits = {"mutex 'lock_a'", "mutex 'lock_b'"};
  Failure b = a;
  b.detail = "deadlock: ... step 40";
  b.notes = {"thread 'x' could not be unwound"};
  EXPECT_EQ(SignatureOf(Kind::kDeadlock, a), SignatureOf(Kind::kDeadlock, b));
  b.waits = {"mutex 'lock_a'"};
  EXPECT_NE(SignatureOf(Kind::kDeadlock, a), SignatureOf(Kind::kDeadlock, b));
}

// What a version-1 file stored (the rendered text) rebuilds to the same structure and the same
// signature as the failure it came from.
TEST(FailureSignatureTest, RenderedFailuresParseBackToThemselves) {
  Failure inv = InvariantFailure("store_contents", "0_2#14", "store 'counts' differs: k1");
  inv.step = 8123;
  const Failure parsed = FailureFromLegacyMessage(Kind::kFailed, inv.Render());
  EXPECT_EQ(parsed, inv);
  Failure check = CheckFailure("core/runtime/task.cc:42", "cond: message: with colons");
  check.step = 5;
  Failure back = FailureFromLegacyMessage(Kind::kFailed, check.Render());
  EXPECT_EQ(back.kind, FailureKind::kCheck);
  EXPECT_EQ(back.location, check.location);
  EXPECT_EQ(back.detail, check.detail);
  Failure noted = InvariantFailure("liveness", "", "never ran");
  noted.notes = {"a", "b"};
  const Failure noted_back = FailureFromLegacyMessage(Kind::kFailed, noted.Render());
  EXPECT_EQ(noted_back.notes, noted.notes);
  EXPECT_EQ(noted_back.who, "");
}

}  // namespace
}  // namespace restoresim::sim
