// Helpers shared by every FileSystem: the atomic-write protocol and the injected-fault tag.
#include "core/port/file_system.h"

#include <utility>

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "core/util/check.h"

namespace restoresim {
namespace {

// Abseil 20220623 (as Debian builds it) has its own absl::string_view, not std::string_view.
absl::string_view AbslView(std::string_view s) { return absl::string_view(s.data(), s.size()); }

// `status` with "<context>: " in front of its message; the code and payloads (the injected
// tag in particular) are kept, so annotating never hides where an error came from.
absl::Status Annotate(const absl::Status& status, std::string_view context) {
  absl::Status annotated(status.code(), absl::StrCat(AbslView(context), ": ", status.message()));
  status.ForEachPayload([&annotated](absl::string_view type_url, const absl::Cord& payload) {
    annotated.SetPayload(type_url, payload);
  });
  return annotated;
}

// The directory holding `path`, for SyncDir: "." for a bare name, "/" for a top-level entry.
std::string ParentDir(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// Creates `path`, writes `contents`, makes them durable and closes the file. The file is
// closed (best-effort) on every path, so the caller may delete it afterwards.
absl::Status WriteAndSync(FileSystem& fs, const std::string& path, std::string_view contents) {
  absl::StatusOr<std::unique_ptr<WritableFile>> file = fs.NewWritableFile(path);
  if (!file.ok()) return file.status();
  absl::Status status = (*file)->Append(contents);
  if (status.ok()) status = (*file)->Sync();
  if (!status.ok()) {
    (*file)->Close().IgnoreError();  // the first error is the one worth reporting
    return status;
  }
  return (*file)->Close();
}

}  // namespace

absl::Status WriteFileAtomically(FileSystem& fs, const std::string& path,
                                 std::string_view contents) {
  const std::string tmp_path = path + ".tmp";
  const std::string context = "write atomically " + path;
  absl::Status status = WriteAndSync(fs, tmp_path, contents);
  if (status.ok()) status = fs.RenameFile(tmp_path, path);
  if (!status.ok()) {
    // Best-effort: the temp file may not exist (creation failed), and a failure to delete it
    // must not mask the error that matters.
    fs.DeleteFile(tmp_path).IgnoreError();
    return Annotate(status, context);
  }
  // The rename is only durable once the directory entry is.
  status = fs.SyncDir(ParentDir(path));
  if (!status.ok()) return Annotate(status, context);
  return absl::OkStatus();
}

absl::Status TagInjected(absl::Status status) {
  // An OK status cannot carry a payload: tagging one is an injector bug.
  RS_CHECK(!status.ok(), "TagInjected on an OK status");
  status.SetPayload(AbslView(kInjectedFaultPayload), absl::Cord("1"));
  return status;
}

bool IsInjected(const absl::Status& status) {
  return status.GetPayload(AbslView(kInjectedFaultPayload)).has_value();
}

}  // namespace restoresim
