#include "bench/machine_cpu.h"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <system_error>

#include "bench/measure.h"
#include "core/util/check.h"

namespace restoresim::bench {
namespace {

double TicksPerSecond() {
  static const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  return ticks;
}

// The non-empty pieces of `s` between `sep`s.
std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  while (!s.empty()) {
    const size_t at = s.find(sep);
    const std::string_view piece = s.substr(0, at);
    if (!piece.empty()) out.push_back(piece);
    if (at == std::string_view::npos) break;
    s.remove_prefix(at + 1);
  }
  return out;
}

bool ReadFile(const std::string& path, std::string& out) {
  std::ifstream in(path);
  if (!in) return false;
  std::ostringstream s;
  s << in.rdbuf();
  out = s.str();
  return true;
}

// The fields of /proc/PID/stat after the command name (which may hold spaces and parentheses:
// it ends at the last ')'): index 0 is field 3 (state), so field N is at N - 3.
std::vector<std::string_view> StatFields(std::string_view stat) {
  const size_t close = stat.rfind(')');
  if (close == std::string_view::npos) return {};
  return Split(stat.substr(close + 1), ' ');
}

bool ToInt64(std::string_view s, int64_t& out) {
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size();
}

std::vector<pid_t> AllPids() {
  std::vector<pid_t> pids;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    int64_t pid = 0;
    if (ToInt64(entry.path().filename().string(), pid) && pid > 0) {
      pids.push_back(static_cast<pid_t>(pid));
    }
  }
  std::sort(pids.begin(), pids.end());
  return pids;
}

// The inodes of the TCP sockets listening on `ports`, from one /proc/net/tcp-like table.
void ListeningInodes(const std::string& table, const std::set<int>& ports,
                     std::set<std::string>& inodes) {
  std::string text;
  if (!ReadFile(table, text)) return;
  bool header = true;
  for (std::string_view line : Split(text, '\n')) {
    if (header) {
      header = false;
      continue;
    }
    const std::vector<std::string_view> f = Split(line, ' ');
    // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
    if (f.size() < 10 || f[3] != "0A") continue;  // 0A: LISTEN
    const size_t colon = f[1].rfind(':');
    if (colon == std::string_view::npos) continue;
    const std::string port_hex(f[1].substr(colon + 1));
    const long port = std::strtol(port_hex.c_str(), nullptr, 16);
    if (ports.contains(static_cast<int>(port))) inodes.emplace(f[9]);
  }
}

}  // namespace

double MachineBusySeconds() {
  std::string text;
  if (!ReadFile("/proc/stat", text) || !text.starts_with("cpu ")) return -1;
  const std::vector<std::string_view> f =
      Split(std::string_view(text).substr(0, text.find('\n')), ' ');
  // cpu user nice system idle iowait irq softirq steal ...
  if (f.size() < 9) return -1;
  int64_t ticks = 0;
  for (size_t i : {1, 2, 3, 8}) {
    int64_t v = 0;
    if (!ToInt64(f[i], v)) return -1;
    ticks += v;
  }
  return static_cast<double>(ticks) / TicksPerSecond();
}

double ProcessCpuSeconds(pid_t pid, bool reaped_children) {
  std::string text;
  if (!ReadFile("/proc/" + std::to_string(pid) + "/stat", text)) return -1;
  const std::vector<std::string_view> f = StatFields(text);
  if (f.size() < 15) return -1;
  int64_t ticks = 0;
  for (size_t field = 14; field <= (reaped_children ? 17u : 15u); ++field) {
    int64_t v = 0;
    if (!ToInt64(f[field - 3], v)) return -1;
    ticks += v;
  }
  return static_cast<double>(ticks) / TicksPerSecond();
}

