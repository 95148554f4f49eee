// Oracle::Judge: each kind of runtime event to every checker's hook, then to the ledger (which
// keeps no record of some: those go to the checkers only).
#include "properties/oracle.h"

#include <atomic>
#include <optional>
#include <vector>

namespace restoresim::properties {

using namespace events;  // NOLINT(build/namespaces): every event kind, in this file only

namespace {

// A number per hook, handed out during static initialisation (a variable, not a function's
// static: no guard to test at every event): an index into an Oracle's lists, never an
// ordering of anything.
size_t NextHookSlot() {
  static std::atomic<size_t> next{0};
  return next.fetch_add(1);
}

template <auto Hook>
const size_t kHookSlot = NextHookSlot();

// Whether `c`'s class overrides `Hook`, against `defaults`, a checker that overrides nothing.
// GCC's bound-member-function extension resolves a virtual call to its target, which is
// compared with the default's; other compilers call every checker (the defaults ignore the
// event, so the verdicts are the same).
template <auto Hook>
bool Overrides(Checker& c, Checker& defaults) {
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpmf-conversions"
  using Target = void (*)();
  return (Target)(c.*Hook) != (Target)(defaults.*Hook);  // NOLINT(readability/casting)
#pragma GCC diagnostic pop
#else
  (void)c;
  (void)defaults;
  return true;
#endif
}

}  // namespace

struct Oracle::Judge {
  Oracle& o;

  // Every checker whose class overrides `Hook`, in the order of checkers_ (the others would
  // ignore the event: the defaults do nothing). The list is made at a hook's first event.
  template <auto Hook, typename F>
  void Each(F&& f) {
    const size_t slot = kHookSlot<Hook>;
    if (slot >= o.hooked_.size()) o.hooked_.resize(slot + 1);
    std::optional<std::vector<Checker*>>& hooked = o.hooked_[slot];
    if (!hooked.has_value()) {
      hooked.emplace();
      for (auto& c : o.checkers_) {
        if (Overrides<Hook>(*c, *o.no_hooks_)) hooked->push_back(c.get());
      }
    }
    for (Checker* c : *hooked) f(*c);
  }
  // Every checker (a hook not named above: correct, only slower).
  template <typename F>
  void Each(F&& f) {
    for (auto& c : o.checkers_) f(*c);
  }

