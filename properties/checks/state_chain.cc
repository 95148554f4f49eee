// state_chain: the states each stream thread and each task report form one chain — every
// reported transition starts where the last one reported for it ended, and is one Kafka allows
// (StreamThread.State, Task.State) — whichever thread reports it. (The client's own chain is
// stopped_processing's.)
//
// Kafka's counterpart: StreamThread.setState and KafkaStreams.setState validate and change the
// state under one lock, so a transition decided on a stale state (two threads reading the same
// `from`) cannot be reported; a task's transitions are its owner thread's alone.
#include <fmt/format.h>

#include "properties/checker.h"

namespace restoresim::properties {
namespace {

class StateChainChecker final : public Checker {
 public:
  explicit StateChainChecker(OracleContext& c) : Checker(c, "state_chain") {}

  void OnStreamThreadState(std::string_view st, StreamThreadState from,
                           StreamThreadState to) override {
    auto it = thread_state_.find(st);
    // A thread of a new name begins at CREATED; so does a restarted instance's thread of an old
    // name, once the old one is DEAD.
    const bool fresh = it == thread_state_.end() ||
                       (it->second == StreamThreadState::kDead &&
                        from == StreamThreadState::kCreated);
    const StreamThreadState was = fresh ? StreamThreadState::kCreated : it->second;
    if (was != from || !IsValidStreamThreadTransition(from, to)) {
      Violation(Str(st), fmt::format("reports {} -> {} (last reported {}{}), on {}",
                                     StreamThreadStateName(from), StreamThreadStateName(to),
                                     StreamThreadStateName(was),
                                     IsValidStreamThreadTransition(from, to)
                                         ? ""
                                         : "; not a transition Kafka allows",
                                     context().CurrentThreadView()));
    }
    if (it == thread_state_.end()) {
      thread_state_.emplace(Str(st), to);
    } else {
      it->second = to;
    }
  }

  void OnTaskTransition(const events::TaskInfo& task, TaskState from, TaskState to) override {
    // (The ledger's record begins CREATED when the task opens.)
    const TaskRecord* record = ledger().Find(task.who);
    if (record == nullptr) return;  // single_owner's to report
    if (record->state != from) {
      Violation(task.who.ToString(),
                fmt::format("reports {} -> {}, but its last reported state is {}, on {}",
                            TaskStateName(from), TaskStateName(to), TaskStateName(record->state),
                            context().CurrentThreadView()));
    }
  }

 private:
  std::map<std::string, StreamThreadState, std::less<>> thread_state_;
};

RESTORESIM_CHECKER(250, StateChainChecker);

}  // namespace

}  // namespace restoresim::properties
