// `restoresim soak`: the runtime for real, as long-lived processes against a Kafka cluster,
// under a seeded schedule of faults, judged by the invariant oracle online and audited against
// the cluster at the end (soak/soak_driver.h; docs/SOAK.md). `restoresim soak-instance` is one
// of its instances (soak/soak_instance.h), started by the soak itself; it is not for users and
// is left out of --help.
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "absl/strings/numbers.h"
#include "bench/project_paths.h"
#include "core/util/mutation.h"
#include "core/util/shown.h"
#include "soak/soak_driver.h"
#include "soak/soak_instance.h"
#include "tools/restoresim/command_run.h"
#include "tools/restoresim/commands.h"
#include "tools/restoresim/mutation_names.h"

namespace restoresim::tools {
namespace {

struct SoakArgs {
  soak::SoakOptions options;
  std::string backend = "kafka";
  std::string duration = "10m";
  std::string faults = "all";
  int64_t progress_every_s = 10;
  bool schedule_only = false;  // --schedule: print the fault schedule and exit
  std::string audit_dir;  // --audit: audit this state directory only
  std::string audit_app;
};

// "90s", "10m", "1h", or seconds.
std::optional<TimeNs> ParseDuration(std::string text) {
  TimeNs unit = kSecond;
  if (!text.empty() && (text.back() == 's' || text.back() == 'm' || text.back() == 'h')) {
    unit = text.back() == 'h' ? 3600 * kSecond : text.back() == 'm' ? 60 * kSecond : kSecond;
    text.pop_back();
  }
  int64_t n = 0;
  if (!absl::SimpleAtoi(text, &n) || n < 1 || n > 7 * 24 * 3600 * kSecond / unit) return {};
  return n * unit;
}

std::string SelfExe() {
  char path[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
  return n <= 0 ? std::string() : std::string(path, static_cast<size_t>(n));
}

// The checks CLI11 does not make: ranges, names, the options that exclude each other.
std::optional<std::string> Invalid(const SoakArgs& a, soak::SoakOptions& o) {
  if (a.backend != "kafka") return "--backend: only kafka (the simulator's soak is explore)";
  const std::optional<TimeNs> duration = ParseDuration(a.duration);
  if (!duration.has_value()) return fmt::format("--duration '{}': 90s, 10m, 1h ...", a.duration);
  o.duration_ns = *duration;
  absl::StatusOr<std::vector<soak::FaultKind>> faults = soak::ParseFaultKinds(a.faults);
  if (!faults.ok()) return fmt::format("--faults: {}", std::string(faults.status().message()));
  o.faults = *faults;
  if (!o.bootstrap.empty() && !o.cluster.empty()) {
    return "--bootstrap-servers and --cluster exclude each other";
  }
  if (o.instances < 1 || o.instances > 16) return "--instances: 1 to 16";
  if (o.threads < 1 || o.threads > 8) return "--threads: 1 to 8";
  if (o.partitions < 1 || o.partitions > 64) return "--partitions: 1 to 64";
  if (o.brokers < 1 || o.brokers > 5) return "--brokers: 1 to 5";
  if (o.rate < 1 || o.rate > 100000) return "--rate: 1 to 100000 records/s";
  if (o.keys < 1 || o.keys > 100000) return "--keys: 1 to 100000";
  if (a.progress_every_s < 1) return "--progress-every: at least 1 s";
  if (o.group_protocol != "classic" && o.group_protocol != "streams") {
    return "--group-protocol: classic or streams";
  }
  if (o.guarantee != "at_least_once" && o.guarantee != "exactly_once_v2") {
    return "--guarantee: at_least_once or exactly_once_v2";
  }
  if (!o.mutation.empty() && !MutationByName(o.mutation).has_value()) {
    return fmt::format("--mutation: no mutation '{}'{} (restoresim zoo --list)",
                       Shown(o.mutation), MutationSpellingHint(o.mutation));
  }
  o.progress_every_ns = a.progress_every_s * kSecond;
  return std::nullopt;
}

// The soak's options, checked and completed; --audit's own requirements too.
absl::StatusOr<soak::SoakOptions> ValidateSoak(const SoakArgs& a, CommandRun&) {
  soak::SoakOptions o = a.options;
  if (std::optional<std::string> bad = Invalid(a, o); bad.has_value()) {
    return absl::InvalidArgumentError(*bad);
  }
  if (a.audit_dir.empty()) return o;
  if (a.audit_app.empty()) {
    return absl::InvalidArgumentError("--audit needs --app (the soak's application id)");
  }
  if (o.bootstrap.empty() && o.cluster.empty()) {
    return absl::InvalidArgumentError("--audit needs --cluster or --bootstrap-servers");
  }
  return o;
}

int RunSoakCommand(const SoakArgs& a, soak::SoakOptions& o, CommandRun& command) {
  if (!a.audit_dir.empty()) return soak::AuditStateDirectory(o, a.audit_app, a.audit_dir, stdout);
  if (a.schedule_only) {
    const soak::ScheduleParams params{.seed = o.seed, .duration_ns = o.duration_ns,
                                      .kinds = o.faults,
                                      .brokers = static_cast<uint32_t>(o.brokers),
                                      .instances = static_cast<uint32_t>(o.instances),
                                      .partitions = static_cast<uint32_t>(o.partitions)};
    std::fputs(soak::ScheduleText(soak::DrawSchedule(params)).c_str(), stdout);
    return kExitOk;
  }
  o.exe = SelfExe();
  if (o.exe.empty()) return command.Usage("cannot find the running binary (/proc/self/exe)");
  if (o.dir.empty()) o.dir = fmt::format("{}/soak/run-{}", bench::BuildRoot(), getpid());
  return soak::RunSoak(o, stdout);
}

void AddSoakOptions(CLI::App& cmd, SoakArgs& a) {
  soak::SoakOptions& o = a.options;
  cmd.add_option("--backend", a.backend, "kafka (the only one: the simulator's soak is explore)");
  cmd.add_option("--bootstrap-servers", o.bootstrap,
                 "a cluster to run against (no broker faults); default: start three nodes");
  cmd.add_option("--cluster", o.cluster,
                 "a running tools/kafka/broker cluster by name (broker faults allowed)");
  cmd.add_option("--brokers", o.brokers, "nodes of the cluster the soak starts (default 3)");
  cmd.add_option("--instances", o.instances, "runtime instances, a process each (default 3)");
  cmd.add_option("--threads", o.threads, "stream threads per instance (default 2)");
  cmd.add_option("--partitions", o.partitions, "input and changelog partitions (default 6)");
  cmd.add_option("--rate", o.rate, "input records per second (default 200)");
  cmd.add_option("--keys", o.keys, "distinct input keys (default 200)");
  cmd.add_option("--duration", a.duration, "how long faults run: 90s, 10m, 1h (default 10m)");
  cmd.add_option("--seed", o.seed, "seed of the fault schedule (default 0)");
  cmd.add_option("--faults", a.faults,
                 "all, none, or a list of: broker-kill, leader-kill, instance-kill, "
                 "instance-bounce, instance-add, checkpoint-restore, pause, disk-full");
  cmd.add_option("--guarantee", o.guarantee, "at_least_once (default) or exactly_once_v2");
  cmd.add_option("--group-protocol", o.group_protocol,
                 "classic (default) or streams: the instances join a streams group, whose "
                 "broker places their tasks and standbys (Kafka 4.2+)");
  cmd.add_option("--mutation", o.mutation, "plant a zoo mutation in every instance's runtime");
  cmd.add_option("--dir", o.dir, "state directories, events, logs (default build/soak/run-PID)");
  cmd.add_option("--progress-every", a.progress_every_s, "seconds between progress lines (10)");
  cmd.add_flag("--json", o.json, "the report as JSON on stdout (progress on stderr)");
  cmd.add_flag("--schedule", a.schedule_only,
               "print the fault schedule the seed draws (with --brokers of the cluster) and exit");
  cmd.add_option("--audit", a.audit_dir,
                 "only audit this state directory of an earlier soak (with --app, --partitions "
                 "and --cluster or --bootstrap-servers) against the cluster");
  cmd.add_option("--app", a.audit_app, "the application id of the soak --audit looks at");
}

}  // namespace

Command AddSoakCommand(CLI::App& app) {
  auto args = std::make_shared<SoakArgs>();
  CLI::App* cmd = app.add_subcommand(
      "soak", "run the runtime for real against a Kafka cluster under a seeded schedule of "
              "faults, judged by the invariant oracle");
  AddSoakOptions(*cmd, *args);
  const CommandSteps<SoakArgs, soak::SoakOptions> steps{.validate = ValidateSoak,
                                                        .run = RunSoakCommand};
  return [args, steps]() { return RunCommand("soak", steps, *args); };
}

Command AddSoakInstanceCommand(CLI::App& app) {
  auto o = std::make_shared<soak::InstanceOptions>();
  CLI::App* cmd = app.add_subcommand("soak-instance", "one instance of a soak (internal)");
  cmd->group("");  // not in --help: `restoresim soak` starts these
  cmd->add_option("--bootstrap-servers", o->bootstrap)->required();
  cmd->add_option("--app", o->app_id)->required();
  cmd->add_option("--input", o->input_topic)->required();
  cmd->add_option("--state-dir", o->state_dir)->required();
  cmd->add_option("--status", o->status_path)->required();
  cmd->add_option("--events", o->events_path);
  cmd->add_option("--guarantee", o->guarantee);
  cmd->add_option("--group-protocol", o->group_protocol);
  cmd->add_option("--mutation", o->mutation);
  cmd->add_option("--threads", o->threads)->check(CLI::Range(1, 64));
  cmd->add_option("--index", o->index)->check(CLI::Range(0, 1 << 20));
  return [o]() { return soak::RunSoakInstance(*o); };
}

}  // namespace restoresim::tools
