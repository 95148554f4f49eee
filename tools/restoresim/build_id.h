// The identifier of the running restoresim binary, which shard reports carry so that `merge`
// refuses shards of different builds: "restoresim VERSION gnu-build-id:HEX" from the linker's
// GNU build-id note (a hash of the linked binary, same bytes same id), or, on a binary linked
// without one, "restoresim VERSION exe-hash:HEX" over the executable file's bytes.
//
// Thread-safety: computed once, on the first call (a function-local static).
#ifndef RESTORESIM_TOOLS_RESTORESIM_BUILD_ID_H_
#define RESTORESIM_TOOLS_RESTORESIM_BUILD_ID_H_

#include <string>

namespace restoresim::tools {

inline constexpr const char* kRestoresimVersion = "0.1.0";

const std::string& BuildId();

}  // namespace restoresim::tools

#endif  // RESTORESIM_TOOLS_RESTORESIM_BUILD_ID_H_
