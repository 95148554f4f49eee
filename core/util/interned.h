// InternString: the process's one copy of a string. Equal contents give one address, so a
// holder of the pointer copies a word and compares two by address; the copies live until the
// process ends (the table grows with the number of distinct strings, never with their uses).
// Used by events::Name (core/events/name.h) and Topic (core/transport/topic.h).
//
// Kafka counterpart: none (a harness type).
//
// Thread-safety: thread-safe; a per-thread cache answers repeated strings without locking.
#ifndef RESTORESIM_CORE_UTIL_INTERNED_H_
#define RESTORESIM_CORE_UTIL_INTERNED_H_

#include <string>
#include <string_view>

namespace restoresim {

// The interned copy of s. The address is an identity for equality and hashing only, never an
// ordering (orderings compare contents).
const std::string* InternString(std::string_view s);
// InternString(""), computed once.
const std::string* InternedEmptyString();

}  // namespace restoresim

#endif  // RESTORESIM_CORE_UTIL_INTERNED_H_
