#include "fakes/mem_file_system.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <utility>

#include "core/util/check.h"

namespace restoresim::fakes {
namespace {

// strerror(3) texts, so messages read like PosixFileSystem's.
constexpr std::string_view kNoEntry = "No such file or directory";
constexpr std::string_view kNotDir = "Not a directory";
constexpr std::string_view kIsDir = "Is a directory";
constexpr std::string_view kExists = "File exists";
constexpr std::string_view kNotEmpty = "Directory not empty";
constexpr std::string_view kInvalid = "Invalid argument";
constexpr std::string_view kBusy = "Device or resource busy";

constexpr uint32_t kPerMille = 1000;

absl::Status FsError(absl::StatusCode code, std::string_view op, std::string_view path,
                     std::string_view reason) {
  return absl::Status(code, fmt::format("{} {}: {}", op, path, reason));
}

absl::Status Injected(absl::StatusCode code, std::string_view op, std::string_view path) {
  return TagInjected(FsError(code, op, path, "injected I/O error"));
}

// The operation's mutation point crashed the file system: the process "died" before it.
absl::Status CrashedBefore(std::string_view op, std::string_view path) {
  return FsError(absl::StatusCode::kFailedPrecondition, op, path,
                 "the file system crashed before this operation");
}

// MemFileSystem::Components.
using PathParts = absl::InlinedVector<std::string_view, 8>;

// The components of `path`, views into it: "" is kNotFound (as open("") is ENOENT), ".."
// kInvalidArgument.
absl::StatusOr<PathParts> SplitPath(std::string_view op, const std::string& path) {
  if (path.empty()) return FsError(absl::StatusCode::kNotFound, op, path, kNoEntry);
  // Every file-system call splits its path: no allocation below 9 components.
  PathParts components;
  const std::string_view p(path);
  size_t start = 0;
  while (start <= p.size()) {
    size_t end = p.find('/', start);
    if (end == std::string_view::npos) end = p.size();
    const std::string_view component = p.substr(start, end - start);
    if (component == "..") {
      return FsError(absl::StatusCode::kInvalidArgument, op, path, "'..' is not supported");
    }
    if (!component.empty() && component != ".") components.emplace_back(component);
    start = end + 1;
  }
  return components;
}

// "/a/b" for the first `count` components.
std::string JoinPath(const PathParts& components, size_t count) {
  if (count == 0) return "/";
  std::string path;
  for (size_t i = 0; i < count; ++i) path.append(1, '/').append(components[i]);
  return path;
}

std::string JoinPath(const PathParts& components) {
  return JoinPath(components, components.size());
}

// JoinPath(components) for the `components` of `path`: `path` itself when it already is that
// (the common case; every mutation point passes the normal path, and building it allocated),
// else built in `storage`. `path` holds each component in order, each after at least one '/'
// when it starts with one, so it has exactly the normal length only when it is the normal path.
const std::string& NormalPath(const std::string& path, const PathParts& components,
                              std::string& storage) {
  size_t normal_size = components.empty() ? 1 : 0;
  for (std::string_view component : components) normal_size += 1 + component.size();
  if (path.size() == normal_size && path.front() == '/') return path;
  storage = JoinPath(components);
  return storage;
}

}  // namespace

// A handle on one file inode, valid until Close() or the next Crash().
class MemFileSystem::File final : public WritableFile {
 public:
  File(MemFileSystem* fs, InodeId inode, uint64_t crash_epoch, std::string path)
      : fs_(fs), inode_(inode), crash_epoch_(crash_epoch), path_(std::move(path)) {}

  absl::Status Append(std::string_view data) override {
    if (closed_) return ClosedError("append");
    return fs_->FileAppend(*this, data);
  }
  absl::Status Sync() override {
    if (closed_) return ClosedError("sync");
    return fs_->FileSync(*this);
  }
  absl::Status Close() override {
    if (closed_) return ClosedError("close");
    closed_ = true;
    return fs_->FileClose(*this);
  }

  InodeId inode() const { return inode_; }
  uint64_t crash_epoch() const { return crash_epoch_; }
  const std::string& path() const { return path_; }

 private:
  absl::Status ClosedError(std::string_view op) const {
    return FsError(absl::StatusCode::kFailedPrecondition, op, path_, "file is closed");
  }

