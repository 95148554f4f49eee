// PartitionLog memory and speed: what one retained changelog record costs beyond its key and
// value bytes, for 1M records with 16-byte keys and 100-byte values.
//
//   build/fakes/fake_log_benchmark [--benchmark_filter=...]
//
// Counters:
//   overhead_bytes_per_record         (MemoryBytes() - key bytes - value bytes) / records: the
//                                     log's own accounting (capacities of index and chunks)
//   malloc_overhead_bytes_per_record  the same from mallinfo2() (bytes in use before and after
//                                     building the log), which includes allocator headers:
//                                     the cross-check of the accounting
#include <benchmark/benchmark.h>
#include <malloc.h>

#include <cstdio>
#include <memory>
#include <string>

#include "fakes/fake_log.h"

namespace restoresim::fakes {
namespace {

constexpr int64_t kRecords = 1'000'000;
constexpr size_t kKeyBytes = 16;
constexpr size_t kValueBytes = 100;

std::string KeyOf(int64_t i) {
  std::string key(kKeyBytes, '0');
  for (size_t pos = kKeyBytes; pos > 0 && i > 0; --pos, i /= 10) {
    key[pos - 1] = static_cast<char>('0' + i % 10);
  }
  return key;
}

size_t MallocInUse() { return mallinfo2().uordblks; }

std::unique_ptr<PartitionLog> BuildLog(int64_t records) {
  auto log = std::make_unique<PartitionLog>();
  const std::string value(kValueBytes, 'v');
  for (int64_t i = 0; i < records; ++i) {
    absl::StatusOr<int64_t> offset = log->Append(KeyOf(i), value, i);
    if (!offset.ok()) std::abort();
  }
  return log;
}

void BM_AppendOverhead(benchmark::State& state) {
  const double payload = static_cast<double>(kRecords) * (kKeyBytes + kValueBytes);
  double accounted = 0;
  double malloced = 0;
  for (auto _ : state) {
    const size_t before = MallocInUse();
    std::unique_ptr<PartitionLog> log = BuildLog(kRecords);
    const size_t after = MallocInUse();
    accounted = static_cast<double>(log->MemoryBytes());
    malloced = static_cast<double>(after - before);
    benchmark::DoNotOptimize(log->end_offset());
  }
  state.counters["overhead_bytes_per_record"] = (accounted - payload) / kRecords;
  state.counters["malloc_overhead_bytes_per_record"] = (malloced - payload) / kRecords;
  state.counters["records_per_second"] =
      benchmark::Counter(static_cast<double>(kRecords) * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate);
}
BENCHMARK(BM_AppendOverhead)->Unit(benchmark::kMillisecond)->Iterations(3);

void BM_Read(benchmark::State& state) {
  const std::unique_ptr<PartitionLog> log = BuildLog(kRecords);
  const size_t batch = static_cast<size_t>(state.range(0));
  int64_t from = 0;
  int64_t read = 0;
  for (auto _ : state) {
    absl::StatusOr<std::vector<ConsumerRecord>> records = log->Read(from, batch);
    read += static_cast<int64_t>(records->size());
    from = (from + static_cast<int64_t>(batch)) % (kRecords - static_cast<int64_t>(batch));
    benchmark::DoNotOptimize(records->data());
  }
  state.counters["records_per_second"] =
      benchmark::Counter(static_cast<double>(read), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Read)->Arg(1000);

}  // namespace
}  // namespace restoresim::fakes

BENCHMARK_MAIN();
