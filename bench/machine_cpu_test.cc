// Who used the CPUs: the /proc readings the benchmark's busy rule rests on, against processes
// this test starts (a listener, a spinning child), so that each reading has a known answer.
#include "bench/machine_cpu.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>

namespace restoresim::bench {
namespace {

// A forked child that does `body` and then waits to be killed; killed and reaped on scope exit.
class Child {
 public:
  template <typename Body>
  explicit Child(Body body) {
    pid_ = fork();
    if (pid_ == 0) {
      body();
      for (;;) pause();
    }
  }
  ~Child() {
    if (pid_ <= 0) return;
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
};

// Polls `done` for up to 30 s (the machine may be busy: the test asserts what happens, not when).
template <typename Done>
bool Eventually(Done done) {
  for (int i = 0; i < 3000; ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

double OwnCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

TEST(MachineCpu, PortsOfABootstrapList) {
  EXPECT_EQ(PortsOf("127.0.0.1:9092,localhost:19093"), (std::set<int>{9092, 19093}));
  EXPECT_EQ(PortsOf("[::1]:9094"), (std::set<int>{9094}));
  EXPECT_EQ(PortsOf("nohost,host:x,host:70000,:0,"), std::set<int>{});
  EXPECT_EQ(PortsOf(""), std::set<int>{});
}

TEST(MachineCpu, TheMachineAndThisProcessHaveCpuTime) {
  ASSERT_GE(MachineBusySeconds(), 0) << "no /proc/stat";
  const double before = ProcessCpuSeconds(getpid(), true);
  ASSERT_GE(before, 0);
  const double spin_from = OwnCpuSeconds();
  while (OwnCpuSeconds() - spin_from < 0.1) {
  }
  EXPECT_GE(ProcessCpuSeconds(getpid(), true), before + 0.05);
  EXPECT_EQ(ProcessCpuSeconds(-5, false), -1);
}

TEST(MachineCpu, AListenerIsFoundByItsPort) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  Child listener([&] {
    const int s = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    if (s < 0 || bind(s, reinterpret_cast<sockaddr*>(&addr), len) != 0 || listen(s, 1) != 0 ||
        getsockname(s, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      _exit(1);
    }
    const int port = ntohs(addr.sin_port);
    if (write(fds[1], &port, sizeof(port)) != sizeof(port)) _exit(1);
  });
  int port = 0;
  ASSERT_EQ(read(fds[0], &port, sizeof(port)), static_cast<ssize_t>(sizeof(port)));
  close(fds[0]);
  close(fds[1]);
  EXPECT_EQ(PidsListeningOn({port}), (std::set<pid_t>{listener.pid()}));
  EXPECT_EQ(PidsListeningOn({}), std::set<pid_t>{});
  EXPECT_TRUE(DescendantsOf(getpid()) == std::vector<pid_t>{listener.pid()});
}

void SpinFor(double cpu_seconds) {
  const double from = OwnCpuSeconds();
  while (OwnCpuSeconds() - from < cpu_seconds) {
  }
}

// Takes a stretch while `pid` spins; returns the share and what `pid` spent inside it (read
// just after the first sample and just before the second: a lower bound).
CpuShare StretchWhileSpinning(pid_t pid, double& spent) {
  const OwnCpuMeter meter({});
  const OwnCpuMeter::Sample from = meter.Take();
  const double c0 = ProcessCpuSeconds(pid, false);
  EXPECT_TRUE(Eventually([&] { return ProcessCpuSeconds(pid, false) >= c0 + 0.2; }));
  spent = ProcessCpuSeconds(pid, false) - c0;
  return OwnCpuMeter::Between(from, meter.Take());
}

TEST(MachineCpu, ASpinningChildIsOurs) {
  Child spinner([] { SpinFor(60); });
  double spent = 0;
  const CpuShare share = StretchWhileSpinning(spinner.pid(), spent);
  ASSERT_GE(share.own_cores, 0);
  ASSERT_GE(share.others_cores, 0);
  // Two readings of 10 ms ticks each side: 0.02 s of rounding.
  EXPECT_GE(share.own_cores * share.seconds, spent - 0.02);
}

TEST(MachineCpu, ASpinningStrangerIsTheOthers) {
  // A grandchild whose parent exits is adopted by init (or a subreaper above us): not ours.
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  Child parent([&] {
    const pid_t stranger = fork();
    if (stranger == 0) {
      SpinFor(60);
      _exit(0);
    }
    if (write(fds[1], &stranger, sizeof(stranger)) != sizeof(stranger)) _exit(1);
    _exit(0);
  });
  pid_t stranger = 0;
  ASSERT_EQ(read(fds[0], &stranger, sizeof(stranger)), static_cast<ssize_t>(sizeof(stranger)));
  close(fds[0]);
  close(fds[1]);
  waitpid(parent.pid(), nullptr, 0);
  ASSERT_TRUE(Eventually([&] {
    const std::vector<pid_t> ours = DescendantsOf(getpid());
    return std::find(ours.begin(), ours.end(), stranger) == ours.end();
  }));
  double spent = 0;
  const CpuShare share = StretchWhileSpinning(stranger, spent);
  kill(stranger, SIGKILL);
  ASSERT_GE(share.others_cores, 0);
  EXPECT_GE(share.others_cores * share.seconds, spent - 0.02);
  // Without /proc readings: unknown, never a figure.
  const CpuShare unknown = OwnCpuMeter::Between(OwnCpuMeter::Sample{.wall_s = 1},
                                                OwnCpuMeter::Sample{.wall_s = 2});
  EXPECT_EQ(unknown.others_cores, -1);
  EXPECT_EQ(unknown.own_cores, -1);
}

}  // namespace
}  // namespace restoresim::bench