  MemFileSystem* const fs_;
  const InodeId inode_;
  const uint64_t crash_epoch_;  // the file system's crash epoch when this was opened
  const std::string path_;
  bool closed_ = false;
};

namespace {

absl::Status DeadHandle(std::string_view op, const std::string& path) {
  return FsError(absl::StatusCode::kFailedPrecondition, op, path,
                 "file handle from before a crash");
}

absl::Status DeadProcess(std::string_view op, std::string_view path) {
  return FsError(absl::StatusCode::kFailedPrecondition, op, path,
                 "process view from before a crash");
}

}  // namespace

// The file system as one process sees it (see NewProcessView).
class MemFileSystem::ProcessView final : public FileSystem {
 public:
  ProcessView(MemFileSystem* fs, uint64_t process) : fs_(fs), process_(process) {}

  absl::StatusOr<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& path) override {
    return fs_->NewWritableFileAs(process_, path);
  }
  absl::StatusOr<std::string> ReadFile(const std::string& path) override {
    return fs_->ReadFileAs(process_, path);
  }
  absl::Status FileExists(const std::string& path) override {
    return fs_->FileExistsAs(process_, path);
  }
  absl::Status RenameFile(const std::string& from, const std::string& to) override {
    return fs_->RenameFileAs(process_, from, to);
  }
  absl::Status DeleteFile(const std::string& path) override {
    return fs_->DeleteFileAs(process_, path);
  }
  absl::Status CreateDirIfMissing(const std::string& path) override {
    return fs_->CreateDirIfMissingAs(process_, path);
  }
  absl::Status DeleteDirRecursively(const std::string& path) override {
    return fs_->DeleteDirRecursivelyAs(process_, path);
  }
  absl::StatusOr<std::vector<std::string>> ListDir(const std::string& dir) override {
    return fs_->ListDirAs(process_, dir);
  }
  absl::Status SyncDir(const std::string& dir) override { return fs_->SyncDirAs(process_, dir); }
  absl::StatusOr<std::unique_ptr<FileLock>> LockFile(const std::string& path) override {
    return fs_->LockFileAs(process_, path);
  }

 private:
  MemFileSystem* const fs_;
  const uint64_t process_;  // the crash epoch this process lives in
};

MemFileSystem::MemFileSystem(RandomSource* random, MemFileSystemFaults faults) : random_(random) {
  SetFaults(faults);
  MutexLock lock(mu_);
  RS_CHECK(NewInode(/*is_dir=*/true) == kRootId);
}

MemFileSystem::~MemFileSystem() = default;

std::unique_ptr<FileSystem> MemFileSystem::NewProcessView() {
  MutexLock lock(mu_);
  return std::make_unique<ProcessView>(this, crash_epoch_);
}

absl::StatusOr<std::unique_ptr<WritableFile>> MemFileSystem::NewWritableFile(
    const std::string& path) {
  return NewWritableFileAs(kAnyProcess, path);
}
absl::StatusOr<std::string> MemFileSystem::ReadFile(const std::string& path) {
  return ReadFileAs(kAnyProcess, path);
}
absl::Status MemFileSystem::FileExists(const std::string& path) {
  return FileExistsAs(kAnyProcess, path);
}
absl::Status MemFileSystem::RenameFile(const std::string& from, const std::string& to) {
  return RenameFileAs(kAnyProcess, from, to);
}
absl::Status MemFileSystem::DeleteFile(const std::string& path) {
  return DeleteFileAs(kAnyProcess, path);
}
absl::Status MemFileSystem::CreateDirIfMissing(const std::string& path) {
  return CreateDirIfMissingAs(kAnyProcess, path);
}
absl::Status MemFileSystem::DeleteDirRecursively(const std::string& path) {
  return DeleteDirRecursivelyAs(kAnyProcess, path);
}
absl::StatusOr<std::vector<std::string>> MemFileSystem::ListDir(const std::string& dir) {
  return ListDirAs(kAnyProcess, dir);
}
absl::Status MemFileSystem::SyncDir(const std::string& dir) { return SyncDirAs(kAnyProcess, dir); }

void MemFileSystem::SetFaults(const MemFileSystemFaults& faults) {
  for (uint32_t rate : {faults.append_error_per_mille, faults.sync_error_per_mille,
                        faults.rename_error_per_mille, faults.read_error_per_mille}) {
    RS_CHECK_LE(rate, kPerMille, "fault rate {} per mille", rate);
  }
  MutexLock lock(mu_);
  faults_ = faults;
}

void MemFileSystem::SetBeforeMutationHook(MutationHook hook) {
  std::shared_ptr<const MutationHook> shared;
  if (hook) shared = std::make_shared<const MutationHook>(std::move(hook));
  MutexLock lock(mu_);
  hook_ = std::move(shared);
}

