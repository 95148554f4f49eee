// Fuzzes LogStore::Open (core/state/log_store.h): recovery from whatever a store directory
// holds. The input is a directory (store_archive.h): a manifest, segment files and strays,
// written into the in-memory file system (fakes/mem_file_system.h), tried as given and with
// the manifest's and the records' checksums repaired (so that mutations reach the entry and
// record checks and the replay). The expected result comes from a model of the format written
// here from the headers' promises, not from LogStore's code:
//   * segment files without a manifest, more segment files than segments_max, a manifest that
//     does not decode, a listed segment with flushed bytes that is missing or shorter than
//     them, a record below the flushed length that does not decode (with the salt the
//     manifest gives its segment; version 1 manifests give none): kDataLoss (a segment
//     numbered in the upper half of the range is no damage: the open renumbers);
//   * otherwise the store holds exactly the fold of the records below each listed segment's
//     flushed length, in order; nothing else (unflushed tails, unlisted segments, strays: a
//     file is a segment only under the name LogStore gives it, "segment-00000007.log").
// The contract checked: Open gives what the model expects (never a crash, never another
// error, never a record it does not hold); an opened store reopens after a clean close with
// the same contents; and a write and a delete flushed after opening survive a crash.
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/state/log_record.h"
#include "core/state/log_store.h"
#include "core/state/log_store_manifest.h"
#include "core/util/stable_hash.h"
#include "fakes/mem_file_system.h"
#include "fuzz/fuzz_check.h"
#include "fuzz/log_record_repair.h"
#include "fuzz/store_archive.h"

