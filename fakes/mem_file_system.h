// MemFileSystem: the state directory under the simulator. An in-memory FileSystem with a crash
// model and injectable errors, so a scenario can crash and restart a runtime instance at any
// file-write point of checkpointing (LevelDB's FaultInjectionTestEnv, RocksDB's
// FaultInjectionTestFS).
//
// Crash model. Files and directories are inodes; each has a current and a durable version:
//  * File contents: Append changes the current contents; WritableFile::Sync makes them durable.
//    NewWritableFile on an existing file truncates the current contents only.
//  * Directory entries (which names exist and which inode each names): NewWritableFile,
//    RenameFile, DeleteFile and DeleteDirRecursively change the current entries; SyncDir(dir)
//    makes the current entries directly under `dir` durable (creations, deletions, renames into
//    and out of it). A rename is atomic in the current namespace; after a crash it is visible
//    only if its directories were synced after it. A rename across directories needs both
//    synced: syncing one only may leave the file under both names after a crash, or neither.
//  * Simplification: CreateDirIfMissing is durable at once (as if each new directory's entry
//    were synced immediately); so is a directory that replaces a deleted entry of that name.
//  * Crash(): every unsynced change is lost: each directory's entries become its durable ones,
//    each file's contents its durable contents. WritableFiles opened before it are dead: their
//    methods return kFailedPrecondition ("file handle from before a crash"); so are process
//    views made before it (NewProcessView), which is how a crashed runtime instance is fenced.
//
// Fault injection, decided by the RandomSource passed in (null: no faults, no draws; one draw in
// [0, 1000) per operation that may fail, the top `rate` answers injecting, so 0 is no fault). An
// injected fault replaces an operation that would otherwise have succeeded, changes nothing,
// carries TagInjected() and says "injected" in its message: Append and ReadFile fail with
// kUnavailable (nothing happened, a retry is safe); Sync, SyncDir and RenameFile with kInternal
// (the durable state is unchanged; callers should not assume a retry fixes it).
//
// Damage at a crash (MemFileSystemDamage; all 0 by default: no damage, no draws). At each
// Crash(), before the unsynced changes are dropped, every file and every durable directory
// entry, in inode order, may be damaged — one draw per kind whose rate is not 0, the top
// `rate` answers of 1000 damaging, so 0 is always "no damage":
//  * torn write: a file with unsynced appends keeps a drawn prefix of them (0: none of them);
//  * lost write: the file's last Sync never reached the disk (dropped by the device): its
//    durable contents are those of the Sync before;
//  * misdirected write: the file's last Sync reached the disk at the wrong place: the file keeps
//    the contents of the Sync before (as a lost write), and the bytes that Sync wrote (what it
//    appended, or the whole file if it rewrote it) land at the same offset in another file, one
//    drawn in inode order among the other files, overwriting what that file held there (never
//    growing it); with no other file the bytes are simply gone;
//  * bit flip: one drawn bit of the durable contents flips;
//  * zeroed sector: one drawn 512-byte sector of the durable contents reads as zeros;
//  * vanished entry: a durable directory entry (a file, or a directory with all below it)
//    disappears;
//  * lost directory update: a directory's last SyncDir never reached the disk: its durable
//    entries are those of the SyncDir before, naming the inodes they named then (a file
//    replaced by a rename comes back with its old contents, a directory deleted and made again
//    comes back as the old one: a stale copy of a store directory);
//  * wrong type: a durable directory entry naming a file names an empty directory instead
//    (what a special file — a directory, FIFO or device — in place of a file looks like to a
//    reader: ReadFile refuses it with kFailedPrecondition).
// Damage happens to the durable version only, so it shows after the crash, where a restarted
// instance recovers: the stores must detect it and restore from their changelogs.
//
// Mutation points: NewWritableFile ("create"), Append ("append"), Sync ("sync"), RenameFile
// ("rename", with the destination path), DeleteFile ("delete"), CreateDirIfMissing ("mkdir"),
// DeleteDirRecursively ("delete_dir") and SyncDir ("syncdir") each count one write_ops() and
// call the before-mutation hook first, with the lock released, so the hook may call Crash() or
// any other method (mutations it makes call it again). An operation whose hook crashed the file
// system does not happen: it fails with kFailedPrecondition, as if the process died before it.
// Calls on dead handles and dead process views (see NewProcessView) pass no mutation point.
//
// Paths: "/" separated; repeated and trailing slashes and "." are dropped and a relative path
// is taken from "/" (there is no working directory), so "//state/a/" names "/state/a". ".." is
// kInvalidArgument. Unlike POSIX, "file/" names the file. Otherwise errors match
// PosixFileSystem: kNotFound for a missing path or parent, kInternal for ENOTDIR, EISDIR,
// ENOTEMPTY and EINVAL cases, kAlreadyExists for CreateDirIfMissing over a file,
// kFailedPrecondition for reading a directory, DeleteDirRecursively of a file, or using a
// closed file. DeleteDirRecursively has no depth limit (no recursion, no descriptors).
//
// Determinism: entries are std::maps (byte order); inode ids are allocation order and never
// reused; inodes unreachable from "/" in both versions (and so unobservable, even through an
// open handle: appends to them are accepted and dropped) are freed lazily, but always before
// anything that could tell when (a crash's damage draws, inode_count), so every observable
// result is that of freeing them after each mutation.
//
// Thread-safety: thread-safe; one restoresim::Mutex guards everything, so under the simulator
// every operation is a scheduling point. A WritableFile is used by one thread at a time and must
// not outlive its MemFileSystem. The hook may run on several threads at once.
#ifndef RESTORESIM_FAKES_MEM_FILE_SYSTEM_H_
#define RESTORESIM_FAKES_MEM_FILE_SYSTEM_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "core/port/file_system.h"
#include "core/port/random.h"
#include "core/sync/mutex.h"

