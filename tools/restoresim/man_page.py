#!/usr/bin/env python3
"""Writes the man page restoresim.1 with help2man: NAME, SYNOPSIS, DESCRIPTION and OPTIONS from
`restoresim --help`, a COMMANDS section with every subcommand's --help (nested ones too), and
the hand-written sections of tools/restoresim/restoresim.h2m (exit status, examples, files,
see also). Run by the build (tools/meson.build) when help2man is installed; `meson install`
puts the page in share/man/man1.

usage: man_page.py --bin BUILD/tools/restoresim --include restoresim.h2m --version V -o OUT
       [--help2man PATH]
"""
import argparse
import os
import pathlib
import re
import subprocess
import sys
import tempfile

# A CLI11 option entry: "  --name TYPE=DEFAULT   description" (the description may be on the
# next lines, indented, when the name is long).
ENTRY = re.compile(r'^  (\S.*?)(?:\s{2,}(\S.*))?$')
CONTINUATION = re.compile(r'^\s{8,}(\S.*)$')


def run_help(binary, path):
    """The --help text of `restoresim PATH...`, run by its bare name (usage lines then say
    "restoresim", not the build path)."""
    env = dict(os.environ, PATH=f'{binary.parent}{os.pathsep}{os.environ.get("PATH", "")}')
    out = subprocess.run([binary.name, *path, '--help'], env=env, capture_output=True,
                         text=True, check=True)
    return out.stdout


def sections(help_text):
    """{section name: [(entry, description)]} and the lines before the first section."""
    out, preamble, current = {}, [], None
    for line in help_text.splitlines():
        if line and not line.startswith(' '):
            if line.endswith(':') and ' ' not in line[:-1]:
                current = line[:-1]
                out[current] = []
            elif current is None:
                preamble.append(line)
            continue
        cont = CONTINUATION.match(line)
        if current and cont and out[current]:
            entry, desc = out[current][-1]
            out[current][-1] = (entry, f'{desc} {cont.group(1)}'.strip())
            continue
        m = ENTRY.match(line)
        if current and m:
            out[current].append((m.group(1).strip(), m.group(2) or ''))
    return out, preamble


def roff(text):
    """Text escaped for roff: backslashes, and a leading '.' or "'" (a request otherwise)."""
    text = text.replace('\\', '\\e').replace('-', '\\-')
    return re.sub(r"^([.'])", r'\\&\1', text)


def command_section(binary, path, out):
    """Appends the roff of `restoresim PATH --help` and of its own subcommands to `out`."""
    parsed, preamble = sections(run_help(binary, path))
    out.append(f'.SS "restoresim {" ".join(path)}"')
    usage = [line for line in preamble if line.startswith('Usage:')]
    description = [line for line in preamble if not line.startswith('Usage:')]
    out.extend(roff(line) for line in description)
    for line in usage:
        out.extend(['.br', roff(line)])
    for name in ('Positionals', 'Options', 'Subcommands'):
        for entry, desc in parsed.get(name, []):
            if entry.startswith('-h,--help'):
                continue
            out.extend(['.TP', f'\\fB{roff(entry)}\\fR', roff(desc)])
    for sub, _ in parsed.get('Subcommands', []):
        command_section(binary, [*path, sub], out)


def include_text(binary, static_include):
    """The include file help2man reads: the hand-written sections and COMMANDS."""
    top, _ = sections(run_help(binary, []))
    lines = ['[COMMANDS]']
    for sub, _ in top.get('Subcommands', []):
        command_section(binary, [sub], lines)
    return static_include.read_text() + '\n' + '\n'.join(lines) + '\n'


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--bin', required=True, type=pathlib.Path)
    parser.add_argument('--include', required=True, type=pathlib.Path)
    parser.add_argument('--version', required=True)
    parser.add_argument('--help2man', default='help2man')
    parser.add_argument('-o', '--output', required=True, type=pathlib.Path)
    args = parser.parse_args()
    binary = args.bin.resolve()
    with tempfile.TemporaryDirectory() as tmp:
        include = pathlib.Path(tmp) / 'restoresim.h2m'
        include.write_text(include_text(binary, args.include))
        env = dict(os.environ, PATH=f'{binary.parent}{os.pathsep}{os.environ.get("PATH", "")}')
        # A fixed date: the page depends on the binary's help only (SOURCE_DATE_EPOCH).
        env.setdefault('SOURCE_DATE_EPOCH', '1767225600')
        done = subprocess.run(
            [args.help2man, '--no-info', '--no-discard-stderr', '--section', '1',
             '--version-string', args.version, '--name',
             'deterministic simulation of the Kafka Streams restore-thread runtime',
             '--include', str(include), '--output', str(args.output), binary.name],
            env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.stderr.write(f'man_page.py: help2man failed ({done.returncode}):\n{done.stderr}')
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