  void operator()(const TaskOpened& e) {
    Each<&Checker::OnTaskOpened>([&](Checker& c) { c.OnTaskOpened(e.task); });
    o.ledger_.OnTaskOpened(e.task);
  }
  void operator()(const TaskTransitioned& e) {
    Each<&Checker::OnTaskTransition>([&](Checker& c) { c.OnTaskTransition(e.task, e.from, e.to); });
    o.ledger_.OnTaskTransition(e.task, e.from, e.to);
  }
  void operator()(const TaskDestroyed& e) {
    Each<&Checker::OnTaskDestroyed>([&](Checker& c) { c.OnTaskDestroyed(e.who, e.state); });
    o.ledger_.OnTaskDestroyed(e.who, e.state);
  }
  void operator()(const Processed& e) {
    Each<&Checker::OnProcess>([&](Checker& c) { c.OnProcess(e.task, e.records); });
  }
  void operator()(const HandedOff& e) {
    Each<&Checker::OnHandOff>([&](Checker& c) {
      c.OnHandOff(e.restore_thread, e.who, e.from, e.to);
    });
    o.ledger_.OnHandOff(e.restore_thread, e.who, e.from, e.to);
  }
  void operator()(const CloseApplied& e) {
    Each<&Checker::OnCloseApplied>([&](Checker& c) { c.OnCloseApplied(e.restore_thread, e.who); });
    o.ledger_.OnCloseApplied(e.restore_thread, e.who);
  }
  void operator()(const TypeConverted& e) {
    Each<&Checker::OnTypeConversion>([&](Checker& c) {
      c.OnTypeConversion(e.state, e.from, e.to);
    });
  }
  void operator()(const RestoreEventMoved& e) {
    Each<&Checker::OnRestoreEvent>([&](Checker& c) {
      c.OnRestoreEvent(e.restore_thread, e.event, e.drained);
    });
    o.ledger_.OnRestoreEvent(e.restore_thread, e.event, e.drained);
  }
  void operator()(const CorruptionHandled& e) {
    Each<&Checker::OnCorruptionHandled>([&](Checker& c) {
      c.OnCorruptionHandled(e.reported, e.acted_on);
    });
  }
  void operator()(const RoundQueued& e) {
    Each<&Checker::OnRoundQueued>([&](Checker& c) { c.OnRoundQueued(e.restore_thread, e.items); });
  }
  void operator()(const RestoreLoopBegan& e) {
    Each<&Checker::OnRestoreLoop>([&](Checker& c) { c.OnRestoreLoop(e.restore_thread); });
  }
  void operator()(const RestoreIdled& e) {
    Each<&Checker::OnRestoreIdle>([&](Checker& c) {
      c.OnRestoreIdle(e.restore_thread, e.begin, e.woken);
    });
  }
  void operator()(const RoundsDrained& e) {
    Each<&Checker::OnRoundsDrained>([&](Checker& c) {
      c.OnRoundsDrained(e.restore_thread, e.rounds);
    });
  }
  void operator()(const RestoreShutdownRequested& e) {
    Each<&Checker::OnRestoreShutdownRequested>([&](Checker& c) {
      c.OnRestoreShutdownRequested(e.restore_thread);
    });
  }
  void operator()(const RestoreStopped& e) {
    Each<&Checker::OnRestoreStopped>([&](Checker& c) { c.OnRestoreStopped(e.restore_thread); });
    o.ledger_.OnRestoreStopped(e.restore_thread);
  }
  void operator()(const AssignmentChanged& e) {
    Each<&Checker::OnAssignment>([&](Checker& c) {
      c.OnAssignment(e.stream_thread, e.active, e.standby, e.revocation);
    });
    o.ledger_.OnAssignment(e.stream_thread, e.active, e.standby);
  }
  void operator()(const DecisionTaken& e) {
    Each<&Checker::OnDecision>([&](Checker& c) {
      c.OnDecision(e.stream_thread, e.who, e.decision, e.type);
    });
    o.ledger_.OnDecision(e.stream_thread, e.who, e.decision, e.type);
  }
  void operator()(const TaskFailed& e) {
    Each<&Checker::OnTaskFailed>([&](Checker& c) {
      c.OnTaskFailed(e.stream_thread, e.who, e.error);
    });
  }
  void operator()(const TaskManagerViewed& e) {
    Each<&Checker::OnTaskManagerView>([&](Checker& c) {
      c.OnTaskManagerView(e.stream_thread, e.tasks);
    });
  }
  void operator()(const StreamLoopBegan& e) {
    Each<&Checker::OnStreamLoop>([&](Checker& c) {
      c.OnStreamLoop(e.stream_thread, e.restore_thread);
    });
    o.ledger_.OnStreamLoop(e.stream_thread, e.restore_thread);
  }
  void operator()(const StreamThreadStateChanged& e) {
    Each<&Checker::OnStreamThreadState>([&](Checker& c) {
      c.OnStreamThreadState(e.stream_thread, e.from, e.to);
    });
    o.ledger_.OnStreamThreadState(e.stream_thread, e.from, e.to);
  }
  void operator()(const ProcessingStopped& e) {
    Each<&Checker::OnProcessingStopped>([&](Checker& c) {
      c.OnProcessingStopped(e.stream_thread);
    });
  }
  void operator()(const ProcessBegan& e) {
    Each<&Checker::OnProcessBegin>([&](Checker& c) { c.OnProcessBegin(e.stream_thread); });
  }
  void operator()(const TopologyPaused& e) {
    Each<&Checker::OnTopologyPause>([&](Checker& c) {
      c.OnTopologyPause(e.topology, e.paused, e.threads);
    });
  }
  void operator()(const TaskPaused& e) {
    Each<&Checker::OnTaskPaused>([&](Checker& c) { c.OnTaskPaused(e.thread, e.who, e.paused); });
  }
  void operator()(const RuntimeStateChanged& e) {
    Each<&Checker::OnRuntimeState>([&](Checker& c) {
      c.OnRuntimeState(e.instance, e.from, e.to, e.threads);
    });
  }
  void operator()(const ClientOwned& e) {
    Each<&Checker::OnClientOwner>([&](Checker& c) { c.OnClientOwner(e.client_id, e.thread); });
    o.ledger_.OnClientOwner(e.client_id, e.thread);
  }
  void operator()(const TransportCalled& e) {
    Each<&Checker::OnTransportCall>([&](Checker& c) { c.OnTransportCall(e.client_id, e.call); });
  }
  void operator()(const ClientConnected& e) {
    Each<&Checker::OnClientConnection>([&](Checker& c) {
      c.OnClientConnection(e.instance, e.base_id, e.wire_id, e.open);
    });
    o.ledger_.OnClientConnection(e.instance, e.base_id, e.wire_id, e.open);
  }
  void operator()(const CheckpointNoticed& e) {
    Each<&Checker::OnCheckpointNotice>([&](Checker& c) {
      c.OnCheckpointNotice(e.instance, e.notice);
    });
    o.ledger_.OnCheckpointNotice(e.instance, e.notice);
  }
  void operator()(const EndOffsetRefreshed& e) {
    Each<&Checker::OnEndOffsetRefreshed>([&](Checker& c) {
      c.OnEndOffsetRefreshed(e.reader, e.changelog, e.end_offset);
    });
  }
  void operator()(const Registered& e) {
    Each<&Checker::OnRegistered>([&](Checker& c) {
      c.OnRegistered(e.reader, e.changelog, e.owner, e.type);
    });
    o.ledger_.OnRegistered(e);
  }
  void operator()(const Unregistered& e) {
    Each<&Checker::OnUnregistered>([&](Checker& c) {
      c.OnUnregistered(e.reader, e.changelog, e.owner);
    });
    o.ledger_.OnUnregistered(e.reader, e.changelog, e.owner);
  }
  void operator()(const BatchRestored& e) {
    Each<&Checker::OnRestoredBatch>([&](Checker& c) {
      c.OnRestoredBatch(e.reader, e.changelog, e.owner, e.type, e.next_offset, e.records);
    });
    if (e.state.has_value()) {
      Each<&Checker::OnRestoredBatchState>([&](Checker& c) {
        c.OnRestoredBatchState(e.reader, e.changelog, e.owner, e.next_offset, e.log_start,
                               e.exactly_once, *e.state);
      });
    }
    o.ledger_.OnRestoredBatch(e);
  }
  void operator()(const Completed& e) {
    Each<&Checker::OnCompleted>([&](Checker& c) {
      c.OnCompleted(e.reader, e.changelog, e.owner, e.position, e.end_offset);
    });
    o.ledger_.OnCompleted(e);
  }
  void operator()(const ListenerCalled& e) {
    Each<&Checker::OnListener>([&](Checker& c) { c.OnListener(e.reader, e.changelog, e.call); });
    o.ledger_.OnListener(e.reader, e.changelog, e.call);
  }
  void operator()(const ReaderDestroyed& e) {
    Each<&Checker::OnReaderDestroyed>([&](Checker& c) { c.OnReaderDestroyed(e.reader); });
    o.ledger_.OnReaderDestroyed(e.reader);
  }
  void operator()(const ReaderModeChanged& e) {
    Each<&Checker::OnReaderMode>([&](Checker& c) { c.OnReaderMode(e.reader, e.mode); });
  }
  void operator()(const StoresRegistered& e) {
    Each<&Checker::OnStoresRegistered>([&](Checker& c) { c.OnStoresRegistered(e.state); });
    o.ledger_.OnStoresRegistered(e.state);
  }
  void operator()(const StoresReleased& e) {
    Each<&Checker::OnStoresReleased>([&](Checker& c) { c.OnStoresReleased(e.state); });
    o.ledger_.OnStoresReleased(e.state);
  }
  void operator()(const StoresClosing& e) {
    Each<&Checker::OnStoresClosing>([&](Checker& c) { c.OnStoresClosing(e.state, e.clean); });
    o.ledger_.OnStoresClosing(e.state, e.clean);
  }
  void operator()(const Advanced& e) {
    Each<&Checker::OnAdvance>([&](Checker& c) {
      c.OnAdvance(e.state, e.changelog, e.next_offset);
    });
    o.ledger_.OnAdvance(e.state, e.changelog, e.next_offset);
  }
  void operator()(const Flushed& e) {
    Each<&Checker::OnFlushed>([&](Checker& c) { c.OnFlushed(e.state); });
    o.ledger_.OnFlushed(e.state);
  }
  void operator()(const CheckpointWritten& e) {
    Each<&Checker::OnCheckpointWritten>([&](Checker& c) {
      c.OnCheckpointWritten(e.state, e.offsets);
    });
    o.ledger_.OnCheckpointWritten(e.state, e.offsets);
  }
  void operator()(const CheckpointResult& e) {
    Each<&Checker::OnCheckpointResult>([&](Checker& c) {
      c.OnCheckpointResult(e.state, e.written);
    });
    o.ledger_.OnCheckpointResult(e.state, e.written);
  }
  void operator()(const Wiped& e) {
    Each<&Checker::OnWiped>([&](Checker& c) { c.OnWiped(e.state); });
    o.ledger_.OnWiped(e.state);
  }
  void operator()(const CheckpointDeleted& e) {
    Each<&Checker::OnCheckpointDeleted>([&](Checker& c) { c.OnCheckpointDeleted(e.state); });
    o.ledger_.OnCheckpointDeleted(e.state);
  }
  void operator()(const StoreWipedOnOpen& e) {
    Each<&Checker::OnStoreWipedOnOpen>([&](Checker& c) {
      c.OnStoreWipedOnOpen(e.state, e.changelog);
    });
    o.ledger_.OnStoreWipedOnOpen(e.state, e.changelog);
  }
  void operator()(const CheckpointClaimDropped& e) {
    Each<&Checker::OnCheckpointClaimDropped>([&](Checker& c) {
      c.OnCheckpointClaimDropped(e.state, e.changelog, e.claimed);
    });
  }
  // Handled by Oracle::OnEvent before the visit.
  void operator()(const Appended&) {}
  void operator()(const Aborted&) {}
  void operator()(const FsCrashed&) {}
  void operator()(const RunFinished&) {}
  void operator()(const ClientClosed& e) {
    Each([&](Checker& c) {
      c.OnClientClose(e.instance, e.returned, e.timeout_ns, e.code, e.state);
    });
  }
  void operator()(const ClientCloseCalled& e) {
    Each<&Checker::OnClientCloseCalled>([&](Checker& c) {
      c.OnClientCloseCalled(e.instance, e.timeout_ns);
    });
  }
  void operator()(const ThreadReplacing& e) {
    Each<&Checker::OnThreadReplacement>([&](Checker& c) {
      c.OnThreadReplacement(e.instance, e.thread, e.done);
    });
  }
  void operator()(const CheckpointDecided& e) {
    Each<&Checker::OnCheckpointDecision>([&](Checker& c) { c.OnCheckpointDecision(e); });
  }
  void operator()(const OffsetSumsReported& e) {
    Each<&Checker::OnOffsetSumsReported>([&](Checker& c) {
      c.OnOffsetSumsReported(e.stream_thread, e.sums);
    });
  }
  void operator()(const StandbyProgressPublished& e) {
    Each<&Checker::OnStandbyProgressPublished>([&](Checker& c) {
      c.OnStandbyProgressPublished(e.restore_thread, e.records);
    });
  }
};

void Oracle::JudgeBody(const EventBody& body) {
  Judge judge{*this};
  judge.Each<&Checker::BeforeEvent>([](Checker& c) { c.BeforeEvent(); });
  std::visit(judge, body);
}

}  // namespace restoresim::properties
