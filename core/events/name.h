// Name: an interned string, for the names events carry (threads, readers, clients, calls,
// instances, topologies). A run emits hundreds of thousands of events and names a few dozen
// distinct things, so each distinct name is stored once for the process and an event holds a
// pointer to it: copying a Name is a word, comparing two is a pointer comparison, building one
// from a string_view is one hash lookup in a per-thread cache (the shared table is locked only
// the first time a thread meets a name). Interned strings live until the process ends: the
// table grows with the number of distinct names, never with the number of events.
//
// Kafka counterpart: none (a harness type).
//
// Thread-safety: Name is a value; interning is thread-safe.
#ifndef RESTORESIM_CORE_EVENTS_NAME_H_
#define RESTORESIM_CORE_EVENTS_NAME_H_

#include <ostream>
#include <string>
#include <string_view>

#include "fmt/format.h"

namespace restoresim::events {

class Name {
 public:
  Name() : s_(Empty()) {}
  Name(std::string_view s) : s_(Intern(s)) {}  // NOLINT: implicit by design
  Name(const char* s) : Name(std::string_view(s)) {}  // NOLINT
  Name(const std::string& s) : Name(std::string_view(s)) {}  // NOLINT

  operator std::string_view() const { return *s_; }  // NOLINT
  operator const std::string&() const { return *s_; }  // NOLINT
  const std::string& str() const { return *s_; }
  std::string_view view() const { return *s_; }
  bool empty() const { return s_->empty(); }
  // The interned string's identity: a hash key for lookups only, never an ordering.
  const void* id() const { return s_; }

  // Interned: equal strings have one address.
  friend bool operator==(Name a, Name b) { return a.s_ == b.s_; }
  friend bool operator==(Name a, std::string_view b) { return *a.s_ == b; }
  friend bool operator==(Name a, const char* b) { return *a.s_ == b; }
  // By contents, never by address (orderings must not depend on where a string lives).
  friend bool operator<(Name a, Name b) { return *a.s_ < *b.s_; }
  friend std::ostream& operator<<(std::ostream& out, Name n) { return out << *n.s_; }

 private:
  static const std::string* Empty();
  static const std::string* Intern(std::string_view s);

  const std::string* s_;
};

}  // namespace restoresim::events

template <>
struct fmt::formatter<restoresim::events::Name> : fmt::formatter<std::string_view> {
  template <typename Ctx>
  auto format(restoresim::events::Name n, Ctx& ctx) const {
    return fmt::formatter<std::string_view>::format(n.view(), ctx);
  }
};

#endif  // RESTORESIM_CORE_EVENTS_NAME_H_