namespace restoresim::fakes {

// Rates of injected errors, per mille of the operations that would otherwise succeed.
struct MemFileSystemFaults {
  uint32_t append_error_per_mille = 0;
  uint32_t sync_error_per_mille = 0;  // WritableFile::Sync and SyncDir
  uint32_t rename_error_per_mille = 0;
  uint32_t read_error_per_mille = 0;
};

// Rates of damage at a crash, per mille of the files (or durable entries) it may hit.
struct MemFileSystemDamage {
  uint32_t torn_write_per_mille = 0;
  uint32_t lost_write_per_mille = 0;
  uint32_t misdirected_write_per_mille = 0;
  uint32_t bit_flip_per_mille = 0;
  uint32_t zeroed_sector_per_mille = 0;
  uint32_t vanished_entry_per_mille = 0;
  uint32_t lost_dir_update_per_mille = 0;  // per directory whose last SyncDir changed it
  uint32_t wrong_type_per_mille = 0;       // per durable entry naming a file
};

// What damage a Crash() did, for marks and tests.
struct MemFileSystemDamageDone {
  uint32_t torn_writes = 0;
  uint32_t lost_writes = 0;
  uint32_t misdirected_writes = 0;
  uint32_t bit_flips = 0;
  uint32_t zeroed_sectors = 0;
  uint32_t vanished_entries = 0;
  uint32_t lost_dir_updates = 0;
  uint32_t wrong_types = 0;
  uint32_t total() const {
    return torn_writes + lost_writes + misdirected_writes + bit_flips + zeroed_sectors +
           vanished_entries + lost_dir_updates + wrong_types;
  }
};

class MemFileSystem final : public FileSystem {
 public:
  using MutationHook = std::function<void(std::string_view op, const std::string& path)>;

  // `random` (may be null: no faults) must outlive this; it is used under the lock only.
  explicit MemFileSystem(RandomSource* random = nullptr, MemFileSystemFaults faults = {});
  ~MemFileSystem() override;
  MemFileSystem(const MemFileSystem&) = delete;
  MemFileSystem& operator=(const MemFileSystem&) = delete;

  absl::StatusOr<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& path) override;
  absl::StatusOr<std::string> ReadFile(const std::string& path) override;
  absl::Status FileExists(const std::string& path) override;
  absl::Status RenameFile(const std::string& from, const std::string& to) override;
  absl::Status DeleteFile(const std::string& path) override;
  absl::Status CreateDirIfMissing(const std::string& path) override;
  absl::Status DeleteDirRecursively(const std::string& path) override;
  absl::StatusOr<std::vector<std::string>> ListDir(const std::string& dir) override;
  absl::Status SyncDir(const std::string& dir) override;
  // Locks live beside the namespace, as the OS keeps them (no file is created, none is a
  // mutation point, none is a fault): a lock is held until its FileLock is destroyed or a
  // Crash() kills the process that took it. REQUIRES: this outlives its locks.
  absl::StatusOr<std::unique_ptr<FileLock>> LockFile(const std::string& path) override;