std::vector<pid_t> DescendantsOf(pid_t root) {
  std::map<pid_t, pid_t> parent;
  for (pid_t pid : AllPids()) {
    std::string text;
    if (!ReadFile("/proc/" + std::to_string(pid) + "/stat", text)) continue;  // gone meanwhile
    const std::vector<std::string_view> f = StatFields(text);
    int64_t ppid = 0;
    if (f.size() > 1 && ToInt64(f[1], ppid)) parent[pid] = static_cast<pid_t>(ppid);
  }
  std::vector<pid_t> out;
  for (const auto& [pid, ppid] : parent) {
    // Up the chain to root or the top; a chain longer than the table is a cycle read while
    // processes came and went: not ours.
    pid_t up = ppid;
    for (size_t hops = 0; up > 1 && up != root && hops < parent.size(); ++hops) {
      auto it = parent.find(up);
      up = it == parent.end() ? 0 : it->second;
    }
    if (up == root && pid != root) out.push_back(pid);
  }
  return out;
}

std::set<pid_t> PidsListeningOn(const std::set<int>& ports) {
  std::set<pid_t> pids;
  if (ports.empty()) return pids;
  std::set<std::string> inodes;
  ListeningInodes("/proc/net/tcp", ports, inodes);
  ListeningInodes("/proc/net/tcp6", ports, inodes);
  if (inodes.empty()) return pids;
  for (pid_t pid : AllPids()) {
    std::error_code ec;
    const std::string fds = "/proc/" + std::to_string(pid) + "/fd";
    for (const auto& fd : std::filesystem::directory_iterator(fds, ec)) {
      std::error_code link_ec;
      const std::string target = std::filesystem::read_symlink(fd.path(), link_ec).string();
      if (link_ec || !target.starts_with("socket:[") || !target.ends_with("]")) continue;
      if (inodes.contains(target.substr(8, target.size() - 9))) {
        pids.insert(pid);
        break;
      }
    }
  }
  return pids;
}

std::set<int> PortsOf(std::string_view servers) {
  std::set<int> ports;
  for (std::string_view server : Split(servers, ',')) {
    const size_t colon = server.rfind(':');
    int64_t port = 0;
    if (colon != std::string_view::npos && ToInt64(server.substr(colon + 1), port) &&
        port > 0 && port < 65536) {
      ports.insert(static_cast<int>(port));
    }
  }
  return ports;
}

OwnCpuMeter::Sample OwnCpuMeter::Take() const {
  Sample s{.wall_s = MonoSeconds(), .busy_s = MachineBusySeconds()};
  double own = ProcessCpuSeconds(getpid(), /*reaped_children=*/true);
  if (s.busy_s < 0 || own < 0) return s;
  std::set<pid_t> others_ours = PidsListeningOn(broker_ports_);
  for (pid_t pid : DescendantsOf(getpid())) others_ours.insert(pid);
  others_ours.erase(getpid());
  // With their reaped children too: a grandchild that ended went into its parent's figure,
  // one still running is counted on its own. A process that ends between these reads is lost
  // for this sample only; its parent's reaped-children time has it at the next.
  for (pid_t pid : others_ours) own += std::max(0.0, ProcessCpuSeconds(pid, true));
  s.own_s = own;
  return s;
}

CpuShare OwnCpuMeter::Between(const Sample& from, const Sample& to) {
  CpuShare share{.seconds = to.wall_s - from.wall_s};
  RS_CHECK(share.seconds >= 0, "a stretch of {} s", share.seconds);
  if (share.seconds <= 0 || from.busy_s < 0 || to.busy_s < 0 || from.own_s < 0 ||
      to.own_s < 0) {
    return share;
  }
  share.own_cores = std::max(0.0, (to.own_s - from.own_s) / share.seconds);
  // Ours can exceed the machine's busy time by the ticks' rounding and by the interrupts
  // (not in the machine's figure) a process's system time may include: never below zero.
  share.others_cores =
      std::max(0.0, (to.busy_s - from.busy_s) / share.seconds - share.own_cores);
  return share;
}

}  // namespace restoresim::bench
