// RocksDB statuses as the port's statuses: the one translation, shared by the RocksDB store and
// its bulk loader, with the one view of bytes as a RocksDB Slice. I/O errors and busy or
// timed-out calls are retryable (kUnavailable); corruption is kDataLoss (the caller wipes and
// restores from scratch).
#ifndef RESTORESIM_CORE_STATE_ROCKSDB_STATUS_H_
#define RESTORESIM_CORE_STATE_ROCKSDB_STATUS_H_

#include <fmt/format.h>
#include <rocksdb/slice.h>
#include <rocksdb/status.h>

#include <string_view>

#include "absl/status/status.h"

namespace restoresim {

inline rocksdb::Slice ToSlice(std::string_view s) { return rocksdb::Slice(s.data(), s.size()); }

inline absl::Status TranslateRocksDb(const rocksdb::Status& s, std::string_view what) {
  if (s.ok()) return absl::OkStatus();
  const std::string message = fmt::format("rocksdb {}: {}", what, s.ToString());
  if (s.IsNotFound()) return absl::NotFoundError(message);
  if (s.IsCorruption()) return absl::DataLossError(message);
  if (s.IsIOError() || s.IsBusy() || s.IsTryAgain() || s.IsTimedOut()) {
    return absl::UnavailableError(message);
  }
  if (s.IsInvalidArgument()) return absl::InvalidArgumentError(message);
  return absl::InternalError(message);
}

}  // namespace restoresim

#endif  // RESTORESIM_CORE_STATE_ROCKSDB_STATUS_H_