  // Loses every unsynced change (see the crash model above), after the damage the rates set
  // by SetDamage draw (see "Damage at a crash").
  void Crash();
  // REQUIRES: each rate <= 1000.
  void SetDamage(const MemFileSystemDamage& damage);
  // The damage the last Crash() did.
  MemFileSystemDamageDone last_damage();
  // Called at the start of every Crash() (the oracle forgets what the disk may have lost).
  // Set before the file system is used.
  void SetCrashObserver(std::function<void()> observer) { crash_observer_ = std::move(observer); }
  // The file system as one process (a runtime instance) sees it: the same files, but every
  // call (reads included) fails with kFailedPrecondition ("process view from before a crash")
  // once Crash() has been called after the view was made. Give each runtime instance its own
  // view, so that an instance which "died" in a crash, but whose threads still run, cannot
  // touch what its successor recovers. REQUIRES: this outlives the view.
  std::unique_ptr<FileSystem> NewProcessView();
  // Replaces the fault rates, e.g. to heal faults for a liveness phase. REQUIRES: each <= 1000.
  void SetFaults(const MemFileSystemFaults& faults);
  // Called before every mutation (see "Mutation points"); an empty function removes it.
  void SetBeforeMutationHook(MutationHook hook);

  // Observability for tests and oracles; none of these is a mutation point or injects faults.
  // Whether `path` (a file or a directory) exists in the current namespace.
  bool Exists(const std::string& path);
  // What ReadFile(path) would return after a crash now: the durable contents of the file the
  // durable namespace names `path`. kNotFound if there is none, kFailedPrecondition for a dir.
  absl::StatusOr<std::string> DurableContents(const std::string& path);
  // Mutation points passed so far, including operations that then failed.
  uint64_t write_ops();
  // Live inodes, "/" included: shows that replaced and deleted files are freed.
  size_t inode_count();

 private:
  class File;
  class ProcessView;
  using InodeId = uint64_t;
  // The `process` of an operation made through MemFileSystem itself rather than a view.
  static constexpr uint64_t kAnyProcess = UINT64_MAX;
  static constexpr InodeId kRootId = 0;
  enum class Version { kCurrent, kDurable };
  // A path's components, views into the caller's path string (which outlives them): splitting
  // a path allocates nothing for paths up to 8 deep.
  using Components = absl::InlinedVector<std::string_view, 8>;
  // Transparent: entries are looked up by a component's view.
  using Entries = std::map<std::string, InodeId, std::less<>>;

  struct Inode {
    bool is_dir = false;
    std::string current;                             // file contents now
    std::string durable;                             // file contents after a crash
    std::string previous_durable;  // before the last Sync (lost and misdirected writes)
    bool sync_undoable = false;    // previous_durable holds the version before the last Sync
                                   // (kept only while a damage may undo it; cleared at a crash)
    Entries current_entries;  // directory entries now
    Entries durable_entries;  // directory entries after a crash
    // Before the last SyncDir (lost directory updates); kept, and its inodes alive, only while
    // that damage may be drawn (cleared at a crash).
    Entries previous_durable_entries;
    bool dir_sync_undoable = false;
  };

  // Counts a mutation point and calls the hook without the lock, unless `process` (a view's or
  // a file handle's crash epoch, or kAnyProcess) is dead; returns the crash epoch seen first.
  uint64_t PassMutationPoint(uint64_t process, std::string_view op, const std::string& path)
      ABSL_LOCKS_EXCLUDED(mu_);
  // The operations, for the process view that lives in crash epoch `process` (or any).
  absl::StatusOr<std::unique_ptr<WritableFile>> NewWritableFileAs(uint64_t process,
                                                                  const std::string& path)
      ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<std::string> ReadFileAs(uint64_t process, const std::string& path)
      ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status FileExistsAs(uint64_t process, const std::string& path) ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status RenameFileAs(uint64_t process, const std::string& from, const std::string& to)
      ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status DeleteFileAs(uint64_t process, const std::string& path) ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status CreateDirIfMissingAs(uint64_t process, const std::string& path)
      ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status DeleteDirRecursivelyAs(uint64_t process, const std::string& path)
      ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<std::vector<std::string>> ListDirAs(uint64_t process, const std::string& dir)
      ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status SyncDirAs(uint64_t process, const std::string& dir) ABSL_LOCKS_EXCLUDED(mu_);
  // mem_file_system_lock.cc.
  class Lock;
  absl::StatusOr<std::unique_ptr<FileLock>> LockFileAs(uint64_t process, const std::string& path)
      ABSL_LOCKS_EXCLUDED(mu_);
  void UnlockFile(const std::string& path, uint64_t token) ABSL_LOCKS_EXCLUDED(mu_);

