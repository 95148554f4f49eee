#include "sim/fiber.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cxxabi.h>

#include <boost/context/detail/fcontext.hpp>
#include <vector>

#include "core/util/check.h"

#if defined(__SANITIZE_ADDRESS__)
#define RS_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RS_ASAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define RS_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define RS_TSAN 1
#endif
#endif

#ifdef RS_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif
#ifdef RS_TSAN
#include <sanitizer/tsan_interface.h>
#endif

namespace restoresim::sim {
namespace ctx = boost::context::detail;
namespace {

constexpr size_t kPoolStacksMax = 64;

size_t PageSize() {
  static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return page;
}

struct StackPool {
  std::vector<FiberStack> free;
  ~StackPool() {
    for (const FiberStack& s : free) {
      munmap(static_cast<char*>(s.base) - PageSize(), s.size + PageSize());
    }
  }
};
thread_local StackPool stack_pool;

// A finished fiber never returns from its last frames, so their ASan redzones stay poisoned in
// the shadow memory (also across munmap and a later mmap of the same addresses): every stack
// handed out starts from clean shadow.
void UnpoisonStack(const FiberStack& s) {
#ifdef RS_ASAN
  __asan_unpoison_memory_region(s.base, s.size);
#else
  (void)s;
#endif
}

// Passed through jump_fcontext: who switched, and (first switch only) what to run.
struct SwitchPayload {
  FiberContext* from;
  FiberEntry entry;
  void* arg;
};

// Runs after every switch-in, on the resumed side.
void FinishSwitch(FiberContext* self, ctx::transfer_t t) {
  auto* payload = static_cast<SwitchPayload*>(t.data);
  payload->from->fctx = t.fctx;
#ifdef RS_ASAN
  __sanitizer_finish_switch_fiber(self ? self->asan_fake_stack : nullptr,
                                  &payload->from->stack_bottom, &payload->from->stack_size);
#else
  (void)self;
#endif
}

// libstdc++/libsupc++'s __cxa_eh_globals begins with these two fields on every target we build.
struct EhGlobals {
  void* caught_exceptions;
  unsigned int uncaught_exceptions;
};

void SwapExceptionState(FiberContext& from, FiberContext& to) {
  auto* globals = reinterpret_cast<EhGlobals*>(abi::__cxa_get_globals());
  from.eh_caught = globals->caught_exceptions;
  from.eh_uncaught = globals->uncaught_exceptions;
  globals->caught_exceptions = to.eh_caught;
  globals->uncaught_exceptions = to.eh_uncaught;
}

void StartSwitch(FiberContext& from, FiberContext& to, bool exiting) {
  SwapExceptionState(from, to);
#ifdef RS_ASAN
  __sanitizer_start_switch_fiber(exiting ? nullptr : &from.asan_fake_stack, to.stack_bottom,
                                 to.stack_size);
#else
  (void)from;
  (void)exiting;
#endif
#ifdef RS_TSAN
  __tsan_switch_to_fiber(to.tsan_fiber, 0);
#else
  (void)to;
#endif
}

void Trampoline(ctx::transfer_t t) {
  auto* payload = static_cast<SwitchPayload*>(t.data);
  const FiberEntry entry = payload->entry;
  void* arg = payload->arg;
  FinishSwitch(nullptr, t);
  entry(arg);
  RS_CHECK(false, "fiber entry returned instead of calling ExitFiber");
}

}  // namespace

FiberStack FiberStack::Acquire(size_t size) {
  const size_t page = PageSize();
  size = (size + page - 1) / page * page;
  auto& free = stack_pool.free;
  for (size_t i = free.size(); i-- > 0;) {
    if (free[i].size == size) {
      FiberStack s = free[i];
      free.erase(free.begin() + static_cast<ptrdiff_t>(i));
      UnpoisonStack(s);
      return s;
    }
  }
  void* mem = mmap(nullptr, size + page, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  RS_CHECK(mem != MAP_FAILED, "cannot map a {}-byte fiber stack", size);
  RS_CHECK(mprotect(mem, page, PROT_NONE) == 0, "cannot protect a fiber stack guard page");
  FiberStack s{static_cast<char*>(mem) + page, size};
  UnpoisonStack(s);  // the mapping may reuse addresses whose shadow an earlier stack poisoned
  return s;
}

void FiberStack::Release(FiberStack stack) {
  if (stack.base == nullptr) return;
  if (stack_pool.free.size() < kPoolStacksMax) {
    stack_pool.free.push_back(stack);
    return;
  }
  munmap(static_cast<char*>(stack.base) - PageSize(), stack.size + PageSize());
}

void InitFiber(FiberContext& c, FiberStack stack, FiberEntry entry, void* arg) {
  c = FiberContext{};
  c.stack_bottom = stack.base;
  c.stack_size = stack.size;
  c.fctx = ctx::make_fcontext(static_cast<char*>(stack.base) + stack.size, stack.size, Trampoline);
  c.start_entry = entry;
  c.start_arg = arg;
#ifdef RS_TSAN
  c.tsan_fiber = __tsan_create_fiber(0);
  c.owns_tsan_fiber = true;
#endif
}

void InitMainContext(FiberContext& c) {
  c = FiberContext{};
#ifdef RS_TSAN
  c.tsan_fiber = __tsan_get_current_fiber();
#endif
}

void DestroyFiber(FiberContext& c) {
#ifdef RS_TSAN
  if (c.owns_tsan_fiber && c.tsan_fiber != nullptr) __tsan_destroy_fiber(c.tsan_fiber);
#endif
  c.tsan_fiber = nullptr;
  c.owns_tsan_fiber = false;
  c.fctx = nullptr;
}

void SwitchFiber(FiberContext& from, FiberContext& to) {
  SwitchPayload payload{&from, to.start_entry, to.start_arg};
  to.start_entry = nullptr;
  StartSwitch(from, to, /*exiting=*/false);
  const ctx::transfer_t t = ctx::jump_fcontext(to.fctx, &payload);
  FinishSwitch(&from, t);
}

void ExitFiber(FiberContext& from, FiberContext& to) {
  SwitchPayload payload{&from, to.start_entry, to.start_arg};
  to.start_entry = nullptr;
  StartSwitch(from, to, /*exiting=*/true);
  ctx::jump_fcontext(to.fctx, &payload);
  __builtin_unreachable();
}

}  // namespace restoresim::sim
