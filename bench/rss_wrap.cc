// restoresim-rss-wrap OUT -- PROGRAM ARGS...: runs PROGRAM as its child, waits for it, writes
// to the file OUT the peak resident set in bytes of that child and of every descendant the child
// waited for (getrusage RUSAGE_CHILDREN: the largest of them), and exits with the child's status
// (128 + the signal that ended it).
//
// Why a process of its own: a child forked from a large process starts with that process's
// resident-set high-water mark, and exec records it as the child's ru_maxrss, so wait4 in the
// benchmark would report at least the benchmark's own peak for any command it runs (Kafka
// Streams' JVM and our restoration in its own process reported byte-identical peaks in the
// 2026-12-06 run). This wrapper is small when it forks, so what its child inherits is small,
// and the figure is the command's. (bench/project_paths.cc, RunCommand; the test is
// RunCommand.ThePeakResidentSetIsTheCommandsNotTheCallers.)
//
// Exit 125 on bad usage or a failure of its own (it writes nothing to OUT then).
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

int main(int argc, char** argv) {
  if (argc < 4 || std::strcmp(argv[2], "--") != 0) {
    std::fprintf(stderr, "usage: %s OUT -- PROGRAM [ARGS...]\n", argc > 0 ? argv[0] : "rss-wrap");
    return 125;
  }
  const pid_t pid = fork();
  if (pid < 0) {
    std::perror("restoresim-rss-wrap: fork");
    return 125;
  }
  if (pid == 0) {
    execvp(argv[3], argv + 3);
    std::perror("restoresim-rss-wrap: exec");
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      std::perror("restoresim-rss-wrap: waitpid");
      return 125;
    }
  }
  rusage usage{};
  if (getrusage(RUSAGE_CHILDREN, &usage) != 0) {
    std::perror("restoresim-rss-wrap: getrusage");
    return 125;
  }
  std::FILE* out = std::fopen(argv[1], "w");
  if (out == nullptr || std::fprintf(out, "%ld\n", usage.ru_maxrss * 1024L) < 0 ||
      std::fclose(out) != 0) {
    std::perror("restoresim-rss-wrap: writing the figure");
    return 125;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status)
                           : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}
