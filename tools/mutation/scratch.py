"""The scratch copy a mutant is built in: never the real source tree, never its build dir.

A scratch is a plain copy of the source files (those git tracks or would track; no .git:
nothing in it can be committed) and of the part of the real build dir that `tools/restoresim`
needs (its objects and static libraries, build.ninja, ninja's log and deps, meson's private
files). Like /work/clone-worktree.sh, the copy's absolute paths are rewritten to the
scratch's, and the scratch's path has exactly the length of the source root's, so meson's
pickled files stay valid and a regeneration in the scratch works. So a mutant costs one file
recompiled, the static library re-archived and restoresim relinked, all inside the scratch.

The default scratch is /tmp/rsm<hash of the root and a slot>, padded to the root's length;
concurrent runs (shards on one machine) take different slots, each under an flock. A scratch
is kept between runs: each run copies again only the source files whose contents differ, so
a mutated file left behind by a killed run is restored before anything is built.
"""

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import time

MARKER = ".restoresim-mutation-scratch"
SCRATCH_PREFIX = "/tmp/rsm"
SLOTS_MAX = 16
TARGET = "tools/restoresim"
# Build files copied besides the target's inputs (the directories in full).
BUILD_STATE = ("build.ninja", ".ninja_log", ".ninja_deps", "compile_commands.json")
BUILD_STATE_DIRS = ("meson-private", "meson-info")
BUILD_LOG_TAIL_CHARS = 4000


class ScratchError(Exception):
    """The scratch cannot be set up (a missing build, a path that does not fit, a lock)."""


def default_path(root, slot):
    need = len(root) - len(SCRATCH_PREFIX)
    if need < 2:
        raise ScratchError(f"the source root {root} is too short for a scratch of the same "
                           f"length under {SCRATCH_PREFIX}: pass --scratch DIR "
                           f"({len(root)} characters)")
    digest = hashlib.sha256(f"{root}\0{slot}".encode()).hexdigest()
    return SCRATCH_PREFIX + (digest + "x" * need)[:need]


def _same_file_contents(a, b):
    try:
        if os.path.getsize(a) != os.path.getsize(b):
            return False
        with open(a, "rb") as fa, open(b, "rb") as fb:
            return fa.read() == fb.read()
    except OSError:
        return False


