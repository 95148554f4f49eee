// Writes the seed corpora of checkpoint_fuzzer, log_record_fuzzer and log_store_fuzzer with
// the project's own encoders: EncodeCheckpoint, AppendLogRecord, and store directories that a
// real LogStore wrote into the in-memory file system (store_archive.h), each also with a
// little damage. Run once by hand; its output is committed under fuzz/corpus/:
//   build-fuzz/fuzz/make_corpus fuzz/corpus
// The repro and runtime-config corpora are files written by `restoresim explore` and by hand.
#include <cstdio>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "core/state/checkpoint_file.h"
#include "core/state/log_record.h"
#include "core/state/log_store.h"
#include "fakes/mem_file_system.h"
#include "fuzz/store_archive.h"

namespace restoresim::fuzz {
namespace {

constexpr const char* kDir = "/state/0_0/fuzz";  // as in log_store_fuzzer.cc

void Write(const std::string& dir, const std::string& name, const std::string& bytes) {
  std::ofstream(dir + "/" + name, std::ios::binary | std::ios::trunc) << bytes;
}

void CheckpointCorpus(const std::string& dir) {
  const std::string one = EncodeCheckpoint({{{"counts-changelog", 0}, 5}});
  const std::string three = EncodeCheckpoint(
      {{{"app-counts-changelog", 0}, 0}, {{"app-counts-changelog", 7}, 1234567}, {{"x", 2}, 9}});
  Write(dir, "empty", EncodeCheckpoint({}));
  Write(dir, "one", one);
  Write(dir, "three", three);
  Write(dir, "truncated", three.substr(0, three.size() / 2));
  std::string flipped = three;
  flipped[flipped.size() / 3] ^= 0x01;
  Write(dir, "bit-flip", flipped);
  std::string v2 = one;
  v2.replace(v2.find(" 1\n"), 3, " 2\n");
  Write(dir, "version-2", v2);
}

std::string Record(std::string_view key, const std::string_view* value) {
  std::string out;
  AppendLogRecord(out, key, value);
  return out;
}

void RecordCorpus(const std::string& dir) {
  const std::string_view v1 = "1", empty = "";
  const std::string put = Record("key", &v1);
  Write(dir, "put", put);
  Write(dir, "delete", Record("key", nullptr));
  Write(dir, "empty-key-and-value", Record("", &empty));
  Write(dir, "three", put + Record("other", &v1) + Record("key", nullptr));
  Write(dir, "torn", put + put.substr(0, put.size() - 2));
}

// The store directory as an archive of its files.
std::string Archive(fakes::MemFileSystem& fs) {
  std::string out;
  const std::vector<std::string> names = *fs.ListDir(kDir);
  for (const std::string& name : names) {
    const std::string contents = *fs.ReadFile(std::string(kDir) + "/" + name);
    if (name == "MANIFEST") {
      AppendArchiveEntry(out, 0, contents);
    } else if (name == "MANIFEST.tmp") {
      AppendArchiveEntry(out, 7, contents);
    } else {
      for (uint32_t n = 1; n <= 4; ++n) {
        if (name == CanonicalSegmentName(n)) {
          AppendArchiveEntry(out, static_cast<uint8_t>(n), contents);
        }
      }
    }
  }
  return out;
}

// Runs `work` on a fresh store (closed afterwards unless it closed it) and archives the result.
std::string Store(const std::function<void(fakes::MemFileSystem&, LogStore&)>& work,
                  LogStoreOptions options = {}) {
  fakes::MemFileSystem fs;
  auto store = LogStore::Open(fs, kDir, "fuzz", options);
  work(fs, **store);
  (void)(*store)->Close();
  return Archive(fs);
}

void StoreCorpus(const std::string& dir) {
  Write(dir, "new", Store([](auto&, LogStore&) {}));
  const std::string flushed = Store([](auto&, LogStore& s) {
    (void)s.Put("a", "1");
    (void)s.Put("b", "2");
    (void)s.Delete("a");
    (void)s.Flush();
  });
  Write(dir, "flushed", flushed);
  Write(dir, "unflushed-tail", Store([](auto&, LogStore& s) {
    (void)s.Put("a", "1");
    (void)s.Flush();
    (void)s.Put("a", "2");
    (void)s.Put("c", "3");
  }));
  Write(dir, "reopened-three-times", Store([](fakes::MemFileSystem& fs, LogStore& first) {
    (void)first.Put("k0", "v0");
    (void)first.Flush();
    (void)first.Close();
    for (int i = 1; i < 3; ++i) {
      auto s = LogStore::Open(fs, kDir, "fuzz");
      (void)(*s)->Put("k" + std::to_string(i), "v");
      (void)(*s)->Flush();
      (void)(*s)->Close();
    }
  }));
  Write(dir, "compacted", Store([](auto&, LogStore& s) {
    for (int i = 0; i < 40; ++i) (void)s.Put("k" + std::to_string(i % 3), std::to_string(i));
    (void)s.Flush();
  }, {.compact_min_bytes = 64}));
  std::string flipped = flushed;
  flipped[flipped.size() - 5] ^= 0x10;  // in the segment's last record
  Write(dir, "flushed-bit-flip", flipped);
}

}  // namespace
}  // namespace restoresim::fuzz

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_corpus CORPUS_DIR (writes into its target folders)\n");
    return 2;
  }
  const std::string root = argv[1];
  restoresim::fuzz::CheckpointCorpus(root + "/checkpoint_fuzzer");
  restoresim::fuzz::RecordCorpus(root + "/log_record_fuzzer");
  restoresim::fuzz::StoreCorpus(root + "/log_store_fuzzer");
  return 0;
}