namespace restoresim::fuzz {
namespace {

using Contents = std::map<std::string, std::string>;
constexpr const char* kDir = "/state/0_0/fuzz";
constexpr LogStoreOptions kOptions = {
    .compact_min_bytes = 64, .segments_max = 8, .segments_compact_at = 3};

struct Expected {
  bool data_loss = false;
  Contents contents;
};

// Folds the records of the first `flushed` bytes of `segment` into `out`; false if one of
// them does not decode with the segment's salt.
bool Fold(std::string_view segment, uint64_t flushed, uint64_t salt, Contents& out) {
  std::string_view in = segment.substr(0, flushed);
  while (!in.empty()) {
    DecodedLogRecord r;
    if (DecodeLogRecord(in, r, salt) != DecodeResult::kOk) return false;
    if (r.value) {
      out[std::string(r.key)] = std::string(*r.value);
    } else {
      out.erase(std::string(r.key));
    }
    in.remove_prefix(r.bytes);
  }
  return true;
}

Expected Model(const std::vector<ArchiveFile>& files) {
  const std::string* manifest = nullptr;
  std::map<uint32_t, const std::string*> segments;
  for (const ArchiveFile& f : files) {
    if (f.name == kLogStoreManifestName) manifest = &f.contents;
    if (f.segment) segments[*f.segment] = &f.contents;
  }
  Expected loss{.data_loss = true};
  if (segments.size() > kOptions.segments_max) return loss;
  if (manifest == nullptr) return segments.empty() ? Expected{} : loss;
  absl::StatusOr<LogStoreManifest> decoded =
      DecodeLogStoreManifest(*manifest, kOptions.segments_max);
  if (!decoded.ok()) return loss;
  const std::vector<LogSegmentEntry>* listed = &decoded->segments;
  Expected want;
  for (const LogSegmentEntry& e : *listed) {
    const auto it = segments.find(e.number);
    if (it == segments.end()) {
      if (e.flushed_bytes == 0) continue;
      return loss;
    }
    if (it->second->size() < e.flushed_bytes) return loss;
    if (!Fold(*it->second, e.flushed_bytes, e.salt, want.contents)) return loss;
  }
  return want;
}

// The manifest with a correct checksum line (log_store_manifest.cc hashes the text before it):
// a last line starting with "checksum" is replaced, otherwise one is added.
std::string ResealManifest(std::string_view text) {
  if (text.ends_with('\n')) text.remove_suffix(1);
  const size_t last = text.rfind('\n');
  const std::string_view last_line = last == std::string_view::npos ? text : text.substr(last + 1);
  if (last_line.starts_with("checksum")) {
    text = last == std::string_view::npos ? std::string_view() : text.substr(0, last);
  }
  const std::string body = text.empty() ? std::string() : std::string(text) + "\n";
  StableHash h;
  h.AddString(body);
  return body + fmt::format("checksum {:016x}\n", h.Value());
}

std::unique_ptr<LogStore> OpenOrDie(FileSystem& fs, const char* when) {
  absl::StatusOr<std::unique_ptr<LogStore>> store = LogStore::Open(fs, kDir, "fuzz", kOptions);
  FUZZ_CHECK(store.ok(), "{}: {}", when, store.status().ToString());
  return std::move(*store);
}

Contents ReadAllOrDie(LogStore& store) {
  absl::StatusOr<std::map<std::string, std::string>> all = store.ReadAll();
  FUZZ_CHECK(all.ok(), "{}", all.status().ToString());
  FUZZ_CHECK(all->size() == store.NumEntries(), "{} entries, {} read", store.NumEntries(),
             all->size());
  return *all;
}

void CheckOpen(const std::vector<ArchiveFile>& files) {
  fakes::MemFileSystem fs;
  FUZZ_CHECK(fs.CreateDirIfMissing(kDir).ok());
  for (const ArchiveFile& f : files) {
    auto file = fs.NewWritableFile(std::string(kDir) + "/" + f.name);
    FUZZ_CHECK(file.ok() && (*file)->Append(f.contents).ok() && (*file)->Sync().ok() &&
               (*file)->Close().ok());
  }
  FUZZ_CHECK(fs.SyncDir(kDir).ok());
  const Expected want = Model(files);
  absl::StatusOr<std::unique_ptr<LogStore>> opened = LogStore::Open(fs, kDir, "fuzz", kOptions);
  if (want.data_loss) {
    FUZZ_CHECK(!opened.ok(), "opened a store the model calls damaged ({} entries)",
               (*opened)->NumEntries());
    FUZZ_CHECK(absl::IsDataLoss(opened.status()), "{}", opened.status().ToString());
    return;
  }
  FUZZ_CHECK(opened.ok(), "the model opens it: {}", opened.status().ToString());
  std::unique_ptr<LogStore> store = std::move(*opened);
  FUZZ_CHECK(ReadAllOrDie(*store) == want.contents, "holds other entries than the model's");
  // A clean close and restart changes nothing.
  FUZZ_CHECK(store->Close().ok());
  store = OpenOrDie(fs, "reopen after a clean close");
  FUZZ_CHECK(ReadAllOrDie(*store) == want.contents, "reopened with other entries");
  // What is flushed after opening survives a crash.
  Contents after = want.contents;
  if (!after.empty()) {
    FUZZ_CHECK(store->Delete(after.begin()->first).ok());
    after.erase(after.begin());
  }
  FUZZ_CHECK(store->Put("fuzz-key", "fuzz-value").ok() && store->Flush().ok());
  after["fuzz-key"] = "fuzz-value";
  fs.Crash();
  store.reset();
  store = OpenOrDie(fs, "reopen after a flush and a crash");
  FUZZ_CHECK(ReadAllOrDie(*store) == after, "lost flushed writes in a crash");
}

// The archive with its checksums repaired: the manifest's, then each segment's records' for the
// salt the repaired manifest gives it (none if it lists no salt or does not decode).
void Repair(std::vector<ArchiveFile>& files) {
  std::map<uint32_t, uint64_t> salts;
  for (ArchiveFile& f : files) {
    if (f.name != kLogStoreManifestName) continue;
    f.contents = ResealManifest(f.contents);
    absl::StatusOr<LogStoreManifest> listed = DecodeLogStoreManifest(f.contents, UINT32_MAX);
    if (listed.ok()) {
      for (const LogSegmentEntry& e : listed->segments) salts[e.number] = e.salt;
    }
  }
  for (ArchiveFile& f : files) {
    if (!f.segment) continue;
    const auto it = salts.find(*f.segment);
    RepairRecordChecksums(f.contents, 0, f.contents.size(), it == salts.end() ? 0 : it->second);
  }
}

}  // namespace
}  // namespace restoresim::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace restoresim::fuzz;
  std::vector<ArchiveFile> files =
      ParseStoreArchive(std::string_view(reinterpret_cast<const char*>(data), size));
  CheckOpen(files);
  Repair(files);
  CheckOpen(files);
  return 0;
}
