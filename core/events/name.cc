#include "core/events/name.h"

#include "core/util/interned.h"

namespace restoresim::events {

// The table and its caches are shared with Topic (core/util/interned.h).
const std::string* Name::Empty() { return InternedEmptyString(); }

const std::string* Name::Intern(std::string_view s) { return InternString(s); }

}  // namespace restoresim::events
