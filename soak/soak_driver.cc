#include "soak/soak_driver.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "bench/local_broker.h"
#include "core/port/system_clock.h"
#include "core/runtime/count_topology.h"
#include "core/transport/rdkafka/rdkafka_transport.h"
#include "core/util/check.h"
#include "soak/soak_audit.h"
#include "soak/soak_instance.h"
#include "soak/soak_process.h"
#include "soak/soak_producer.h"

namespace restoresim::soak {
namespace {

constexpr TimeNs kTickNs = 200 * kMillisecond;
constexpr TimeNs kCloseWaitNs = 90 * kSecond;
constexpr TimeNs kDrainNs = 5 * 60 * kSecond;  // the whole input committed after the faults
constexpr int kNoTarget = -1;

std::string Minutes(TimeNs ns) {
  const int64_t s = ns / kSecond;
  return fmt::format("{}m{:02}s", s / 60, s % 60);
}

std::string Thousands(int64_t n) {
  std::string digits = std::to_string(n < 0 ? -n : n);
  for (int i = static_cast<int>(digits.size()) - 3; i > 0; i -= 3) digits.insert(i, ",");
  return (n < 0 ? "-" : "") + digits;
}

// One instance: its state directory and its incarnations (a process each).
struct Slot {
  int32_t index = 0;
  std::string state_dir;
  int incarnation = 0;
  std::optional<InstanceProcess> process;
  nlohmann::json status;  // the current incarnation's last status
  bool temporary = false;  // added by instance-add, closed at its recovery
  // Summed over ended incarnations.
  int64_t events = 0, processed = 0, restorations = 0;
  std::string Name() const { return fmt::format("i{}", index); }
  std::string EventsPath(const std::string& dir) const {
    return fmt::format("{}/{}.{}.events", dir, Name(), incarnation);
  }
};

int64_t StatusInt(const nlohmann::json& status, const char* key) {
  auto it = status.find(key);
  return it != status.end() && it->is_number_integer() ? it->get<int64_t>() : 0;
}

std::string StatusText(const nlohmann::json& status, const char* key) {
  auto it = status.find(key);
  return it != status.end() && it->is_string() ? it->get<std::string>() : "";
}

struct Totals {
  int64_t faults = 0;
  int64_t instance_restarts = 0;
  int64_t broker_restarts = 0;
  int64_t audits = 0;
  int64_t stores_audited = 0;
  int64_t to_running_ms_max = 0;
};

}  // namespace

namespace {

class Soak {
 public:
  Soak(const SoakOptions& o, std::FILE* out) : o_(o), out_(out), clock_(*SystemClock::Default()) {}
  ~Soak() { RestoreStderr(); }
  Soak(const Soak&) = delete;
  Soak& operator=(const Soak&) = delete;

  int Run() {
    if (absl::Status s = SetUp(); !s.ok()) return SetUpFailed(s);
    PrintHeader();
    for (int32_t i = 0; i < o_.instances; ++i) {
      slots_.push_back(std::make_unique<Slot>(Slot{.index = i, .state_dir = StateDir(i)}));
      if (absl::Status s = Launch(*slots_.back()); !s.ok()) return SetUpFailed(s);
    }
    producer_->Start();
    start_ns_ = clock_.NowNs();
    TimeNs next_progress = start_ns_ + o_.progress_every_ns;
    while (Elapsed() < o_.duration_ns) {
      clock_.SleepFor(kTickNs);
      ReadStatuses();
      if (std::optional<std::string> found = CheckSlots(); found.has_value()) {
        return Found(*found);
      }
      if (std::optional<int> done = StepFaults(); done.has_value()) return *done;
      if (clock_.NowNs() >= next_progress) {
        PrintProgress();
        next_progress = clock_.NowNs() + o_.progress_every_ns;
      }
    }
    return Finish();
  }

 private:
  TimeNs Elapsed() const { return clock_.NowNs() - start_ns_; }
  std::string StateDir(int32_t i) const { return fmt::format("{}/state-i{}", o_.dir, i); }