uint64_t MemFileSystem::PassMutationPoint(uint64_t process, std::string_view op,
                                          const std::string& path) {
  std::shared_ptr<const MutationHook> hook;
  uint64_t epoch;
  {
    MutexLock lock(mu_);
    epoch = crash_epoch_;
    // A dead process or handle cannot mutate anything: no point to pass (its call then fails).
    if (process != kAnyProcess && process != crash_epoch_) return epoch;
    ++write_ops_;
    hook = hook_;
  }
  if (hook != nullptr) (*hook)(op, path);  // unlocked: the hook may call Crash()
  return epoch;
}

absl::Status MemFileSystem::CheckAlive(uint64_t process, uint64_t epoch_seen, std::string_view op,
                                       std::string_view path) {
  if (process != kAnyProcess && process != crash_epoch_) return DeadProcess(op, path);
  if (epoch_seen != crash_epoch_) return CrashedBefore(op, path);
  return absl::OkStatus();
}

bool MemFileSystem::Inject(uint32_t per_mille) {
  // The top `per_mille` answers of 1000 inject: the answer 0 is "no fault" below 1000 per mille.
  return random_ != nullptr && per_mille > 0 &&
         random_->Uniform(kPerMille) >= kPerMille - per_mille;
}

MemFileSystem::Inode* MemFileSystem::FindNode(InodeId id) {
  return id < inodes_.size() ? inodes_[id].get() : nullptr;
}

MemFileSystem::Inode& MemFileSystem::Node(InodeId id) {
  Inode* node = FindNode(id);
  RS_CHECK(node != nullptr, "inode {} was freed while reachable", id);
  return *node;
}

MemFileSystem::InodeId MemFileSystem::NewInode(bool is_dir) {
  RS_CHECK_EQ(inodes_.size(), next_inode_id_);
  const InodeId id = next_inode_id_++;
  inodes_.push_back(std::make_unique<Inode>());
  inodes_.back()->is_dir = is_dir;
  ++live_inodes_;
  return id;
}

absl::StatusOr<MemFileSystem::InodeId> MemFileSystem::Lookup(
    const Components& components, size_t count, Version version, std::string_view op,
    const std::string& path) {
  RS_CHECK_LE(count, components.size());
  if (count == 0) return kRootId;
  // The components are views into one path: this span names exactly them (see current_dirs_).
  const std::string_view span(components[0].data(), static_cast<size_t>(
      components[count - 1].data() + components[count - 1].size() - components[0].data()));
  const bool cacheable = version == Version::kCurrent;
  if (cacheable) {
    // (absl's string hash takes its own string_view, a distinct type in this build.)
    if (auto cached = current_dirs_.find(absl::string_view(span.data(), span.size()));
        cached != current_dirs_.end()) {
      RS_CHECK(Node(cached->second).is_dir, "cached directory {} is not one", span);
      return cached->second;
    }
  }
  InodeId id = kRootId;
  for (size_t i = 0; i < count; ++i) {
    const Inode& dir = Node(id);
    if (!dir.is_dir) return FsError(absl::StatusCode::kInternal, op, path, kNotDir);
    const auto& entries = version == Version::kCurrent ? dir.current_entries : dir.durable_entries;
    auto it = entries.find(components[i]);
    if (it == entries.end()) return FsError(absl::StatusCode::kNotFound, op, path, kNoEntry);
    id = it->second;
  }
  if (cacheable && Node(id).is_dir) current_dirs_.emplace(std::string(span), id);
  return id;
}

absl::StatusOr<MemFileSystem::InodeId> MemFileSystem::LookupParentDir(
    const Components& components, std::string_view op, const std::string& path) {
  RS_CHECK(!components.empty());
  absl::StatusOr<InodeId> parent =
      Lookup(components, components.size() - 1, Version::kCurrent, op, path);
  if (parent.ok() && !Node(*parent).is_dir) {
    return FsError(absl::StatusCode::kInternal, op, path, kNotDir);
  }
  return parent;
}

void MemFileSystem::ClearCurrentTree(InodeId dir) {
  std::vector<InodeId> pending = {dir};
  std::set<InodeId> seen = {dir};  // a crash can alias a directory under two names
  while (!pending.empty()) {
    Inode& node = Node(pending.back());
    pending.pop_back();
    for (const auto& [name, child] : node.current_entries) {
      if (Node(child).is_dir && seen.insert(child).second) pending.push_back(child);
    }
    node.current_entries.clear();
  }
}

