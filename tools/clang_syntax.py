#!/usr/bin/env python3
"""Runs clang's front end only (-fsyntax-only) over every C++ file of some folders, with the
flags meson gave it in BUILD_DIR/compile_commands.json, JOBS at a time; prints the diagnostics
of files that fail and exits 1 if any did.

  tools/clang_syntax.py build-clang --dir core --dir fakes --dir sim [--jobs 2]

Why: tools/test's clang configuration exists for -Wthread-safety (as errors), an analysis of
clang's semantic pass, which -fsyntax-only runs in full; optimising and emitting the objects,
archives and binaries of a whole build checked nothing more and was most of that step's time.
Exit status 2 when the build directory has no compile database or a folder matches no file (a
typo must not silently check nothing).
"""
import argparse
import json
import os
import shlex
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor


def syntax_only(command):
    """The compile command with its output and dependency-file arguments removed, and
    -fsyntax-only added: clang then writes nothing."""
    args = shlex.split(command)
    out = []
    skip = False
    for a in args:
        if skip:
            skip = False
            continue
        if a in ("-o", "-MF", "-MQ", "-MT"):
            skip = True
            continue
        if a in ("-MD", "-MMD"):
            continue
        out.append(a)
    return out + ["-fsyntax-only"]


def check(entry):
    proc = subprocess.run(syntax_only(entry["command"]), cwd=entry["directory"],
                          capture_output=True, text=True)
    return entry["file"], proc.returncode, proc.stderr


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("build_dir")
    parser.add_argument("--dir", action="append", default=[], required=True)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    if args.jobs < 1:
        parser.error("--jobs must be at least 1")
    database = os.path.join(args.build_dir, "compile_commands.json")
    try:
        with open(database) as f:
            entries = json.load(f)
    except (OSError, ValueError) as e:
        print(f"clang_syntax.py: cannot read {database}: {e}", file=sys.stderr)
        return 2
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    chosen = []
    for folder in args.dir:
        prefix = os.path.join(root, folder.strip("/")) + os.sep
        matched = [e for e in entries
                   if os.path.abspath(os.path.join(e["directory"], e["file"])).startswith(prefix)
                   and e["file"].endswith((".cc", ".cpp"))]
        if not matched:
            print(f"clang_syntax.py: no C++ file of {folder}/ in {database}", file=sys.stderr)
            return 2
        chosen.extend(matched)
    failed = 0
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for name, rc, err in pool.map(check, chosen):
            if rc != 0:
                failed += 1
                print(f"clang_syntax.py: {name} failed:\n{err}", file=sys.stderr)
    print(f"clang_syntax.py: {len(chosen)} files checked, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
