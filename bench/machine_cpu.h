// Who used the machine's CPUs during a stretch of the benchmark: its own processes (this one,
// its children, the local brokers serving it) or anyone else. The benchmark flags a run whose
// rounds shared the machine with others (bench_report.h, BusyReason): the load average cannot
// say that, since the benchmark's own threads load a 2-core machine past 2 by themselves.
//
// Read from Linux's /proc: the machine's busy time from /proc/stat (user, nice, system and
// steal; not idle, iowait, irq or softirq: interrupts on loopback are mostly the benchmark's
// own traffic, and a kernel does not say whose), a process's from /proc/PID/stat (utime and
// stime; for this process also cutime and cstime, the children it reaped, so a child that ended
// during the stretch still counts as ours), descendants by their parent pid, and the brokers as
// the processes listening on the bootstrap servers' ports (/proc/net/tcp{,6} and the processes'
// socket descriptors: a broker started by tools/kafka/broker is a child of init, not ours).
//
// Elsewhere (no /proc), every reading is unknown (-1) and the report says so.
//
// Thread-safety: stateless reads; an OwnCpuMeter is used from one thread.
#ifndef RESTORESIM_BENCH_MACHINE_CPU_H_
#define RESTORESIM_BENCH_MACHINE_CPU_H_

#include <sys/types.h>

#include <set>
#include <string_view>
#include <vector>

namespace restoresim::bench {

// CPU seconds all cores spent busy since boot (see above); -1 when unknown.
double MachineBusySeconds();
// CPU seconds of process `pid` (user + system), with `reaped_children` also of the children it
// waited for; -1 when it is gone or unreadable.
double ProcessCpuSeconds(pid_t pid, bool reaped_children);
// Every living process whose chain of parents reaches `root` (not `root` itself), ascending.
std::vector<pid_t> DescendantsOf(pid_t root);
// The processes holding a TCP socket that listens on one of `ports` (any local address).
std::set<pid_t> PidsListeningOn(const std::set<int>& ports);
// The ports of "host:port,host:port" (a bootstrap servers list); entries without one skipped.
std::set<int> PortsOf(std::string_view servers);

// CPU use over a stretch: ours and everyone else's, each in cores (CPU seconds per second).
struct CpuShare {
  double seconds = 0;      // the stretch's wall time
  double own_cores = -1;   // -1: unknown
  double others_cores = -1;
};

class OwnCpuMeter {
 public:
  // `broker_ports`: where the brokers that serve the benchmark listen (empty: none local).
  explicit OwnCpuMeter(std::set<int> broker_ports) : broker_ports_(std::move(broker_ports)) {}

  struct Sample {
    double wall_s = 0;
    double busy_s = -1;  // the machine's
    double own_s = -1;   // this process + reaped children + living descendants + brokers
  };
  Sample Take() const;
  static CpuShare Between(const Sample& from, const Sample& to);

 private:
  std::set<int> broker_ports_;
};

}  // namespace restoresim::bench

#endif  // RESTORESIM_BENCH_MACHINE_CPU_H_