  // Fails the operation of a dead process view, or one whose mutation point (which saw
  // `epoch_seen`) crashed the file system.
  absl::Status CheckAlive(uint64_t process, uint64_t epoch_seen, std::string_view op,
                          std::string_view path) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Whether to inject a fault at `per_mille`; draws only when a fault is possible.
  bool Inject(uint32_t per_mille) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The inode `components` name in `version`, starting at "/".
  absl::StatusOr<InodeId> Lookup(const Components& components, size_t count,
                                 Version version, std::string_view op, const std::string& path)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The current directory holding the last of `components` (REQUIRES: not empty).
  absl::StatusOr<InodeId> LookupParentDir(const Components& components,
                                          std::string_view op, const std::string& path)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  using EntryIterator = Entries::iterator;
  // REQUIRES: `id` is live (checked).
  Inode& Node(InodeId id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The inode `id` if it is live, else null.
  Inode* FindNode(InodeId id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  InodeId NewInode(bool is_dir) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // RenameFile once the paths are split; `label` is "from -> to" for messages.
  absl::Status RenameLocked(const Components& from, const Components& to,
                            const std::string& label)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // POSIX's EISDIR/ENOTDIR/ENOTEMPTY/EINVAL checks for moving `source_id` onto `target` (the
  // existing entry at `to`, or `none`).
  absl::Status CheckRenameTarget(InodeId source_id, const Components& to,
                                 EntryIterator target, EntryIterator none, const std::string& label)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Removes the current entries of `dir` and of every directory below it.
  void ClearCurrentTree(InodeId dir) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Draws and applies the damage of a crash to the durable versions.
  void DamageDurable() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Undoes `node`'s last Sync and writes its bytes into another file (misdirected write).
  void MisdirectLastSync(InodeId id, Inode& node) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Draws a lost update of directory `node`'s last SyncDir, then vanished entries, then
  // entries of the wrong type.
  void DamageDirectory(Inode& node) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Frees every inode unreachable from "/" through current and durable entries (and the
  // entries a lost directory update may bring back).
  void CollectGarbage() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // After a change of the namespace (entries changed, so inodes may have become unreachable):
  // collects only once such changes outnumber the live inodes. Unreachable inodes never become
  // reachable again, so leaving them for later changes nothing that can be observed, provided
  // that whatever observes the live set calls CollectIfChanged first.
  void NamespaceChanged() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Collects if the namespace changed since the last collection: the live set is then exactly
  // what collecting after every change would leave.
  void CollectIfChanged() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // After a change that may remove or replace a current entry naming a directory (see
  // current_dirs_).
  void CurrentDirsChanged() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { current_dirs_.clear(); }

  // For File.
  absl::Status FileAppend(const File& file, std::string_view data) ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status FileSync(const File& file) ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status FileClose(const File& file) ABSL_LOCKS_EXCLUDED(mu_);

  Mutex mu_{"mem_file_system"};
  RandomSource* const random_;
  MemFileSystemFaults faults_ ABSL_GUARDED_BY(mu_);
  MemFileSystemDamage damage_ ABSL_GUARDED_BY(mu_);
  MemFileSystemDamageDone last_damage_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<const MutationHook> hook_ ABSL_GUARDED_BY(mu_);
  // Indexed by id (ids are dense and never reused); a freed inode leaves null, an unreachable
  // one not yet collected is still here. Iterating by index is inode order, as the damage
  // draws need (after CollectIfChanged).
  std::vector<std::unique_ptr<Inode>> inodes_ ABSL_GUARDED_BY(mu_);
  size_t live_inodes_ ABSL_GUARDED_BY(mu_) = 0;
  InodeId next_inode_id_ ABSL_GUARDED_BY(mu_) = kRootId;
  // CollectGarbage's scratch: reachable[id] for every id below next_inode_id_ (reused, so a
  // collection allocates nothing once it has grown).
  std::vector<uint8_t> gc_reachable_ ABSL_GUARDED_BY(mu_);
  std::vector<InodeId> gc_pending_ ABSL_GUARDED_BY(mu_);
  // Namespace changes since the last collection (see NamespaceChanged).
  size_t changes_since_gc_ ABSL_GUARDED_BY(mu_) = 0;
  // Current-version lookups that ended at a directory, by the span of the path that names it
  // (from its first component to the end of its last): every call resolves its parent
  // directory, which walked the string-keyed entries from "/" component by component. Only
  // such results are kept, so every entry on their way names a directory; those entries change
  // only by a rename of a directory, DeleteDirRecursively or a crash, which clear this
  // (CurrentDirsChanged). Looked up by key only, never iterated.
  absl::flat_hash_map<std::string, InodeId> current_dirs_ ABSL_GUARDED_BY(mu_);
  std::function<void()> crash_observer_;  // set once, before use
  uint64_t crash_epoch_ ABSL_GUARDED_BY(mu_) = 0;  // Crash() calls so far
  // Held file locks: the holder's token and the crash epoch it was taken in (void after).
  struct HeldLock {
    uint64_t token = 0;
    uint64_t epoch = 0;
  };
  std::map<std::string, HeldLock> locks_ ABSL_GUARDED_BY(mu_);
  uint64_t next_lock_token_ ABSL_GUARDED_BY(mu_) = 1;
  uint64_t write_ops_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace restoresim::fakes

#endif  // RESTORESIM_FAKES_MEM_FILE_SYSTEM_H_