  // librdkafka's own log lines (a broker down, a coordinator moving) go to driver.log, not
  // between the progress lines; the soak's messages keep the original stderr.
  void RedirectStderr() {
    const int log = open((o_.dir + "/driver.log").c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (log < 0) return;
    saved_stderr_ = dup(STDERR_FILENO);
    dup2(log, STDERR_FILENO);
    close(log);
    messages_ = fdopen(dup(saved_stderr_), "w");
  }

  void RestoreStderr() {
    if (saved_stderr_ < 0) return;
    std::fflush(stderr);
    dup2(saved_stderr_, STDERR_FILENO);
    close(saved_stderr_);
    saved_stderr_ = -1;
    if (messages_ != nullptr) std::fclose(messages_);
    messages_ = nullptr;
  }

  absl::Status SetUp() {
    std::filesystem::create_directories(o_.dir);
    RedirectStderr();
    if (absl::Status s = SetUpCluster(); !s.ok()) return s;
    transport_ = std::make_unique<rdkafka::RdKafkaTransport>(
        rdkafka::RdKafkaOptions{.bootstrap_servers = bootstrap_}, clock_);
    reader_ = std::make_unique<KafkaReader>(*transport_, clock_);
    const int64_t now_s = std::chrono::duration_cast<std::chrono::seconds>(
        std::chrono::system_clock::now().time_since_epoch()).count();
    app_.app_id = fmt::format("soak-s{}-{}-{}", o_.seed, getpid(), now_s);
    app_.input = app_.app_id + "-input";
    app_.changelog = ChangelogTopic(app_.app_id, kCountsStoreName);
    app_.partitions = o_.partitions;
    for (const std::string& topic : {app_.input, app_.changelog}) {
      if (absl::Status s = reader_->admin().CreateTopic(topic, o_.partitions); !s.ok()) return s;
    }
    producer_ = std::make_unique<InputProducer>(*transport_, clock_, app_.input, o_.partitions,
                                                o_.keys, o_.rate);
    ScheduleParams params{.seed = o_.seed, .duration_ns = o_.duration_ns, .kinds = o_.faults,
                          .brokers = static_cast<uint32_t>(cluster_ ? cluster_->brokers() : 1),
                          .instances = static_cast<uint32_t>(o_.instances),
                          .partitions = static_cast<uint32_t>(o_.partitions)};
    schedule_ = DrawSchedule(params);
    std::ofstream(o_.dir + "/schedule.txt") << RerunLine(o_) << "\n" << ScheduleText(schedule_);
    return absl::OkStatus();
  }

  absl::Status SetUpCluster() {
    const bool broker_faults = std::any_of(o_.faults.begin(), o_.faults.end(), NeedsBrokerControl);
    if (!o_.bootstrap.empty()) {
      if (broker_faults) {
        return absl::InvalidArgumentError(
            "broker faults need a cluster the soak controls: --cluster NAME (a running "
            "tools/kafka/broker cluster) or neither option (the soak starts one)");
      }
      bootstrap_ = o_.bootstrap;
      return absl::OkStatus();
    }
    absl::StatusOr<std::unique_ptr<bench::LocalBroker>> cluster =
        o_.cluster.empty() ? bench::LocalBroker::Start(o_.dir + "/cluster.log", o_.brokers, "soak")
                           : bench::LocalBroker::Attach(o_.cluster, o_.dir + "/cluster.log");
    if (!cluster.ok()) return cluster.status();
    cluster_ = std::move(*cluster);
    bootstrap_ = cluster_->bootstrap();
    return absl::OkStatus();
  }

  int SetUpFailed(const absl::Status& s) {
    RestoreStderr();
    std::fprintf(stderr, "%s",
                 fmt::format("restoresim soak: {}\n", std::string(s.message())).c_str());
    return kSoakExitUsage;
  }

  void PrintHeader() {
    Print(fmt::format(
        "soak {}: {} instances x {} threads, {} partitions, {} records/s over {} keys, {}, {} "
        "group, {}\n"
        "cluster {} ({}); files in {}\nfault schedule (seed {}, faults {}):\n{}",
        app_.app_id, o_.instances, o_.threads, o_.partitions, o_.rate, o_.keys, o_.guarantee,
        o_.group_protocol, Minutes(o_.duration_ns), bootstrap_,
        cluster_ ? fmt::format("{} nodes", cluster_->brokers()) : "given: no broker faults",
        o_.dir, o_.seed, FaultKindsText(o_.faults), ScheduleText(schedule_)));
    if (!o_.mutation.empty()) Print(fmt::format("planted mutation: {}\n", o_.mutation));
  }

  // Progress and findings: to `out`, or to stderr when `out` carries the JSON report.
  void Print(const std::string& text) {
    std::FILE* to = !o_.json ? out_ : messages_ != nullptr ? messages_ : stderr;
    std::fputs(text.c_str(), to);
    std::fflush(to);
  }

  // ---- instances ----

  std::string StatusPath(const Slot& slot) const {
    return fmt::format("{}/{}.status", o_.dir, slot.Name());
  }

  absl::Status Launch(Slot& slot) {
    RS_CHECK(!slot.process.has_value(), "{} launched while alive", slot.Name());
    ++slot.incarnation;
    slot.status = nlohmann::json::object();
    std::filesystem::remove(StatusPath(slot));
    std::vector<std::string> args = {
        "soak-instance", "--bootstrap-servers", bootstrap_, "--app", app_.app_id,
        "--input", app_.input, "--state-dir", slot.state_dir, "--events", slot.EventsPath(o_.dir),
        "--status", StatusPath(slot), "--guarantee", o_.guarantee,
        "--group-protocol", o_.group_protocol,
        "--threads", std::to_string(o_.threads), "--index", std::to_string(slot.index)};
    if (!o_.mutation.empty()) args.insert(args.end(), {"--mutation", o_.mutation});
    absl::StatusOr<InstanceProcess> process = InstanceProcess::Spawn(
        o_.exe, args, fmt::format("{}/{}.{}.log", o_.dir, slot.Name(), slot.incarnation));
    if (!process.ok()) return process.status();
    slot.process.emplace(std::move(*process));
    return absl::OkStatus();
  }

  void ReadStatus(Slot& slot) {
    std::ifstream in(StatusPath(slot));
    if (!in) return;
    nlohmann::json status = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (status.is_object()) slot.status = std::move(status);
  }

  void ReadStatuses() {
    for (auto& slot : slots_) {
      if (slot->process.has_value()) ReadStatus(*slot);
    }
  }

  // The incarnation ended: its last status joins the slot's sums.
  void EndIncarnation(Slot& slot) {
    RS_CHECK(slot.process.has_value() && slot.process->Poll().has_value(),
             "{}: ending an incarnation that runs", slot.Name());
    ReadStatus(slot);
    slot.events += StatusInt(slot.status, "events");
    slot.processed += StatusInt(slot.status, "records_processed");
    slot.restorations += StatusInt(slot.status, "restores_ended");
    totals_.to_running_ms_max =
        std::max(totals_.to_running_ms_max, StatusInt(slot.status, "to_running_ms_max"));
    slot.process.reset();
  }

  // What an instance's exit code says, when it is not a clean close.
  std::string ExitFinding(Slot& slot, int code) {
    const std::string failure = StatusText(slot.status, "failure");
    const std::string events = slot.EventsPath(o_.dir);
    switch (code) {
      case kInstanceExitViolation:
        return fmt::format("{}: invariant violated: {}\n  events: {}", slot.Name(), failure,
                           events);
      case kInstanceExitRuntimeFailed:
        return fmt::format("{}: the runtime failed: {}\n  events: {}", slot.Name(), failure,
                           events);
      default:
        return fmt::format("{}: exited with {} (see {}/{}.{}.log)", slot.Name(), code, o_.dir,
                           slot.Name(), slot.incarnation);
    }
  }

  std::optional<std::string> CheckSlots() {
    for (auto& slot : slots_) {
      if (!slot->process.has_value()) continue;
      const std::optional<int> code = slot->process->Poll();
      if (!code.has_value()) continue;
      ReadStatus(*slot);
      const std::string finding = ExitFinding(*slot, *code);
      last_events_ = slot->EventsPath(o_.dir);
      EndIncarnation(*slot);
      return finding;
    }
    return std::nullopt;
  }

  // SIGTERM and wait: a clean close that must end with exit 0.
  std::optional<std::string> CloseSlot(Slot& slot) {
    RS_CHECK(slot.process.has_value(), "{}: closing an instance that is down", slot.Name());
    slot.process->Signal(SIGTERM);
    const std::optional<int> code = slot.process->WaitExit(clock_, kCloseWaitNs);
    if (!code.has_value()) {
      last_events_ = slot.EventsPath(o_.dir);
      return fmt::format("{}: a clean close did not end within {}", slot.Name(),
                         Minutes(kCloseWaitNs));
    }
    ReadStatus(slot);
    std::optional<std::string> finding;
    if (*code != kInstanceExitOk) {
      finding = ExitFinding(slot, *code);
      last_events_ = slot.EventsPath(o_.dir);
    }
    EndIncarnation(slot);
    return finding;
  }

  void KillSlot(Slot& slot) {
    RS_CHECK(slot.process.has_value(), "{}: killing an instance that is down", slot.Name());
    slot.process->Signal(SIGKILL);
    slot.process->WaitExit(clock_, kCloseWaitNs);
    EndIncarnation(slot);
  }

  // Every store in the slot's state directory against its changelog (soak_audit.h).
  std::optional<std::string> AuditDir(const Slot& slot, std::string_view when) {
    ChangelogCache cache;
    const StoreAudit audit = AuditStateDir(*reader_, app_, slot.state_dir, cache);
    ++totals_.audits;
    totals_.stores_audited += audit.stores;
    if (audit.problems.empty()) return std::nullopt;
    std::string text = fmt::format("{}: state directory {} {}:", slot.Name(), slot.state_dir, when);
    for (const std::string& p : audit.problems) text += "\n  " + p;
    return text;
  }

  // ---- faults ----

  // Recovers the fault whose hold ran out, begins the next one due. A finding, or a fault the
  // soak could not inject, ends the soak (the exit code returned).
  std::optional<int> StepFaults() {
    if (active_.has_value() && Elapsed() >= active_->at_ns + active_->hold_ns) {
      const Fault done = *active_;
      active_.reset();
      if (std::optional<int> end = Act(done, /*begin=*/false); end.has_value()) return end;
    }
    if (!active_.has_value() && next_fault_ < schedule_.size() &&
        Elapsed() >= schedule_[next_fault_].at_ns) {
      active_ = schedule_[next_fault_++];
      ++totals_.faults;
      ++fault_counts_[active_->kind];
      Print(fmt::format("[soak {}] fault {}/{}: {}\n", Minutes(Elapsed()), next_fault_,
                        schedule_.size(), active_->ToString()));
      return Act(*active_, /*begin=*/true);
    }
    return std::nullopt;
  }

  Slot& Target(const Fault& f) {
    RS_CHECK(f.target < static_cast<uint32_t>(o_.instances), "instance target {} of {}",
             f.target, o_.instances);
    return *slots_[f.target];
  }

  std::optional<int> Act(const Fault& f, bool begin) {
    absl::StatusOr<std::optional<std::string>> result =
        NeedsBrokerControl(f.kind) ? ActOnBroker(f, begin) : ActOnInstance(f, begin);
    if (!result.ok()) {
      Print(fmt::format("restoresim soak: could not inject {}: {}\n", FaultName(f.kind),
                        std::string(result.status().message())));
      StopEverything();
      return kSoakExitUsage;
    }
    if (result->has_value()) return Found(**result);
    return std::nullopt;
  }

  absl::StatusOr<std::optional<std::string>> ActOnBroker(const Fault& f, bool begin) {
    RS_CHECK(cluster_ != nullptr, "a broker fault without a cluster of the soak's");
    if (!begin) {
      ++totals_.broker_restarts;
      if (absl::Status s = cluster_->StartNode(killed_node_); !s.ok()) return s;
      return std::nullopt;
    }
    killed_node_ = static_cast<int>(f.target);
    if (f.kind == FaultKind::kLeaderKill) {
      absl::StatusOr<int32_t> leader =
          KafkaReader::Leader(bootstrap_, app_.Changelog(static_cast<int32_t>(f.target)));
      if (!leader.ok()) return leader.status();
      killed_node_ = *leader;
      Print(fmt::format("  leader of {} is node {}\n",
                        app_.Changelog(static_cast<int32_t>(f.target)).ToString(), *leader));
    }
    if (absl::Status s = cluster_->StopNode(killed_node_, /*kill=*/true); !s.ok()) return s;
    return std::nullopt;
  }

  absl::StatusOr<std::optional<std::string>> ActOnInstance(const Fault& f, bool begin) {
    switch (f.kind) {
      case FaultKind::kInstanceKill:
      case FaultKind::kInstanceBounce:
        return begin ? TakeDown(Target(f), f.kind == FaultKind::kInstanceKill)
                     : BringUp(Target(f));
      case FaultKind::kInstanceAdd:
        return begin ? AddInstance() : RemoveAdded();
      case FaultKind::kCheckpointRestore:
        if (begin) Target(f).process->Signal(SIGUSR1);
        return std::nullopt;
      case FaultKind::kPause:
        Target(f).process->Signal(SIGUSR2);
        return std::nullopt;
      case FaultKind::kDiskFull:
        Target(f).process->Signal(SIGRTMIN);
        return std::nullopt;
      default:
        RS_CHECK(false, "fault {} is not an instance's", FaultName(f.kind));
    }
    return std::nullopt;
  }

  absl::StatusOr<std::optional<std::string>> TakeDown(Slot& slot, bool kill) {
    if (kill) {
      KillSlot(slot);
    } else if (std::optional<std::string> finding = CloseSlot(slot); finding.has_value()) {
      return finding;
    }
    return AuditDir(slot, kill ? "after a SIGKILL" : "after a clean close");
  }

  absl::StatusOr<std::optional<std::string>> BringUp(Slot& slot) {
    ++totals_.instance_restarts;
    if (absl::Status s = Launch(slot); !s.ok()) return s;
    return std::nullopt;
  }

  absl::StatusOr<std::optional<std::string>> AddInstance() {
    const int32_t index = static_cast<int32_t>(slots_.size());
    slots_.push_back(std::make_unique<Slot>(
        Slot{.index = index, .state_dir = StateDir(index), .temporary = true}));
    if (absl::Status s = Launch(*slots_.back()); !s.ok()) return s;
    return std::nullopt;
  }

  absl::StatusOr<std::optional<std::string>> RemoveAdded() {
    Slot& added = *slots_.back();
    RS_CHECK(added.temporary && added.process.has_value(), "no added instance to remove");
    if (std::optional<std::string> finding = CloseSlot(added); finding.has_value()) {
      return finding;
    }
    return AuditDir(added, "after its removal");
  }

  // ---- the end ----

  void StopEverything() {
    for (auto& slot : slots_) {
      if (slot->process.has_value()) KillSlot(*slot);
    }
    if (!producer_stopped_) {
      producer_->Stop(0);
      producer_stopped_ = true;
    }
  }

  int Found(const std::string& finding) {
    StopEverything();
    Print(fmt::format("\nsoak FAILED at {} (after {} faults):\n  {}\n", Minutes(Elapsed()),
                      totals_.faults, finding));
    if (!last_events_.empty()) {
      Print(fmt::format("judge the events again:  {} check {}\n", o_.exe, last_events_));
    }
    Print(fmt::format("fault schedule:          {}/schedule.txt\nre-run the same schedule: {}\n",
                      o_.dir, RerunLine(o_)));
    failure_ = finding;
    if (o_.json) EmitJson(false, std::nullopt);
    return kSoakExitFindings;
  }

  int64_t Sum(int64_t Slot::*field, const char* status_key) const {
    int64_t total = 0;
    for (const auto& slot : slots_) {
      total += (*slot).*field;
      if (slot->process.has_value()) total += StatusInt(slot->status, status_key);
    }
    return total;
  }

  int64_t WorstToRunningMs() const {
    int64_t worst = totals_.to_running_ms_max;
    for (const auto& slot : slots_) {
      if (slot->process.has_value()) {
        worst = std::max(worst, StatusInt(slot->status, "to_running_ms_max"));
      }
    }
    return worst;
  }

  void PrintProgress() {
    int up = 0;
    for (const auto& slot : slots_) up += slot->process.has_value() ? 1 : 0;
    Print(fmt::format(
        "[soak {}/{}] faults {}/{}{} · instances up {} · input {} · processed {} · "
        "restorations {} · worst to RUNNING {:.1f}s · events judged {}\n",
        Minutes(Elapsed()), Minutes(o_.duration_ns), totals_.faults, schedule_.size(),
        active_ ? fmt::format(" (now {})", FaultName(active_->kind)) : "", up,
        Thousands(producer_->sent()), Thousands(Sum(&Slot::processed, "records_processed")),
        Sum(&Slot::restorations, "restores_ended"),
        static_cast<double>(WorstToRunningMs()) / 1000.0,
        Thousands(Sum(&Slot::events, "events"))));
  }

  // Every input record committed by the group (the instances still running), or a finding.
  std::optional<std::string> Drain() {
    std::vector<TopicPartition> inputs;
    for (int32_t p = 0; p < app_.partitions; ++p) inputs.push_back(app_.Input(p));
    const TimeNs deadline = clock_.NowNs() + kDrainNs;
    std::string last = "nothing read";
    while (clock_.NowNs() < deadline) {
      if (std::optional<std::string> found = CheckSlots(); found.has_value()) return found;
      absl::StatusOr<std::map<TopicPartition, int64_t>> ends = reader_->EndOffsets(inputs);
      absl::StatusOr<std::map<TopicPartition, int64_t>> done =
          reader_->Committed(app_.app_id, inputs);
      if (ends.ok() && done.ok()) {
        int64_t end_sum = 0, done_sum = 0;
        for (const TopicPartition& tp : inputs) {
          end_sum += ends->at(tp);
          done_sum += done->contains(tp) ? done->at(tp) : 0;
        }
        if (done_sum == end_sum) return std::nullopt;
        last = fmt::format("committed {} of {} input records:", done_sum, end_sum);
        for (const TopicPartition& tp : inputs) {
          last += fmt::format(" {} {}/{}", tp.partition,
                              done->contains(tp) ? done->at(tp) : -1, ends->at(tp));
        }
      }
      clock_.SleepFor(1 * kSecond);
    }
    return fmt::format("the group did not commit the whole input within {} of the last fault "
                       "({})", Minutes(kDrainNs), last);
  }

  int Finish() {
    if (active_.has_value()) {
      const Fault done = *active_;
      active_.reset();
      if (std::optional<int> end = Act(done, /*begin=*/false); end.has_value()) return *end;
    }
    Print(fmt::format("[soak {}] faults over; the input stops; waiting for the group to commit "
                      "all of it\n", Minutes(Elapsed())));
    producer_->Stop(60 * kSecond);
    producer_stopped_ = true;
    if (std::optional<std::string> found = Drain(); found.has_value()) return Found(*found);
    for (auto& slot : slots_) {
      if (!slot->process.has_value()) continue;
      if (std::optional<std::string> found = CloseSlot(*slot); found.has_value()) {
        return Found(*found);
      }
    }
    for (auto& slot : slots_) {
      if (std::optional<std::string> found = AuditDir(*slot, "at the end"); found.has_value()) {
        return Found(*found);
      }
    }
    absl::StatusOr<CountsAudit> counts = AuditCounts(*reader_, app_);
    if (!counts.ok()) {
      return Found(fmt::format("reading the output: {}", counts.status().ToString()));
    }
    if (counts->lost > 0 || (o_.guarantee == "exactly_once_v2" && counts->duplicates > 0)) {
      std::string text = fmt::format("{} input records lost, {} counted twice ({}):",
                                     counts->lost, counts->duplicates, o_.guarantee);
      for (const std::string& p : counts->problems) text += "\n  " + p;
      return Found(text);
    }
    PrintSummary(*counts);
    if (o_.json) EmitJson(true, *counts);
    return kSoakExitOk;
  }

  std::string FaultsText() const {
    std::string text;
    for (const auto& [kind, n] : fault_counts_) {
      text += fmt::format("{}{} {}", text.empty() ? "" : ", ", FaultName(kind), n);
    }
    return text.empty() ? "none" : text;
  }

  void PrintSummary(const CountsAudit& counts) {
    int incarnations = 0;
    for (const auto& slot : slots_) incarnations += slot->incarnation;
    Print(fmt::format(
        "\nsoak passed: {} of faults, seed {}, {}\n"
        "  faults injected     {} ({})\n"
        "  input records       {} over {} keys, read back from the input topic{}\n"
        "  records processed   {} (lost 0; duplicates {})\n"
        "  restorations        {}\n"
        "  restarts survived   {} instance, {} broker\n"
        "  invariants          {} events judged online over {} instance runs; {} state-directory "
        "audits of {} stores, all sound\n"
        "  worst time to RUNNING  {:.1f}s\n",
        Minutes(o_.duration_ns), o_.seed, o_.guarantee, totals_.faults, FaultsText(),
        Thousands(counts.input_records), counts.keys,
        producer_->producers_replaced() == 0
            ? ""
            : fmt::format(" (input producer replaced {} times)", producer_->producers_replaced()),
        Thousands(Sum(&Slot::processed, "records_processed")), Thousands(counts.duplicates),
        Sum(&Slot::restorations, "restores_ended"), totals_.instance_restarts,
        totals_.broker_restarts, Thousands(Sum(&Slot::events, "events")), incarnations,
        totals_.audits, totals_.stores_audited,
        static_cast<double>(WorstToRunningMs()) / 1000.0));
  }

  void EmitJson(bool passed, const std::optional<CountsAudit>& counts) {
    nlohmann::json faults = nlohmann::json::object();
    for (const auto& [kind, n] : fault_counts_) faults[std::string(FaultName(kind))] = n;
    nlohmann::json report = {
        {"format", "restoresim-soak-report"}, {"version", 1}, {"passed", passed},
        {"app", app_.app_id}, {"seed", o_.seed}, {"guarantee", o_.guarantee},
        {"group_protocol", o_.group_protocol},
        {"duration_s", o_.duration_ns / kSecond}, {"elapsed_s", Elapsed() / kSecond},
        {"instances", o_.instances}, {"threads", o_.threads}, {"faults", faults},
        {"faults_injected", totals_.faults}, {"input_sent", producer_->sent()},
        {"input_producers_replaced", producer_->producers_replaced()},
        {"records_processed", Sum(&Slot::processed, "records_processed")},
        {"restorations", Sum(&Slot::restorations, "restores_ended")},
        {"instance_restarts", totals_.instance_restarts},
        {"broker_restarts", totals_.broker_restarts},
        {"events_judged", Sum(&Slot::events, "events")}, {"audits", totals_.audits},
        {"stores_audited", totals_.stores_audited}, {"to_running_ms_max", WorstToRunningMs()},
        {"failure", failure_}, {"events_file", last_events_}, {"rerun", RerunLine(o_)}};
    if (counts.has_value()) {
      report["input_records"] = counts->input_records;
      report["lost"] = counts->lost;
      report["duplicates"] = counts->duplicates;
    }
    std::fputs((report.dump(2) + "\n").c_str(), out_);
  }

  const SoakOptions& o_;
  std::FILE* out_;
  Clock& clock_;
  std::unique_ptr<bench::LocalBroker> cluster_;
  std::string bootstrap_;
  AppLayout app_;
  std::unique_ptr<rdkafka::RdKafkaTransport> transport_;
  std::unique_ptr<KafkaReader> reader_;
  std::unique_ptr<InputProducer> producer_;
  bool producer_stopped_ = false;
  std::vector<Fault> schedule_;
  size_t next_fault_ = 0;
  std::optional<Fault> active_;
  std::map<FaultKind, int64_t> fault_counts_;
  int killed_node_ = 0;
  std::vector<std::unique_ptr<Slot>> slots_;  // stable addresses: base slots first
  Totals totals_;
  TimeNs start_ns_ = 0;
  std::string failure_;
  std::string last_events_;  // the events of the incarnation a finding names
  int saved_stderr_ = -1;
  std::FILE* messages_ = nullptr;  // the original stderr, while stderr goes to driver.log
};

}  // namespace

std::string RerunLine(const SoakOptions& o) {
  std::string line = fmt::format(
      "restoresim soak --seed {} --duration {}s --faults {} --instances {} --threads {} "
      "--partitions {} --rate {} --keys {} --guarantee {}",
      o.seed, o.duration_ns / kSecond, FaultKindsText(o.faults), o.instances, o.threads,
      o.partitions, o.rate, o.keys, o.guarantee);
  if (!o.cluster.empty()) line += " --cluster " + o.cluster;
  if (!o.bootstrap.empty()) line += " --bootstrap-servers " + o.bootstrap;
  if (!o.mutation.empty()) line += " --mutation " + o.mutation;
  if (o.group_protocol != "classic") line += " --group-protocol " + o.group_protocol;
  return line;
}

int AuditStateDirectory(const SoakOptions& options, const std::string& app_id,
                        const std::string& state_dir, std::FILE* out) {
  std::string bootstrap = options.bootstrap;
  if (bootstrap.empty()) {
    absl::StatusOr<std::unique_ptr<bench::LocalBroker>> cluster =
        bench::LocalBroker::Attach(options.cluster, "/dev/null");
    if (!cluster.ok()) {
      std::fprintf(stderr, "%s", fmt::format("restoresim soak: {}\n",
                                             std::string(cluster.status().message())).c_str());
      return kSoakExitUsage;
    }
    bootstrap = (*cluster)->bootstrap();
  }
  Clock& clock = *SystemClock::Default();
  rdkafka::RdKafkaTransport transport(rdkafka::RdKafkaOptions{.bootstrap_servers = bootstrap},
                                      clock);
  KafkaReader reader(transport, clock);
  const AppLayout app{.app_id = app_id, .input = app_id + "-input",
                      .changelog = ChangelogTopic(app_id, kCountsStoreName),
                      .partitions = options.partitions};
  ChangelogCache cache;
  const StoreAudit audit = AuditStateDir(reader, app, state_dir, cache);
  std::fputs(fmt::format("{}: {} stores audited\n", state_dir, audit.stores).c_str(), out);
  for (const std::string& p : audit.problems) std::fputs(("  " + p + "\n").c_str(), out);
  return audit.problems.empty() ? kSoakExitOk : kSoakExitFindings;
}

int RunSoak(const SoakOptions& options, std::FILE* out) {
  RS_CHECK(!options.exe.empty() && !options.dir.empty(), "a soak without its binary or dir");
  Soak soak(options, out);
  return soak.Run();
}

}  // namespace restoresim::soak
