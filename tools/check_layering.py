#!/usr/bin/env python3
"""Keeps core/ honest: it sees only ports. Fails (exit 1) when a file under core/
  * includes a higher layer (sim/, fakes/, scenarios/, properties/, tools/, bench/, kafka/,
    fuzz/), or
  * reaches around a port: reads a clock, sleeps, starts a std::thread, or draws randomness
    directly, outside the port adapters that exist for exactly that, or
  * includes librdkafka outside the librdkafka transport adapter (core/transport/rdkafka/), or
  * includes a higher layer of core/ itself: its folders are ordered (CORE_LAYERS, lowest
    first) and a file may include only its own folder and the folders below it. A folder of
    core/ missing from the order is a problem too, so that a new one is placed on purpose.
    Tests beside the code (*_test.cc) are not part of their layer's library and may use what
    sits above it (a sync test on the system clock).
Also keeps sim/, the generic scheduler, below the runtime: it may include core/ only up to
port/ (SIM_MAY_INCLUDE_CORE), so it knows no client's runtime, state or bug table.
Also keeps fuzz/ a leaf beside the layers it tests: its targets may include core/, sim/ and
fakes/ (and fuzz/), nothing else; and no other folder includes fuzz/.
Run by `meson test` (suite core); usage: check_layering.py REPO_ROOT
"""
import pathlib
import re
import sys

HIGHER = re.compile(r'#include\s+"(sim|fakes|scenarios|properties|tools|bench|kafka|fuzz)/')
FUZZ_MAY_INCLUDE = ('core', 'sim', 'fakes', 'fuzz')
PROJECT_INCLUDE = re.compile(r'#include\s+"([a-z_]+)/')
SOURCE_SUFFIXES = ('.h', '.cc')
AROUND_PORTS = re.compile(
    r'std::chrono::(steady|system|high_resolution)_clock::now|this_thread::sleep|'
    r'std::thread\b|\brand\(\)|std::random_device|std::(uniform_int|uniform_real|normal|'
    r'bernoulli)_distribution|\bgettimeofday\(|\bclock_gettime\(|\busleep\(|\bnanosleep\(')
# The adapters that implement the ports on the real world.
ADAPTERS = {'core/port/system_clock.cc', 'core/sync/os_thread.cc', 'core/port/random.cc'}
RDKAFKA = re.compile(r'#include\s+[<"]librdkafka/|#include\s+[<"]rdkafka')
# The transport adapter over librdkafka: the only files that may include its headers.
RDKAFKA_ADAPTER_DIR = 'core/transport/rdkafka/'
# The layers of core/, lowest first (docs/ARCHITECTURE.md, "Layering"): util (checks, failures,
# the PRNG, the run context and the simulator seam), sync (the primitives and the clock
# interface that owns their timed waits), port (the real clock, file system, randomness,
# checkpoint/restore notifications), transport, state (stores, checkpoint files), runtime,
# events (the observer that turns the runtime's reports into typed events).
CORE_LAYERS = ('util', 'sync', 'port', 'transport', 'state', 'runtime', 'events')
CORE_INCLUDE = re.compile(r'#include\s+"core/([a-z_]+)/')
# The folders of core/ that sim/ may include (the lowest layers, up to the ports).
SIM_MAY_INCLUDE_CORE = CORE_LAYERS[:CORE_LAYERS.index('port') + 1]


def main() -> int:
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else '.').resolve()
    problems = []
    for path in sorted((root / 'core').rglob('*')):
        if path.suffix not in ('.h', '.cc') or path.name.endswith('_test.cc'):
            continue
        rel = path.relative_to(root).as_posix()
        for number, line in enumerate(path.read_text().splitlines(), 1):
            code = line.split('//', 1)[0]
            if HIGHER.search(code):
                problems.append(f'{rel}:{number}: core/ includes a higher layer: {line.strip()}')
            if RDKAFKA.search(code) and not rel.startswith(RDKAFKA_ADAPTER_DIR):
                problems.append(f'{rel}:{number}: librdkafka outside its adapter: {line.strip()}')
            if rel not in ADAPTERS and AROUND_PORTS.search(code):
                problems.append(f'{rel}:{number}: reaches around a port: {line.strip()}')
            problems += layer_problems(rel, number, code, line)
    problems += fuzz_problems(root)
    problems += sim_problems(root)
    for p in problems:
        print(p)
    print(f'check_layering: {len(problems)} problem(s) in core/, sim/ and fuzz/')
    return 1 if problems else 0


def layer_problems(rel: str, number: int, code: str, line: str) -> list:
    """An include of core/ that runs up the order of core/'s layers, or any include from a
    folder of core/ that has no place in it."""
    match = CORE_INCLUDE.search(code)
    if not match:
        return []
    layer = rel.split('/')[1] if rel.count('/') >= 2 else ''
    included = match.group(1)
    for folder in (layer, included):
        if folder not in CORE_LAYERS:
            return [f'{rel}:{number}: core/{folder}/ has no place in the layers of core/ '
                    f'(CORE_LAYERS): {line.strip()}']
    if CORE_LAYERS.index(included) > CORE_LAYERS.index(layer):
        return [f'{rel}:{number}: core/{layer}/ includes the higher layer core/{included}/: '
                f'{line.strip()}']
    return []


def sim_problems(root: pathlib.Path) -> list:
    """sim/ includes no layer of core/ above the ports."""
    problems = []
    for path in sorted((root / 'sim').rglob('*')):
        if path.suffix not in SOURCE_SUFFIXES:
            continue
        rel = path.relative_to(root).as_posix()
        for number, line in enumerate(path.read_text().splitlines(), 1):
            match = CORE_INCLUDE.search(line.split('//', 1)[0])
            if match and match.group(1) not in SIM_MAY_INCLUDE_CORE:
                problems.append(f'{rel}:{number}: sim/ includes core/{match.group(1)}/ (only '
                                f'{", ".join(SIM_MAY_INCLUDE_CORE)}): {line.strip()}')
    return problems


def fuzz_problems(root: pathlib.Path) -> list:
    """fuzz/ includes only what it may; nothing else includes fuzz/."""
    problems = []
    for path in sorted(root.rglob('*')):
        rel = path.relative_to(root).as_posix()
        if path.suffix not in SOURCE_SUFFIXES or rel.startswith('build'):
            continue
        in_fuzz = rel.startswith('fuzz/')
        for number, line in enumerate(path.read_text().splitlines(), 1):
            match = PROJECT_INCLUDE.search(line.split('//', 1)[0])
            if not match:
                continue
            if in_fuzz and match.group(1) not in FUZZ_MAY_INCLUDE:
                problems.append(f'{rel}:{number}: fuzz/ includes {match.group(1)}/: {line.strip()}')
            if not in_fuzz and match.group(1) == 'fuzz':
                problems.append(f'{rel}:{number}: only fuzz/ may include fuzz/: {line.strip()}')
    return problems


if __name__ == '__main__':
    sys.exit(main())
