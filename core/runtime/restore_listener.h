// StateRestoreListener, as in Kafka Streams: told when an active task's changelog starts
// restoring, after each batch, when it ends, and when it is suspended (unregistered before it
// completed: revoked, recycled, or corrupted). Every start is followed by exactly one end or
// suspended. Called on the restore thread.
#ifndef RESTORESIM_CORE_RUNTIME_RESTORE_LISTENER_H_
#define RESTORESIM_CORE_RUNTIME_RESTORE_LISTENER_H_

#include <cstdint>
#include <string_view>

#include "core/transport/transport.h"

namespace restoresim {

class StateRestoreListener {
 public:
  virtual ~StateRestoreListener() = default;
  virtual void OnRestoreStart(const TopicPartition& changelog, std::string_view store,
                              int64_t start_offset, int64_t end_offset) = 0;
  virtual void OnBatchRestored(const TopicPartition& changelog, std::string_view store,
                               int64_t batch_end_offset, int64_t records) = 0;
  virtual void OnRestoreEnd(const TopicPartition& changelog, std::string_view store,
                            int64_t total_records) = 0;
  virtual void OnRestoreSuspended(const TopicPartition& changelog, std::string_view store,
                                  int64_t total_records) = 0;
};

}  // namespace restoresim

#endif  // RESTORESIM_CORE_RUNTIME_RESTORE_LISTENER_H_