void MemFileSystem::NamespaceChanged() {
  // Lazy: an unreachable inode stays unreachable (every entry a change writes names a new
  // inode or one read from a reachable directory's entries), and the observers of the live
  // set collect first (CollectIfChanged). Collecting once the changes since the last
  // collection outnumber the live inodes bounds the garbage held and keeps the marking
  // amortised O(1) per change.
  if (++changes_since_gc_ > live_inodes_) CollectGarbage();
}

void MemFileSystem::CollectIfChanged() {
  if (changes_since_gc_ > 0) CollectGarbage();
  RS_CHECK_EQ(changes_since_gc_, 0u);
}

void MemFileSystem::CollectGarbage() {
  // Marks by id in a flat array (ids are dense: handed out in order from kRootId), then frees
  // what no version of any directory names. No allocation per collection, no tree of marks.
  changes_since_gc_ = 0;
  gc_reachable_.assign(next_inode_id_, 0);
  gc_reachable_[kRootId] = 1;
  gc_pending_.assign(1, kRootId);
  while (!gc_pending_.empty()) {
    const Inode& node = Node(gc_pending_.back());
    gc_pending_.pop_back();
    for (const auto* entries :
         {&node.current_entries, &node.durable_entries, &node.previous_durable_entries}) {
      for (const auto& [name, child] : *entries) {
        if (gc_reachable_[child] == 0) {
          gc_reachable_[child] = 1;
          gc_pending_.push_back(child);
        }
      }
    }
  }
  for (InodeId id = 0; id < inodes_.size(); ++id) {
    if (inodes_[id] != nullptr && gc_reachable_[id] == 0) {
      inodes_[id].reset();
      --live_inodes_;
    }
  }
  RS_CHECK(inodes_[kRootId] != nullptr && live_inodes_ <= inodes_.size());
}

absl::Status MemFileSystem::FileAppend(const File& file, std::string_view data) {
  PassMutationPoint(file.crash_epoch(), "append", file.path());
  MutexLock lock(mu_);
  if (file.crash_epoch() != crash_epoch_) return DeadHandle("append", file.path());
  if (Inject(faults_.append_error_per_mille)) {
    return Injected(absl::StatusCode::kUnavailable, "append", file.path());
  }
  // A freed inode had no name in either version: the data could never be read back (nor can
  // it be from an unreachable one not yet collected).
  if (Inode* node = FindNode(file.inode()); node != nullptr) node->current.append(data);
  return absl::OkStatus();
}

absl::Status MemFileSystem::FileSync(const File& file) {
  PassMutationPoint(file.crash_epoch(), "sync", file.path());
  MutexLock lock(mu_);
  if (file.crash_epoch() != crash_epoch_) return DeadHandle("sync", file.path());
  if (Inject(faults_.sync_error_per_mille)) {
    return Injected(absl::StatusCode::kInternal, "fsync", file.path());
  }
  if (Inode* node = FindNode(file.inode()); node != nullptr) {
    // The version before it is kept only while a damage that undoes a Sync may be drawn.
    node->sync_undoable =
        damage_.lost_write_per_mille > 0 || damage_.misdirected_write_per_mille > 0;
    if (node->sync_undoable) {
      node->previous_durable = std::move(node->durable);
    } else {
      node->previous_durable.clear();
    }
    node->durable = node->current;
  }
  return absl::OkStatus();
}

