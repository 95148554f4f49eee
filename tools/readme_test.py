#!/usr/bin/env python3
"""readme_test: README.md cannot drift from the binary (issue 24).

  * Counts: README.md must say how many scenarios, checkers and mutations there are ("N
    scenarios", ...), each at least once, and every such count must be the binary's (the same
    counting as tools/tidy: `restoresim scenarios --json`, `restoresim zoo --list` (or, for a
    binary without it, the `bug.*` programs, one per mutation) and the checkers of
    properties/checks/, one RESTORESIM_CHECKER each).
  * Example outputs: every ```console block is a transcript. Each `$ COMMAND` line is run (in a
    scratch folder where build/tools/restoresim is the binary under test, so the paths the
    binary prints are the README's; earlier commands of the document run first, so a later one
    finds the files they wrote) and what follows it, up to the next `$` line, must be its
    standard output, line by line, with three allowances: a line `...` stands for any number
    of lines; wall-clock figures (`0.52 s`, `812 runs/s`) match any number; trailing blanks
    are ignored. The exit code is not compared (a transcript may show a failing sweep).

usage: readme_test.py --root DIR --restoresim BIN [--readme FILE]
"""
import argparse
import difflib
import importlib.machinery
import importlib.util
import os
import pathlib
import re
import shlex
import subprocess
import sys
import tempfile

WALL = re.compile(r'\d+(?:\.\d+)?(?= s\b| runs/s\b| seeds/s\b)')
ELISION = '...'
COMMAND_SECONDS_MAX = 120


def load_tidy(root):
    path = root / 'tools' / 'tidy'
    loader = importlib.machinery.SourceFileLoader('tidy', str(path))
    spec = importlib.util.spec_from_loader('tidy', loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def check_counts(root, readme, binary, errors):
    tidy = load_tidy(root)
    counts = tidy.actual_counts(root, binary)
    if 'mutations' not in counts:
        # A binary without `zoo --list`: each mutation is one `bug.*` program (its zoo row).
        programs = tidy.scenario_programs(binary)
        counts['mutations'] = sum(1 for p in programs if p['name'].startswith('bug.'))
    said = {}
    for number, line in enumerate(readme.splitlines(), 1):
        for m in tidy.COUNT.finditer(line):
            what = m.group(2).lower()
            value = m.group(1).lower()
            value = tidy.WORDS.get(value) or int(value)
            said.setdefault(what, []).append((number, value))
    for what in ('scenarios', 'checkers', 'mutations'):
        if what not in counts:
            errors.append(f'README.md: cannot count {what} (binary too old?)')
            continue
        if what not in said:
            errors.append(f'README.md: says nowhere how many {what} there are '
                          f'(the binary has {counts[what]})')
        for number, value in said.get(what, []):
            if value != counts[what]:
                errors.append(f'README.md:{number}: says {value} {what}, the binary has '
                              f'{counts[what]}')


def transcripts(readme):
    """[(line number, command, [expected lines])] of every ```console block, in order."""
    out, block, current = [], False, None
    for number, line in enumerate(readme.splitlines(), 1):
        if line.strip() == '```console':
            block = True
            continue
        if block and line.strip() == '```':
            block, current = False, None
            continue
        if not block:
            continue
        if line.startswith('$ '):
            current = (number, line[2:].strip(), [])
            out.append(current)
        elif current is not None:
            current[2].append(line)
    return out


def normalised(line):
    return WALL.sub('#', line.rstrip())


def matches(expected, actual):
    """Whether the actual lines fit the expected ones ('...' elides any number of lines)."""
    expected = [normalised(e) for e in expected]
    actual = [normalised(a) for a in actual]
    while expected and expected[-1] == '':
        expected.pop()
    while actual and actual[-1] == '':
        actual.pop()

    def fit(i, j):
        if i == len(expected):
            return j == len(actual)
        if expected[i] == ELISION:
            return any(fit(i + 1, k) for k in range(j, len(actual) + 1))
        return j < len(actual) and expected[i] == actual[j] and fit(i + 1, j + 1)

    return fit(0, 0)


def check_transcripts(readme, binary, errors):
    found = transcripts(readme)
    if not found:
        errors.append('README.md: no ```console transcript to check')
        return
    with tempfile.TemporaryDirectory(prefix='readme-test-') as scratch:
        tools = pathlib.Path(scratch, 'build', 'tools')
        tools.mkdir(parents=True)
        os.symlink(os.path.abspath(binary), tools / 'restoresim')
        for number, command, expected in found:
            argv = shlex.split(command)
            if not argv or argv[0] != 'build/tools/restoresim':
                errors.append(f'README.md:{number}: transcripts run build/tools/restoresim '
                              f'only: {command}')
                continue
            done = subprocess.run(argv, cwd=scratch, capture_output=True, text=True,
                                  timeout=COMMAND_SECONDS_MAX)
            actual = done.stdout.splitlines()
            if not matches(expected, actual):
                diff = difflib.unified_diff(expected, actual, 'README.md', 'the binary',
                                            lineterm='', n=1)
                errors.append(f'README.md:{number}: `{command}` (exit {done.returncode}) '
                              f'prints otherwise (`...` lines show as removed):\n' +
                              '\n'.join(diff))


def main(argv):
    parser = argparse.ArgumentParser(description='README.md against the binary')
    parser.add_argument('--root', required=True)
    parser.add_argument('--restoresim', required=True)
    parser.add_argument('--readme', help='default: ROOT/README.md')
    args = parser.parse_args(argv)
    root = pathlib.Path(args.root).resolve()
    readme_path = pathlib.Path(args.readme) if args.readme else root / 'README.md'
    readme = readme_path.read_text(encoding='utf-8')
    errors = []
    check_counts(root, readme, args.restoresim, errors)
    check_transcripts(readme, args.restoresim, errors)
    for e in errors:
        print(e)
    print(f'readme_test: {len(errors)} problem(s)')
    return 1 if errors else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
