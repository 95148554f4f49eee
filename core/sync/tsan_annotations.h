// ThreadSanitizer happens-before annotations for our primitives. Debian's Abseil is not built
// with TSan, so TSan cannot see the ordering absl::Mutex provides; Mutex and CondVar state it
// themselves (acquire after locking, release before unlocking). No-ops in other builds.
#ifndef RESTORESIM_CORE_SYNC_TSAN_ANNOTATIONS_H_
#define RESTORESIM_CORE_SYNC_TSAN_ANNOTATIONS_H_

#if defined(__SANITIZE_THREAD__)
#define RS_TSAN_ENABLED 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define RS_TSAN_ENABLED 1
#endif
#endif

#ifdef RS_TSAN_ENABLED
#include <sanitizer/tsan_interface.h>
#define RS_TSAN_ACQUIRE(addr) __tsan_acquire(const_cast<void*>(static_cast<const void*>(addr)))
#define RS_TSAN_RELEASE(addr) __tsan_release(const_cast<void*>(static_cast<const void*>(addr)))
#else
#define RS_TSAN_ACQUIRE(addr) ((void)0)
#define RS_TSAN_RELEASE(addr) ((void)0)
#endif

#endif  // RESTORESIM_CORE_SYNC_TSAN_ANNOTATIONS_H_
