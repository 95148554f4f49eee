// How this process was invoked, so that the command lines it prints run when pasted (issue 24).
//
// A failure's replay line is stored as `restoresim replay ...` (in repro files and --json
// reports, which stay machine-independent); the text output prints it with `restoresim`
// replaced by the binary as the user invoked it (argv[0]): `build/tools/restoresim replay ...`
// from the source tree, the absolute path from tools/run, plain `restoresim` when it was found
// on PATH.
//
// Thread-safety: SetInvocation once in main before any other thread; then read-only.
#ifndef RESTORESIM_TOOLS_RESTORESIM_INVOCATION_H_
#define RESTORESIM_TOOLS_RESTORESIM_INVOCATION_H_

#include <string>
#include <string_view>

namespace restoresim::tools {

// argv[0] of the process; kept as given (a relative path stays relative).
void SetInvocation(std::string_view argv0);

// The binary as a shell word: argv[0] if it names a path (has a '/'), quoted when it holds
// characters a shell would interpret; "restoresim" otherwise.
std::string BinaryWord();

// `word` as one word of a POSIX shell: as is when it has nothing a shell interprets, else quoted.
std::string ShellWord(std::string_view word);

// `command` with a leading "restoresim " replaced by BinaryWord(); other text unchanged.
std::string Runnable(std::string_view command);

}  // namespace restoresim::tools

#endif  // RESTORESIM_TOOLS_RESTORESIM_INVOCATION_H_
