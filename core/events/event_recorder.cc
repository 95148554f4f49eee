#include "core/events/event_recorder.h"

#include <utility>

#include "core/events/recorder_lock.h"
#include "core/runtime/task.h"
#include "core/sync/thread.h"

namespace restoresim::events {
namespace {


}  // namespace

const StoreSnapshot* StateInfo::StoreFor(const TopicPartition& changelog) const {
  for (const StoreSnapshot& s : stores) {
    if (s.changelog == changelog) return &s;
  }
  return nullptr;
}

const StoreSnapshot* StateInfo::Store(std::string_view name) const {
  for (const StoreSnapshot& s : stores) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

std::string_view EventKindName(const EventBody& body) {
  return std::visit([](const auto& e) { return std::decay_t<decltype(e)>::kName; }, body);
}

EventRecorder::EventRecorder(EventSink& sink, RecorderOptions options)
    : sink_(sink), options_(std::move(options)) {}

TaskInfo EventRecorder::Snapshot(const Task& task) {
  const StateManager& sm = task.state_manager();
  return TaskInfo{.who = task.incarnation(),
                  .task_dir = sm.task_dir(),
                  .type = task.effective_type(),
                  .changelogs = sm.ChangelogPartitions(),
                  .state_id = reinterpret_cast<uintptr_t>(&sm),
                  .exactly_once = sm.exactly_once()};
}

// Reading a store is a read of memory (LogStore) or of the database (RocksDB): no scheduling
// point, no file-system fault drawn.
StateInfo EventRecorder::Snapshot(const StateManager& state, bool full) const {
  StateInfo info{.state_id = reinterpret_cast<uintptr_t>(&state), .task_dir = state.task_dir()};
  if (!full) return info;
  info.flushed = state.flushed_offsets();
  info.pending = state.pending_offsets();
  if (!options_.read_stores) return info;
  info.stores_read = true;
  state.ForEachStore([&](const std::string& name, KeyValueStore& store,
                         const TopicPartition& changelog) {
    StoreSnapshot& snap = info.stores.emplace_back(
        StoreSnapshot{.name = name, .changelog = changelog, .entries = store.NumEntries()});
    absl::StatusOr<std::map<std::string, std::string>> all = store.ReadAll();  // reading only
    snap.readable = all.ok();
    if (all.ok()) snap.data = std::move(*all);
  });
  return info;
}

int64_t EventRecorder::LogStart(const TopicPartition& tp) const {
  return options_.log_start ? options_.log_start(tp) : -1;
}

void EventRecorder::Stamp(EventHeader& header) {
  const std::string_view thread = CurrentThreadName();
  if (last_seq_ == nullptr || thread.data() != last_thread_view_.data() ||
      thread != last_thread_.view()) {
    last_thread_view_ = thread;
    last_thread_ = Name(thread);
    last_seq_ = &seq_[last_thread_.id()];
  }
  header.thread = last_thread_;
  header.seq = ++*last_seq_;
  if (SimHooks* sim = CurrentSim()) {
    header.clock_ns = sim->NowNs();
  } else if (options_.clock != nullptr) {
    header.clock_ns = options_.clock->NowNs();
  }
}

// ---- the world ----

void EventRecorder::OnAppend(const TopicPartition& tp, const ConsumerRecord& record) {
  // Only changelogs: the store checks fold their history; input topics need none.
  if (!std::string_view(tp.topic).ends_with("-changelog")) return;
  RecorderLock lock(mu_);
  Emit(Appended{.tp = tp, .offset = record.offset, .key = record.key, .value = record.value});
}

void EventRecorder::OnAbort(const TopicPartition& tp, int64_t first, int64_t end) {
  if (!std::string_view(tp.topic).ends_with("-changelog")) return;
  RecorderLock lock(mu_);
  Emit(Aborted{.tp = tp, .first = first, .end = end});
}

void EventRecorder::OnCrash() {
  RecorderLock lock(mu_);
  Emit(FsCrashed{});
}

void EventRecorder::OnRunFinished() {
  RecorderLock lock(mu_);
  Emit(RunFinished{});
}

// ---- tasks ----

void EventRecorder::OnTaskOpened(const Task& task) {
  RecorderLock lock(mu_);
  open_.emplace(task.incarnation(), &task.state_manager());
  Emit(TaskOpened{.task = Snapshot(task)});
}

void EventRecorder::OnTaskTransition(const Task& task, TaskState from, TaskState to) {
  RecorderLock lock(mu_);
  if (to == TaskState::kClosed) open_.erase(task.incarnation());
  Emit(TaskTransitioned{.task = Snapshot(task), .from = from, .to = to});
}

void EventRecorder::OnTaskDestroyed(const TaskIncarnation& who, TaskState state) {
  RecorderLock lock(mu_);
  open_.erase(who);
  Emit(TaskDestroyed{.who = who, .state = state});
}

void EventRecorder::OnProcess(const Task& task, size_t records) {
  RecorderLock lock(mu_);
  Emit(Processed{.task = Snapshot(task), .records = records});
}

// ---- the restore thread's boundary ----

void EventRecorder::OnHandOff(std::string_view restore_thread, const TaskIncarnation& who,
                              TaskHolder from, TaskHolder to) {
  RecorderLock lock(mu_);
  Emit(HandedOff{.restore_thread = Name(restore_thread), .who = who, .from = from, .to = to});
}

void EventRecorder::OnCloseApplied(std::string_view restore_thread, const TaskIncarnation& who) {
  RecorderLock lock(mu_);
  Emit(CloseApplied{.restore_thread = Name(restore_thread), .who = who});
}

void EventRecorder::OnTypeConversion(const StateManager& state, TaskType from, TaskType to) {
  RecorderLock lock(mu_);
  Emit(TypeConverted{.state = Snapshot(state, false), .from = from, .to = to});
}

void EventRecorder::OnRestoreEvent(std::string_view restore_thread, const RestoreEvent& event,
                                   bool drained) {
  RecorderLock lock(mu_);
  RestoreEventInfo info{.kind = event.kind,
                        .incarnation = event.incarnation,
                        .corrupted_changelogs = event.corrupted_changelogs,
                        .error = event.error};
  if (event.task != nullptr) {
    info.task = Snapshot(*event.task);
    // A restored task reaching its stream thread: its stores are compared with the history.
    if (drained && event.kind == RestoreEvent::Kind::kRestored) {
      info.state = Snapshot(event.task->state_manager(), true);
    }
  }
  Emit(RestoreEventMoved{
      .restore_thread = Name(restore_thread), .event = std::move(info), .drained = drained});
}

void EventRecorder::OnCorruptionHandled(const TaskIncarnation& reported, const Task* acted_on) {
  RecorderLock lock(mu_);
  CorruptionHandled e{.reported = reported};
  if (acted_on != nullptr) e.acted_on = acted_on->incarnation();
  Emit(std::move(e));
}

void EventRecorder::OnRoundQueued(std::string_view restore_thread, size_t items) {
  RecorderLock lock(mu_);
  Emit(RoundQueued{.restore_thread = Name(restore_thread), .items = items});
}

void EventRecorder::OnRestoreLoop(std::string_view restore_thread) {
  RecorderLock lock(mu_);
  Emit(RestoreLoopBegan{.restore_thread = Name(restore_thread)});
}

void EventRecorder::OnRestoreIdle(std::string_view restore_thread, bool begin, bool woken) {
  RecorderLock lock(mu_);
  Emit(RestoreIdled{.restore_thread = Name(restore_thread), .begin = begin, .woken = woken});
}

void EventRecorder::OnRoundsDrained(std::string_view restore_thread, size_t rounds) {
  RecorderLock lock(mu_);
  Emit(RoundsDrained{.restore_thread = Name(restore_thread), .rounds = rounds});
}

void EventRecorder::OnRestoreShutdownRequested(std::string_view restore_thread) {
  RecorderLock lock(mu_);
  Emit(RestoreShutdownRequested{.restore_thread = Name(restore_thread)});
}

void EventRecorder::OnRestoreStopped(std::string_view restore_thread) {
  RecorderLock lock(mu_);
  Emit(RestoreStopped{.restore_thread = Name(restore_thread)});
}

// ---- the stream thread ----

void EventRecorder::OnAssignment(std::string_view stream_thread, const std::set<TaskId>& active,
                                 const std::set<TaskId>& standby, bool revocation) {
  RecorderLock lock(mu_);
  Emit(AssignmentChanged{.stream_thread = Name(stream_thread), .active = active,
                         .standby = standby, .revocation = revocation});
}

void EventRecorder::OnDecision(std::string_view stream_thread, const TaskIncarnation& who,
                               TaskDecision decision, TaskType type) {
  RecorderLock lock(mu_);
  Emit(DecisionTaken{
      .stream_thread = Name(stream_thread), .who = who, .decision = decision, .type = type});
}

void EventRecorder::OnTaskFailed(std::string_view stream_thread, const TaskIncarnation& who,
                                 const absl::Status& error) {
  RecorderLock lock(mu_);
  Emit(TaskFailed{.stream_thread = Name(stream_thread), .who = who, .error = error});
}

void EventRecorder::OnTaskManagerView(std::string_view stream_thread,
                                      const std::vector<TaskView>& tasks) {
  RecorderLock lock(mu_);
  Emit(TaskManagerViewed{.stream_thread = Name(stream_thread), .tasks = tasks});
}

void EventRecorder::OnStreamLoop(std::string_view stream_thread,
                                 std::string_view restore_thread) {
  RecorderLock lock(mu_);
  Emit(StreamLoopBegan{
      .stream_thread = Name(stream_thread), .restore_thread = Name(restore_thread)});
}

void EventRecorder::OnStreamThreadState(std::string_view stream_thread, StreamThreadState from,
                                        StreamThreadState to) {
  RecorderLock lock(mu_);
  Emit(StreamThreadStateChanged{.stream_thread = Name(stream_thread), .from = from, .to = to});
}

void EventRecorder::OnProcessingStopped(std::string_view stream_thread) {
  RecorderLock lock(mu_);
  Emit(ProcessingStopped{.stream_thread = Name(stream_thread)});
}

void EventRecorder::OnProcessBegin(std::string_view stream_thread) {
  RecorderLock lock(mu_);
  Emit(ProcessBegan{.stream_thread = Name(stream_thread)});
}

void EventRecorder::OnTopologyPause(std::string_view topology, bool paused,
                                    const std::vector<std::string>& threads) {
  RecorderLock lock(mu_);
  Emit(TopologyPaused{.topology = Name(topology), .paused = paused, .threads = threads});
}

void EventRecorder::OnTaskPaused(std::string_view thread, const TaskIncarnation& who,
                                 bool paused) {
  RecorderLock lock(mu_);
  Emit(TaskPaused{.thread = Name(thread), .who = who, .paused = paused});
}

void EventRecorder::OnRuntimeState(std::string_view instance, RuntimeState from,
                                   RuntimeState to, const std::vector<std::string>& threads) {
  RecorderLock lock(mu_);
  Emit(RuntimeStateChanged{
      .instance = Name(instance), .from = from, .to = to, .threads = threads});
}

void EventRecorder::OnClientClose(std::string_view instance, bool returned, TimeNs timeout_ns,
                                  int64_t code, RuntimeState state) {
  RecorderLock lock(mu_);
  Emit(ClientClosed{.instance = Name(instance), .returned = returned, .timeout_ns = timeout_ns,
                    .code = code, .state = state});
}

void EventRecorder::OnClientCloseCalled(std::string_view instance, TimeNs timeout_ns) {
  RecorderLock lock(mu_);
  Emit(ClientCloseCalled{.instance = Name(instance), .timeout_ns = timeout_ns});
}

void EventRecorder::OnThreadReplacement(std::string_view instance, std::string_view thread,
                                        bool done) {
  RecorderLock lock(mu_);
  Emit(ThreadReplacing{.instance = Name(instance), .thread = Name(thread), .done = done});
}

void EventRecorder::OnStandbyProgressPublished(std::string_view restore_thread,
                                               int64_t records) {
  RecorderLock lock(mu_);
  Emit(StandbyProgressPublished{.restore_thread = Name(restore_thread), .records = records});
}

void EventRecorder::OnOffsetSumsReported(std::string_view stream_thread,
                                         const std::map<TaskId, int64_t>& sums) {
  RecorderLock lock(mu_);
  Emit(OffsetSumsReported{.stream_thread = Name(stream_thread), .sums = sums});
}

// ---- transport clients, checkpoint/restore ----

void EventRecorder::OnClientOwner(std::string_view client_id, std::string_view thread) {
  RecorderLock lock(mu_);
  Emit(ClientOwned{.client_id = Name(client_id), .thread = Name(thread)});
}

void EventRecorder::OnTransportCall(std::string_view client_id, std::string_view call) {
  RecorderLock lock(mu_);
  Emit(TransportCalled{.client_id = Name(client_id), .call = Name(call)});
}

void EventRecorder::OnClientConnection(std::string_view instance, std::string_view base_id,
                                       std::string_view wire_id, bool open) {
  RecorderLock lock(mu_);
  Emit(ClientConnected{.instance = Name(instance),
                       .base_id = Name(base_id),
                       .wire_id = Name(wire_id),
                       .open = open});
}

void EventRecorder::OnCheckpointNotice(std::string_view instance, CheckpointNotice notice) {
  RecorderLock lock(mu_);
  Emit(CheckpointNoticed{.instance = Name(instance), .notice = notice});
}

void EventRecorder::OnEndOffsetRefreshed(std::string_view reader,
                                         const TopicPartition& changelog, int64_t end_offset) {
  RecorderLock lock(mu_);
  Emit(EndOffsetRefreshed{
      .reader = Name(reader), .changelog = changelog, .end_offset = end_offset});
}

}  // namespace restoresim::events