class Scratch:
    """One locked scratch copy of (root, build)."""

    def __init__(self, root, build, path):
        self.root = os.path.realpath(root)
        self.build = os.path.realpath(build)
        self.path = path
        self._lock = None
        if len(self.path) != len(self.root):
            raise ScratchError(f"scratch {self.path} ({len(self.path)} characters) must have "
                               f"the length of the source root {self.root} ({len(self.root)})")
        if self.path == self.root or self.path.startswith(self.root + os.sep):
            raise ScratchError(f"scratch {self.path} must be outside the source root")
        if not os.path.isfile(os.path.join(self.build, "build.ninja")):
            raise ScratchError(f"no build in {self.build} (build.ninja missing): run "
                               f"`tools/run` or `meson setup build && ninja -C build` first")
        if not self.build.startswith(self.root + os.sep):
            raise ScratchError(f"the build dir {self.build} must be inside {self.root}")

    @property
    def build_dir(self):
        return os.path.join(self.path, os.path.relpath(self.build, self.root))

    @property
    def binary(self):
        return os.path.join(self.build_dir, TARGET)

    def try_lock(self):
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        f = open(self.path + ".lock", "w")
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            f.close()
            return False
        self._lock = f
        return True

    def _check_owner(self):
        marker = os.path.join(self.path, MARKER)
        if os.path.exists(self.path) and os.listdir(self.path):
            owner = open(marker).read().strip() if os.path.exists(marker) else None
            if owner != self.root:
                raise ScratchError(f"{self.path} exists and is not a mutation scratch of "
                                   f"{self.root} (its {MARKER} says {owner!r})")
            return True
        os.makedirs(self.path, exist_ok=True)
        with open(marker, "w") as f:
            f.write(self.root + "\n")
        return False

    def prepare(self, log):
        """Copies (first time) or refreshes the scratch; builds the unmutated target."""
        existed = self._check_owner()
        if not existed or not os.path.isfile(os.path.join(self.build_dir, "build.ninja")):
            log(f"copying {self.build} into the scratch {self.path} (first use)")
            self._copy_build()
        self._compile_file_by_file(log)
        changed = self.sync_sources()
        if changed:
            log(f"scratch: {changed} source files refreshed from {self.root}")
        ok, output = self.build_target()
        if not ok:
            raise ScratchError(f"the unmutated source does not build in {self.build_dir}:\n"
                               f"{output[-BUILD_LOG_TAIL_CHARS:]}")

    def tracked_files(self):
        try:
            # Tracked files and new ones not ignored: the working tree as a build sees it.
            out = subprocess.run(["git", "-C", self.root, "ls-files", "-z", "--cached",
                                  "--others", "--exclude-standard"], check=True,
                                 capture_output=True).stdout
        except (OSError, subprocess.CalledProcessError) as e:
            raise ScratchError(f"git ls-files in {self.root} failed: {e}") from e
        return [p for p in out.decode().split("\0") if p]

    def sync_sources(self):
        """Copies each tracked file whose contents differ (fresh mtime: ninja rebuilds)."""
        changed = 0
        for rel in self.tracked_files():
            src = os.path.join(self.root, rel)
            dst = os.path.join(self.path, rel)
            if not os.path.isfile(src) or os.path.islink(src):
                continue
            if _same_file_contents(src, dst):
                continue
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            if os.path.exists(dst):
                shutil.copyfile(src, dst)  # a fresh mtime: ninja rebuilds what uses it
                shutil.copymode(src, dst)
            else:
                shutil.copy2(src, dst)  # the first copy keeps mtimes, as the build saw them
            changed += 1
        return changed

    def _target_inputs(self):
        out = subprocess.run(["ninja", "-C", self.build, "-t", "inputs", TARGET], check=True,
                             capture_output=True, text=True).stdout
        return [p for p in out.split() if not p.startswith(("/", "../"))]

    def _copy_build(self):
        files = self._target_inputs() + [TARGET]
        for rel in files + list(BUILD_STATE):
            src = os.path.join(self.build, rel)
            if os.path.isfile(src):
                self._copy_build_file(src, os.path.join(self.build_dir, rel),
                                      rewrite=rel in BUILD_STATE)
        for d in BUILD_STATE_DIRS:
            base = os.path.join(self.build, d)
            for dirpath, _, names in os.walk(base):
                for name in names:
                    src = os.path.join(dirpath, name)
                    dst = os.path.join(self.build_dir, os.path.relpath(src, self.build))
                    self._copy_build_file(src, dst, rewrite=True)

    def _copy_build_file(self, src, dst, rewrite):
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copy2(src, dst)
        if not rewrite or os.path.basename(src) in (".ninja_deps", ".ninja_log"):
            return
        with open(dst, "rb") as f:
            data = f.read()
        old, new = self.root.encode(), self.path.encode()
        if old in data:  # same length: pickles and offsets stay valid
            with open(dst, "wb") as f:
                f.write(data.replace(old, new))
            st = os.stat(src)
            os.utime(dst, ns=(st.st_atime_ns, st.st_mtime_ns))

    def _compile_file_by_file(self, log):
        """Turns the scratch's unity build off (meson.build compiles eight files as one): a
        mutant then recompiles its own file, and object_of finds it. Once per scratch: the
        first build after it compiles the target file by file."""
        proc = subprocess.run(["meson", "introspect", "--buildoptions", self.build_dir],
                              capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            raise ScratchError(f"meson introspect of {self.build_dir} failed: {proc.stderr}")
        options = {o["name"]: o["value"] for o in json.loads(proc.stdout)}
        if options.get("unity", "off") == "off":
            return
        log(f"scratch: unity build off in {self.build_dir} (the first build compiles "
            f"{TARGET} file by file)")
        proc = subprocess.run(["meson", "configure", self.build_dir, "-Dunity=off"],
                              capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            raise ScratchError(f"meson configure -Dunity=off in {self.build_dir} failed: "
                               f"{proc.stderr}")

    def build_target(self):
        """Runs ninja for the target; returns (ok, output)."""
        proc = subprocess.run(["ninja", "-C", self.build_dir, TARGET], capture_output=True,
                              text=True, check=False)
        return proc.returncode == 0, proc.stdout + proc.stderr

    def object_of(self, rel_source):
        with open(os.path.join(self.build_dir, "compile_commands.json")) as f:
            for entry in json.load(f):
                if os.path.normpath(os.path.join(entry["directory"], entry["file"])) == \
                        os.path.join(self.path, rel_source):
                    return os.path.join(self.build_dir, entry["output"])
        raise ScratchError(f"{rel_source} is not compiled in {self.build_dir}")

    def write_source(self, rel, text):
        path = os.path.join(self.path, rel)
        assert path.startswith(self.path + os.sep)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        # A new mtime even within the same clock tick as the last build.
        now = time.time_ns()
        os.utime(path, ns=(now, now))

    def restore_source(self, rel):
        src = os.path.join(self.root, rel)
        with open(src, encoding="utf-8") as f:
            self.write_source(rel, f.read())


def acquire(root, build, explicit_path, log):
    """A locked, prepared scratch: --scratch DIR, or the first free default slot."""
    candidates = [explicit_path] if explicit_path else [
        default_path(os.path.realpath(root), slot) for slot in range(SLOTS_MAX)]
    for path in candidates:
        s = Scratch(root, build, path)
        if s.try_lock():
            s.prepare(log)
            return s
    raise ScratchError(f"every scratch slot is in use ({', '.join(candidates[:2])}, ...)")


def object_digest(path):
    """sha256 of an object file without its debug sections (line tables move with the
    source's text, the code does not)."""
    with tempfile.TemporaryDirectory(prefix="rsm-obj-") as tmp:
        stripped = os.path.join(tmp, "o.o")
        subprocess.run(["objcopy", "--strip-debug", path, stripped], check=True,
                       capture_output=True)
        with open(stripped, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()
