// Where the CLI writes the files it is asked to (timelines, repro files, `shrink --out`):
//   * "-" is standard output (the command then prints its report on standard error, see
//     ReserveStdoutForData);
//   * a symbolic link is followed: the file it names is written, the link stays a link
//     (`--timeline /dev/stdout` used to replace /dev/stdout with a regular file);
//   * an existing file that is not a regular file (a terminal, /dev/null, a FIFO) is written
//     in place, without a temporary file;
//   * a regular file, or a name not yet taken, is written atomically: a temporary file beside
//     the target, synced, renamed over it — never a half-written output;
//   * refused with a one-line reason: a directory, a read-only file, a parent directory that is
//     missing or not writable. CheckOutputPath says so before any work starts.
#ifndef RESTORESIM_TOOLS_RESTORESIM_OUTPUT_FILE_H_
#define RESTORESIM_TOOLS_RESTORESIM_OUTPUT_FILE_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace restoresim::tools {

// InvalidArgument / FailedPrecondition naming the path when WriteOutput would refuse it.
absl::Status CheckOutputPath(const std::string& path);

// An input file (a repro file): it must be a regular file of at most `bytes_max` bytes — a
// FIFO, a device or a directory is refused at once instead of waited on or read without end.
absl::Status CheckInputFile(const std::string& path, uint64_t bytes_max);

// Writes `contents` to `path` as described above.
absl::Status WriteOutput(const std::string& path, std::string_view contents);

// For an output "-": from now on the command's own printing (stdout) goes to standard error,
// and WriteOutput("-", ...) writes to the original standard output. Idempotent.
void ReserveStdoutForData();

}  // namespace restoresim::tools

#endif  // RESTORESIM_TOOLS_RESTORESIM_OUTPUT_FILE_H_
