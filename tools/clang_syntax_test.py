#!/usr/bin/env python3
"""Tests of tools/clang_syntax.py on a small tree: a clean file passes, a thread-safety
violation fails with its diagnostic (so the check cannot pass by checking nothing), and a folder
with no file or a missing compile database is refused with exit 2.

  clang_syntax_test.py CLANG_SYNTAX_PY
Skips (exit 77, meson's skip) when clang++ is not installed.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

GOOD = """struct __attribute__((capability("mutex"))) M {
  void lock() __attribute__((acquire_capability()));
  void unlock() __attribute__((release_capability()));
};
struct S { M m; int x __attribute__((guarded_by(m))); void f() { m.lock(); x = 1; m.unlock(); } };
"""
BAD = GOOD.replace("m.lock(); x = 1; m.unlock();", "x = 1;")


def run(script, build, *args):
    return subprocess.run([sys.executable, script, build, *args], capture_output=True, text=True)


def main():
    script = os.path.abspath(sys.argv[1])
    if shutil.which("clang++") is None:
        print("clang++ not installed")
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        # The script takes folders relative to the tree it lives in: copy it into a fake tree.
        tree = os.path.join(tmp, "tree")
        os.makedirs(os.path.join(tree, "tools"))
        os.makedirs(os.path.join(tree, "core"))
        os.makedirs(os.path.join(tree, "sim"))
        shutil.copy(script, os.path.join(tree, "tools"))
        local = os.path.join(tree, "tools", os.path.basename(script))
        build = os.path.join(tree, "build")
        os.makedirs(build)
        for name, text in (("core/good.cc", GOOD), ("sim/bad.cc", BAD)):
            with open(os.path.join(tree, name), "w") as f:
                f.write(text)
        flags = "clang++ -std=c++20 -Wthread-safety -Werror=thread-safety -MD -MQ x.o -MF x.o.d"
        db = [{"directory": build, "file": "../" + name,
               "command": f"{flags} -o {name}.o -c ../{name}"} for name in ("core/good.cc",
                                                                             "sim/bad.cc")]
        with open(os.path.join(build, "compile_commands.json"), "w") as f:
            json.dump(db, f)
        ok = run(local, build, "--dir", "core")
        assert ok.returncode == 0, ok
        assert "1 files checked, 0 failed" in ok.stdout, ok.stdout
        assert not any(n.endswith((".o", ".d")) for n in os.listdir(build)), os.listdir(build)
        bad = run(local, build, "--dir", "core", "--dir", "sim")
        assert bad.returncode == 1, bad
        assert "requires holding mutex 'm'" in bad.stderr, bad.stderr
        assert "2 files checked, 1 failed" in bad.stdout, bad.stdout
        none = run(local, build, "--dir", "fakes")
        assert none.returncode == 2 and "no C++ file of fakes/" in none.stderr, none
        missing = run(local, os.path.join(tmp, "nowhere"), "--dir", "core")
        assert missing.returncode == 2 and "cannot read" in missing.stderr, missing
    print("clang_syntax_test: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