absl::Status MemFileSystem::FileClose(const File& file) {
  MutexLock lock(mu_);
  if (file.crash_epoch() != crash_epoch_) return DeadHandle("close", file.path());
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<WritableFile>> MemFileSystem::NewWritableFileAs(
    uint64_t process, const std::string& path) {
  absl::StatusOr<Components> components = SplitPath("open", path);
  if (!components.ok()) return components.status();
  if (components->empty()) return FsError(absl::StatusCode::kInternal, "open", path, kIsDir);
  std::string joined;
  const std::string normal = NormalPath(path, *components, joined);
  const uint64_t epoch = PassMutationPoint(process, "create", normal);
  MutexLock lock(mu_);
  if (absl::Status s = CheckAlive(process, epoch, "open", path); !s.ok()) return s;
  absl::StatusOr<InodeId> parent = LookupParentDir(*components, "open", path);
  if (!parent.ok()) return parent.status();
  auto& entries = Node(*parent).current_entries;
  InodeId id;
  if (auto it = entries.find(components->back()); it != entries.end()) {
    Inode& existing = Node(it->second);
    if (existing.is_dir) return FsError(absl::StatusCode::kInternal, "open", path, kIsDir);
    existing.current.clear();  // O_TRUNC; the durable contents stay until a Sync
    id = it->second;
  } else {
    id = NewInode(/*is_dir=*/false);
    entries.emplace(components->back(), id);
  }
  return std::unique_ptr<WritableFile>(std::make_unique<File>(this, id, crash_epoch_, normal));
}

absl::StatusOr<std::string> MemFileSystem::ReadFileAs(uint64_t process, const std::string& path) {
  absl::StatusOr<Components> components = SplitPath("open", path);
  if (!components.ok()) return components.status();
  MutexLock lock(mu_);
  if (absl::Status s = CheckAlive(process, crash_epoch_, "open", path); !s.ok()) return s;
  absl::StatusOr<InodeId> id =
      Lookup(*components, components->size(), Version::kCurrent, "open", path);
  if (!id.ok()) return id.status();
  const Inode& file = Node(*id);
  if (file.is_dir) {
    return FsError(absl::StatusCode::kFailedPrecondition, "read", path, "not a regular file");
  }
  if (Inject(faults_.read_error_per_mille)) {
    return Injected(absl::StatusCode::kUnavailable, "read", path);
  }
  return file.current;
}

absl::Status MemFileSystem::FileExistsAs(uint64_t process, const std::string& path) {
  absl::StatusOr<Components> components = SplitPath("stat", path);
  if (!components.ok()) return components.status();
  MutexLock lock(mu_);
  if (absl::Status s = CheckAlive(process, crash_epoch_, "stat", path); !s.ok()) return s;
  return Lookup(*components, components->size(), Version::kCurrent, "stat", path).status();
}

absl::Status MemFileSystem::RenameFileAs(uint64_t process, const std::string& from,
                                         const std::string& to) {
  const std::string label = fmt::format("{} -> {}", from, to);
  absl::StatusOr<Components> from_components = SplitPath("rename", from);
  absl::StatusOr<Components> to_components = SplitPath("rename", to);
  if (!from_components.ok()) return from_components.status();
  if (!to_components.ok()) return to_components.status();
  if (from_components->empty() || to_components->empty()) {
    return FsError(absl::StatusCode::kInternal, "rename", label, kBusy);
  }
  std::string joined;
  const uint64_t epoch =
      PassMutationPoint(process, "rename", NormalPath(to, *to_components, joined));
  MutexLock lock(mu_);
  if (absl::Status s = CheckAlive(process, epoch, "rename", label); !s.ok()) return s;
  return RenameLocked(*from_components, *to_components, label);
}

absl::Status MemFileSystem::RenameLocked(const Components& from, const Components& to,
                                         const std::string& label) {
  absl::StatusOr<InodeId> from_parent = LookupParentDir(from, "rename", label);
  if (!from_parent.ok()) return from_parent.status();
  absl::StatusOr<InodeId> to_parent = LookupParentDir(to, "rename", label);
  if (!to_parent.ok()) return to_parent.status();
  auto& from_entries = Node(*from_parent).current_entries;
  auto source = from_entries.find(from.back());
  if (source == from_entries.end()) {
    return FsError(absl::StatusCode::kNotFound, "rename", label, kNoEntry);
  }
  const InodeId source_id = source->second;
  auto& to_entries = Node(*to_parent).current_entries;
  auto target = to_entries.find(to.back());
  if (target != to_entries.end() && target->second == source_id) {
    return absl::OkStatus();  // the same file: POSIX does nothing
  }
  if (absl::Status status = CheckRenameTarget(source_id, to, target, to_entries.end(), label);
      !status.ok()) {
    return status;
  }
  if (Inject(faults_.rename_error_per_mille)) {
    return Injected(absl::StatusCode::kInternal, "rename", label);
  }
  // A moved (or replaced, which only a directory may be) directory changes cached paths.
  if (Node(source_id).is_dir) CurrentDirsChanged();
  from_entries.erase(source);  // leaves `target` valid: it is another entry
  to_entries.insert_or_assign(std::string(to.back()), source_id);
  NamespaceChanged();
  return absl::OkStatus();
}

absl::Status MemFileSystem::CheckRenameTarget(InodeId source_id, const Components& to,
                                              EntryIterator target, EntryIterator none,
                                              const std::string& label) {
  if (!Node(source_id).is_dir) {
    if (target != none && Node(target->second).is_dir) {
      return FsError(absl::StatusCode::kInternal, "rename", label, kIsDir);
    }
    return absl::OkStatus();
  }
  // A directory may not move below itself (checked by inode: a crash can alias directories).
  for (size_t count = 1; count < to.size(); ++count) {
    absl::StatusOr<InodeId> id = Lookup(to, count, Version::kCurrent, "rename", label);
    if (id.ok() && *id == source_id) {
      return FsError(absl::StatusCode::kInternal, "rename", label, kInvalid);
    }
  }
  if (target == none) return absl::OkStatus();
  const Inode& replaced = Node(target->second);
  if (!replaced.is_dir) return FsError(absl::StatusCode::kInternal, "rename", label, kNotDir);
  if (!replaced.current_entries.empty()) {
    return FsError(absl::StatusCode::kInternal, "rename", label, kNotEmpty);
  }
  return absl::OkStatus();
}

absl::Status MemFileSystem::DeleteFileAs(uint64_t process, const std::string& path) {
  absl::StatusOr<Components> components = SplitPath("unlink", path);
  if (!components.ok()) return components.status();
  if (components->empty()) return FsError(absl::StatusCode::kInternal, "unlink", path, kIsDir);
  std::string joined;
  const uint64_t epoch =
      PassMutationPoint(process, "delete", NormalPath(path, *components, joined));
  MutexLock lock(mu_);
  if (absl::Status s = CheckAlive(process, epoch, "unlink", path); !s.ok()) return s;
  absl::StatusOr<InodeId> parent = LookupParentDir(*components, "unlink", path);
  if (!parent.ok()) return parent.status();
  auto& entries = Node(*parent).current_entries;
  auto it = entries.find(components->back());
  if (it == entries.end()) return FsError(absl::StatusCode::kNotFound, "unlink", path, kNoEntry);
  if (Node(it->second).is_dir) return FsError(absl::StatusCode::kInternal, "unlink", path, kIsDir);
  entries.erase(it);
  NamespaceChanged();
  return absl::OkStatus();
}

absl::Status MemFileSystem::CreateDirIfMissingAs(uint64_t process, const std::string& path) {
  if (path.empty()) return absl::InvalidArgumentError("create dir: empty path");
  absl::StatusOr<Components> components = SplitPath("mkdir", path);
  if (!components.ok()) return components.status();
  std::string joined;
  const uint64_t epoch =
      PassMutationPoint(process, "mkdir", NormalPath(path, *components, joined));
  MutexLock lock(mu_);
  if (absl::Status s = CheckAlive(process, epoch, "mkdir", path); !s.ok()) return s;
  InodeId dir = kRootId;
  for (size_t i = 0; i < components->size(); ++i) {
    const std::string_view name = (*components)[i];
    auto& entries = Node(dir).current_entries;
    if (auto it = entries.find(name); it != entries.end()) {
      if (!Node(it->second).is_dir) {
        return FsError(absl::StatusCode::kAlreadyExists, "mkdir", JoinPath(*components, i + 1),
                       kExists);
      }
      dir = it->second;
      continue;
    }
    const InodeId created = NewInode(/*is_dir=*/true);
    Inode& parent = Node(dir);
    parent.current_entries.insert_or_assign(std::string(name), created);
    // The simplification: durable at once.
    parent.durable_entries.insert_or_assign(std::string(name), created);
    dir = created;
  }
  NamespaceChanged();  // a durable entry of that name (deleted, unsynced) may have been replaced
  return absl::OkStatus();
}

absl::Status MemFileSystem::DeleteDirRecursivelyAs(uint64_t process, const std::string& path) {
  absl::StatusOr<Components> components = SplitPath("delete dir", path);
  if (absl::IsNotFound(components.status())) return absl::OkStatus();
  if (!components.ok()) return components.status();
  if (components->empty()) return FsError(absl::StatusCode::kInternal, "rmdir", path, kBusy);
  std::string joined;
  const uint64_t epoch =
      PassMutationPoint(process, "delete_dir", NormalPath(path, *components, joined));
  MutexLock lock(mu_);
  if (absl::Status s = CheckAlive(process, epoch, "delete dir", path); !s.ok()) return s;
  absl::StatusOr<InodeId> parent = LookupParentDir(*components, "stat", path);
  if (absl::IsNotFound(parent.status())) return absl::OkStatus();
  if (!parent.ok()) return parent.status();
  auto& entries = Node(*parent).current_entries;
  auto it = entries.find(components->back());
  if (it == entries.end()) return absl::OkStatus();
  const InodeId dir = it->second;
  if (!Node(dir).is_dir) {
    return FsError(absl::StatusCode::kFailedPrecondition, "delete dir", path, "not a directory");
  }
  entries.erase(it);
  ClearCurrentTree(dir);
  CurrentDirsChanged();
  NamespaceChanged();
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::string>> MemFileSystem::ListDirAs(uint64_t process,
                                                                  const std::string& dir) {
  absl::StatusOr<Components> components = SplitPath("opendir", dir);
  if (!components.ok()) return components.status();
  MutexLock lock(mu_);
  if (absl::Status s = CheckAlive(process, crash_epoch_, "opendir", dir); !s.ok()) return s;
  absl::StatusOr<InodeId> id =
      Lookup(*components, components->size(), Version::kCurrent, "opendir", dir);
  if (!id.ok()) return id.status();
  const Inode& node = Node(*id);
  if (!node.is_dir) return FsError(absl::StatusCode::kInternal, "opendir", dir, kNotDir);
  std::vector<std::string> names;
  names.reserve(node.current_entries.size());
  for (const auto& [name, child] : node.current_entries) names.push_back(name);
  return names;  // std::map order: sorted by byte value
}

absl::Status MemFileSystem::SyncDirAs(uint64_t process, const std::string& dir) {
  absl::StatusOr<Components> components = SplitPath("open", dir);
  if (!components.ok()) return components.status();
  std::string joined;
  const uint64_t epoch =
      PassMutationPoint(process, "syncdir", NormalPath(dir, *components, joined));
  MutexLock lock(mu_);
  if (absl::Status s = CheckAlive(process, epoch, "fsync", dir); !s.ok()) return s;
  absl::StatusOr<InodeId> id =
      Lookup(*components, components->size(), Version::kCurrent, "open", dir);
  if (!id.ok()) return id.status();
  Inode& node = Node(*id);
  if (!node.is_dir) return FsError(absl::StatusCode::kInternal, "open", dir, kNotDir);
  if (Inject(faults_.sync_error_per_mille)) {
    return Injected(absl::StatusCode::kInternal, "fsync", dir);
  }
  // The entries before it are kept only while a damage that undoes a SyncDir may be drawn.
  node.dir_sync_undoable = damage_.lost_dir_update_per_mille > 0;
  if (node.dir_sync_undoable) {
    node.previous_durable_entries = std::move(node.durable_entries);
  } else {
    node.previous_durable_entries.clear();
  }
  node.durable_entries = node.current_entries;
  NamespaceChanged();
  RS_CHECK(node.dir_sync_undoable || node.previous_durable_entries.empty());
  return absl::OkStatus();
}

void MemFileSystem::SetDamage(const MemFileSystemDamage& damage) {
  RS_CHECK(damage.torn_write_per_mille <= kPerMille && damage.lost_write_per_mille <= kPerMille &&
               damage.bit_flip_per_mille <= kPerMille &&
               damage.zeroed_sector_per_mille <= kPerMille &&
               damage.vanished_entry_per_mille <= kPerMille &&
               damage.lost_dir_update_per_mille <= kPerMille &&
               damage.wrong_type_per_mille <= kPerMille,
           "damage rates are per mille");
  MutexLock lock(mu_);
  damage_ = damage;
}

MemFileSystemDamageDone MemFileSystem::last_damage() {
  MutexLock lock(mu_);
  return last_damage_;
}

void MemFileSystem::DamageDurable() {
  last_damage_ = {};
  constexpr size_t kSector = 512;
  // By index, re-reading the size: a wrong-type damage adds inodes, visited too (as a map's
  // iteration visited them).
  for (InodeId id = 0; id < inodes_.size(); ++id) {
    if (inodes_[id] == nullptr) continue;
    Inode& node = *inodes_[id];
    if (node.is_dir) {
      DamageDirectory(node);
      continue;
    }
    const bool appended = node.current.size() > node.durable.size() &&
                          std::string_view(node.current).starts_with(node.durable);
    if (appended && Inject(damage_.torn_write_per_mille)) {
      const size_t unsynced = node.current.size() - node.durable.size();
      node.durable = node.current.substr(0, node.durable.size() + random_->Uniform(unsynced));
      ++last_damage_.torn_writes;
    }
    const bool undoable = node.sync_undoable && node.durable != node.previous_durable;
    node.sync_undoable = false;  // after this crash, the durable version is the base
    if (undoable && Inject(damage_.lost_write_per_mille)) {
      node.durable = node.previous_durable;
      ++last_damage_.lost_writes;
    }
    if (undoable && node.durable != node.previous_durable &&
        Inject(damage_.misdirected_write_per_mille)) {
      MisdirectLastSync(id, node);
      ++last_damage_.misdirected_writes;
    }
    if (!node.durable.empty() && Inject(damage_.bit_flip_per_mille)) {
      const size_t at = random_->Uniform(node.durable.size());
      node.durable[at] = static_cast<char>(node.durable[at] ^ (1 << random_->Uniform(8)));
      ++last_damage_.bit_flips;
    }
    if (!node.durable.empty() && Inject(damage_.zeroed_sector_per_mille)) {
      const size_t sectors = (node.durable.size() + kSector - 1) / kSector;
      const size_t from = random_->Uniform(sectors) * kSector;
      const size_t to = std::min(node.durable.size(), from + kSector);
      std::fill(node.durable.begin() + static_cast<ptrdiff_t>(from),
                node.durable.begin() + static_cast<ptrdiff_t>(to), '\0');
      ++last_damage_.zeroed_sectors;
    }
  }
}

void MemFileSystem::DamageDirectory(Inode& node) {
  RS_CHECK(node.is_dir);
  const bool undoable =
      node.dir_sync_undoable && node.durable_entries != node.previous_durable_entries;
  if (undoable && Inject(damage_.lost_dir_update_per_mille)) {
    node.durable_entries = node.previous_durable_entries;
    ++last_damage_.lost_dir_updates;
  }
  // After this crash, the durable entries are the base (the inodes kept for the lost update
  // are collected at the end of the crash).
  node.dir_sync_undoable = false;
  node.previous_durable_entries.clear();
  for (auto it = node.durable_entries.begin(); it != node.durable_entries.end();) {
    if (Inject(damage_.vanished_entry_per_mille)) {
      it = node.durable_entries.erase(it);
      ++last_damage_.vanished_entries;
    } else {
      ++it;
    }
  }
  for (auto& [name, child] : node.durable_entries) {
    if (!Node(child).is_dir && Inject(damage_.wrong_type_per_mille)) {
      child = NewInode(/*is_dir=*/true);  // map insertion: `node` and the loop stay valid
      ++last_damage_.wrong_types;
    }
  }
}

void MemFileSystem::MisdirectLastSync(InodeId id, Inode& node) {
  // The bytes the last Sync wrote: what it appended, or the whole file if it rewrote it.
  const bool appended = std::string_view(node.durable).starts_with(node.previous_durable);
  const size_t offset = appended ? node.previous_durable.size() : 0;
  const std::string written = node.durable.substr(offset);
  node.durable = node.previous_durable;
  std::vector<InodeId> others;
  for (InodeId other = 0; other < inodes_.size(); ++other) {
    if (other != id && inodes_[other] != nullptr && !inodes_[other]->is_dir) {
      others.push_back(other);
    }
  }
  if (others.empty()) return;
  std::string& target = Node(others[random_->Uniform(others.size())]).durable;
  if (offset >= target.size()) return;
  const size_t n = std::min(written.size(), target.size() - offset);
  target.replace(offset, n, written, 0, n);
}

void MemFileSystem::Crash() {
  if (crash_observer_) crash_observer_();
  MutexLock lock(mu_);
  ++crash_epoch_;
  // The damage draws visit the live inodes in order (and a misdirected write picks among them):
  // the live set must be exactly what collecting after every change would leave.
  CollectIfChanged();
  DamageDurable();
  CurrentDirsChanged();  // every current entry becomes the durable one
  for (const std::unique_ptr<Inode>& node : inodes_) {
    if (node == nullptr) continue;
    if (node->is_dir) {
      node->current_entries = node->durable_entries;
    } else {
      node->current = node->durable;
    }
  }
  CollectGarbage();
}

bool MemFileSystem::Exists(const std::string& path) {
  absl::StatusOr<Components> components = SplitPath("stat", path);
  if (!components.ok()) return false;
  MutexLock lock(mu_);
  return Lookup(*components, components->size(), Version::kCurrent, "stat", path).ok();
}

absl::StatusOr<std::string> MemFileSystem::DurableContents(const std::string& path) {
  absl::StatusOr<Components> components = SplitPath("open", path);
  if (!components.ok()) return components.status();
  MutexLock lock(mu_);
  absl::StatusOr<InodeId> id =
      Lookup(*components, components->size(), Version::kDurable, "open", path);
  if (!id.ok()) return id.status();
  const Inode& file = Node(*id);
  if (file.is_dir) {
    return FsError(absl::StatusCode::kFailedPrecondition, "read", path, "not a regular file");
  }
  return file.durable;
}

uint64_t MemFileSystem::write_ops() {
  MutexLock lock(mu_);
  return write_ops_;
}

size_t MemFileSystem::inode_count() {
  MutexLock lock(mu_);
  CollectIfChanged();
  return live_inodes_;
}

}  // namespace restoresim::fakes
