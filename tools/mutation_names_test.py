#!/usr/bin/env python3
"""One spelling per mutation name (issue 24), against the binary and the sources:

  * `restoresim zoo --list` names every mutation once, in lowercase words joined by '-';
  * its programs are `bug.` and the name with '_' for '-' (`restoresim scenarios --json`), one
    per mutation;
  * docs/ZOO.md's table names exactly those mutations;
  * the docs, the README and the tests name a mutation only so: never with '_' outside its
    program's name, never a program `bug.` with '-' (a repro file's "-seedN" suffix aside);
  * the other spelling is refused, with the one to use named: `zoo --mutations` and `soak
    --mutation` given a name with '_' or a program's name exit 2 naming the '-' spelling.

usage: mutation_names_test.py --root DIR --restoresim BIN
Exit 0 when every check holds, 1 listing the failures.
"""
import argparse
import json
import pathlib
import re
import subprocess
import sys

NAME = re.compile(r'^[a-z0-9]+(-[a-z0-9]+)*$')
SOURCES = ('README.md', 'docs/*.md', '**/*_test.cc', '**/*_test.py', 'tools/mutation/*.py')


def run(binary, *args):
    return subprocess.run([binary, *args], capture_output=True, text=True, check=False)


def check_binary(binary, names, failures):
    if len(set(names)) != len(names) or not names:
        failures.append(f'zoo --list: {len(names)} names, {len(set(names))} distinct')
    failures.extend(f'zoo --list: {n!r} is not words joined by "-"'
                    for n in names if not NAME.match(n))
    programs = json.loads(run(binary, 'scenarios', '--json').stdout)['programs']
    bugs = {p['name'] for p in programs if p['name'].startswith('bug.')}
    wanted = {'bug.' + n.replace('-', '_') for n in names}
    if bugs != wanted:
        failures.append(f'bug programs differ from the mutations: only programs '
                        f'{sorted(bugs - wanted)}, only mutations {sorted(wanted - bugs)}')


def check_refused(binary, names, failures):
    name = next(n for n in names if '-' in n)
    program = 'bug.' + name.replace('-', '_')
    for args in (['zoo', '--mutations', name.replace('-', '_')], ['zoo', '--mutations', program],
                 ['zoo', '--mutations', '_'.join(name.split('-')[:2]) + '*'],
                 ['soak', '--mutation', name.replace('-', '_')]):
        done = run(binary, *args)
        given = args[-1]
        canonical = given.removeprefix('bug.').replace('_', '-')
        if done.returncode != 2 or f"spelled with '-': give '{canonical}'" not in done.stderr:
            failures.append(f'restoresim {" ".join(args)}: exit {done.returncode}, '
                            f'{done.stderr.strip()!r}: not refused naming {canonical!r}')
    done = run(binary, 'zoo', '--mutations', 'no_such_mutation')
    if done.returncode != 2 or 'spelled with' in done.stderr:
        failures.append(f'zoo --mutations no_such_mutation: {done.stderr.strip()!r}')


def check_sources(root, names, failures):
    zoo = (root / 'docs/ZOO.md').read_text()
    in_table = set(re.findall(r'^\| `([a-z0-9-]+)` \|', zoo, re.M))
    if in_table != set(names):
        failures.append(f'docs/ZOO.md table: only there {sorted(in_table - set(names))}, '
                        f'missing {sorted(set(names) - in_table)}')
    underscored = {n.replace('-', '_'): n for n in names if '-' in n}
    files = sorted({p for pattern in SOURCES for p in root.glob(pattern)
                    if not any(part.startswith('build') for part in p.relative_to(root).parts)})
    for path in files:
        for number, line in enumerate(path.read_text(errors='replace').splitlines(), 1):
            where = f'{path.relative_to(root)}:{number}'
            for m in re.finditer(r'bug\.([a-z0-9_-]+)', line):
                program = re.sub(r'-seed\d+$', '', m.group(1))
                if '-' in program and program in names:
                    failures.append(f'{where}: bug.{program}: programs are spelled with "_"')
            for word in re.findall(r'(?<![\w.])([a-z0-9]+(?:_[a-z0-9]+)+)(?!\w)', line):
                if word in underscored:
                    failures.append(f'{where}: {word}: the mutation is {underscored[word]}')


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--root', required=True, type=pathlib.Path)
    parser.add_argument('--restoresim', required=True)
    args = parser.parse_args()
    names = run(args.restoresim, 'zoo', '--list').stdout.split()
    failures = []
    check_binary(args.restoresim, names, failures)
    check_refused(args.restoresim, names, failures)
    check_sources(args.root, names, failures)
    for f in failures:
        print(f'FAIL: {f}')
    print(f'mutation_names_test: {len(names)} mutations, {len(failures)} failures')
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
