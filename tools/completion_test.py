#!/usr/bin/env python3
"""The bash completion (tools/restoresim/restoresim.bash) and the man page against the binary
(issue 24): for the program and every subcommand (nested ones too), the completion offers
exactly the options and subcommands its --help lists; the values it offers for --scenario,
replay's SCENARIO, --mutations, --mutation, --strategy and the options whose help shows
{choices} are the binary's; and the man page (when help2man is installed, the build's
restoresim.1) has a section per subcommand naming each of its options.

usage: completion_test.py --restoresim BIN --completion FILE [--man-page restoresim.1]
Exit 0 when every check holds, 1 listing the failures.
"""
import argparse
import json
import re
import shutil
import subprocess
import sys

OPTION = re.compile(r'^  (-\S*)')
ENTRY = re.compile(r'^  (\S+)')


def help_text(binary, path):
    return subprocess.run([binary, *path, '--help'], capture_output=True, text=True,
                          check=True).stdout


def parse_help(text):
    """(options, subcommands, choices {option: [values]}) of one --help text."""
    options, subcommands, choices, section = set(), [], {}, None
    for line in text.splitlines():
        if line and not line.startswith(' '):
            section = line[:-1] if line.endswith(':') else None
            continue
        if section == 'Options' and (m := OPTION.match(line)):
            names = m.group(1).split(',')
            options.update(names)
            if (c := re.search(r'\{([^}]*)\}', line.split('  ')[1])) is not None:
                for name in names:
                    choices[name] = c.group(1).split(',')
        elif section == 'Subcommands' and (m := ENTRY.match(line)):
            subcommands.append(m.group(1))
    return options, subcommands, choices


def commands(binary, path=()):
    """{subcommand path: parsed help}, the program's own included (path ())."""
    parsed = parse_help(help_text(binary, list(path)))
    out = {tuple(path): parsed}
    for sub in parsed[1]:
        out.update(commands(binary, (*path, sub)))
    return out


def complete(completion, binary, lines):
    """What the completion offers for each command line (the last word is being completed)."""
    script = [f'source {completion}']
    for words in lines:
        quoted = ' '.join("'" + w.replace("'", "'\\''") + "'" for w in [binary, *words])
        script += [f'COMP_WORDS=({quoted}); COMP_CWORD={len(words)}; _restoresim',
                   'printf "%s\\n" "${COMPREPLY[@]}"; echo "@@"']
    out = subprocess.run(['bash', '--norc', '-c', '\n'.join(script)], capture_output=True,
                         text=True, check=True).stdout
    return [set(filter(None, block.split('\n'))) for block in out.split('@@\n')[:-1]]


def check_commands(completion, binary, tree, failures):
    """Options and subcommands of every (sub)command, as the completion offers them."""
    paths = sorted(tree)
    lines = [[*p, '-'] for p in paths] + [[*p, ''] for p in paths if tree[p][1]]
    got = complete(completion, binary, lines)
    for path, offered in zip(paths, got):
        if offered != tree[path][0]:
            failures.append(f'restoresim {" ".join(path)} -: offered {sorted(offered)}, '
                            f'--help lists {sorted(tree[path][0])}')
    for path, offered in zip([p for p in paths if tree[p][1]], got[len(paths):]):
        if offered != set(tree[path][1]):
            failures.append(f'restoresim {" ".join(path)}: offered subcommands '
                            f'{sorted(offered)}, --help lists {tree[path][1]}')


def check_values(completion, binary, tree, failures):
    """The values of --scenario, --mutation(s), --strategy, {choices} and replay's SCENARIO."""
    programs = json.loads(subprocess.run([binary, 'scenarios', '--json'], capture_output=True,
                                         text=True, check=True).stdout)
    programs = programs['programs'] if isinstance(programs, dict) else programs
    scenarios = {p['name'] for p in programs} | {'all'}
    mutations = set(subprocess.run([binary, 'zoo', '--list'], capture_output=True, text=True,
                                   check=True).stdout.split()) | {'all'}
    wanted = []  # (command line, the values expected)
    for path, (options, _, choices) in sorted(tree.items()):
        for option in sorted(options):
            values = {'--scenario': scenarios, '--mutations': mutations,
                      '--mutation': mutations}.get(option, set(choices.get(option, [])))
            if option == '--strategy':
                values = {'random', 'pos', 'pct:3'}
            if values:
                wanted.append(([*path, option, ''], values, option == '--strategy'))
    wanted.append((['replay', ''], scenarios, False))
    if len(mutations) < 2 or len(scenarios) < 2:
        failures.append('the binary lists no mutations or no scenarios')
    got = complete(completion, binary, [line for line, _, _ in wanted])
    for (line, values, subset), offered in zip(wanted, got):
        if (subset and not values <= offered) or (not subset and offered != values):
            failures.append(f'restoresim {" ".join(line)}: offered {sorted(offered)[:8]}..., '
                            f'expected {sorted(values)[:8]}...')


def check_man_page(man_page, tree, failures):
    """The built page: a section per subcommand, each of its options named, renders cleanly."""
    text = open(man_page, encoding='utf-8').read()
    if not text.startswith('.\\" DO NOT MODIFY') or '.TH RESTORESIM "1"' not in text:
        failures.append(f'{man_page}: not a help2man page of restoresim(1)')
    for path, (options, _, _) in sorted(tree.items()):
        if not path:
            continue
        title = f'.SS "restoresim {" ".join(path)}"'
        if title not in text:
            failures.append(f'{man_page}: no section {title}')
            continue
        section = text.split(title, 1)[1].split('.SS ', 1)[0]
        for option in sorted(options - {'-h', '--help'}):
            if f'\\fB{option.replace("-", chr(92) + "-")}' not in section:
                failures.append(f'{man_page}: {" ".join(path)} {option} is not documented')
    if shutil.which('groff'):
        done = subprocess.run(['groff', '-man', '-Tutf8', '-ww', '-z', man_page],
                              capture_output=True, text=True, check=False)
        if done.returncode != 0 or done.stderr.strip():
            failures.append(f'{man_page}: groff warns: {done.stderr.strip()[:500]}')


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--restoresim', required=True)
    parser.add_argument('--completion', required=True)
    parser.add_argument('--man-page')
    args = parser.parse_args()
    tree = commands(args.restoresim)
    failures = []
    check_commands(args.completion, args.restoresim, tree, failures)
    check_values(args.completion, args.restoresim, tree, failures)
    if args.man_page:
        check_man_page(args.man_page, tree, failures)
    else:
        print('completion_test: no man page to check (help2man not installed at configure '
              'time: `apt-get install help2man`, which tools/test does)')
    for f in failures:
        print(f'FAIL: {f}')
    print(f'completion_test: {len(tree)} commands, {len(failures)} failures')
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
