#!/usr/bin/env python3
"""Prints the ninja targets (paths relative to the build directory) that a partial build needs,
from meson's introspection, one per line. tools/test uses it so that the sanitizer and clang
configurations compile only what they run or check, not the whole tree.

  tools/build_targets.py BUILD_DIR --suite core --suite sim   # what those suites' tests run
  tools/build_targets.py BUILD_DIR --dir core --dir fakes     # every target defined in those
                                                              # folders' meson.build files
Exit status 2 with a message when the build directory has no introspection data or a suite or
folder matches nothing (a typo must not silently build nothing).
"""
import argparse
import json
import os
import subprocess
import sys


def introspect(build_dir, what):
    try:
        out = subprocess.run(["meson", "introspect", build_dir, what], check=True,
                             capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        sys.exit(f"build_targets.py: cannot introspect {build_dir}: {e}")
    return json.loads(out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("build_dir")
    parser.add_argument("--suite", action="append", default=[])
    parser.add_argument("--dir", action="append", default=[])
    args = parser.parse_args()
    build_dir = os.path.abspath(args.build_dir)
    targets = introspect(build_dir, "--targets")
    by_id = {t["id"]: t for t in targets}

    def relative(path):
        return os.path.relpath(path, build_dir)

    wanted = []
    for suite in args.suite:
        found = False
        for test in introspect(build_dir, "--tests"):
            if not any(s == suite or s.endswith(":" + suite) for s in test["suite"]):
                continue
            found = True
            for dep in test.get("depends", []):
                if dep in by_id:
                    wanted.extend(relative(f) for f in by_id[dep]["filename"])
            cmd = os.path.abspath(test["cmd"][0])
            if cmd.startswith(build_dir + os.sep):
                wanted.append(relative(cmd))
        if not found:
            print(f"build_targets.py: no test in suite '{suite}'", file=sys.stderr)
            sys.exit(2)
    for folder in args.dir:
        meson_file = os.path.join(folder.rstrip("/"), "meson.build")
        matched = [t for t in targets if t["defined_in"].endswith(os.sep + meson_file)]
        if not matched:
            print(f"build_targets.py: no target defined in {meson_file}", file=sys.stderr)
            sys.exit(2)
        for t in matched:
            wanted.extend(relative(f) for f in t["filename"])
    seen = set()
    for w in wanted:
        if w not in seen:
            seen.add(w)
            print(w)


if __name__ == "__main__":
    main()
