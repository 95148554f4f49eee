#!/usr/bin/env python3
"""Keeps core/ honest: it sees only ports. Fails (exit 1) when a file under core/
  * includes a higher layer (sim/, fakes/, scenarios/, properties/, tools/, bench/, kafka/), or
  * reaches around a port: reads a clock, sleeps, starts a std::thread, or draws randomness
    directly, outside the port adapters that exist for exactly that, or
  * includes librdkafka outside the librdkafka transport adapter (core/transport/rdkafka/).
Run by `meson test` (suite core); usage: check_layering.py REPO_ROOT
"""
import pathlib
import re
import sys

HIGHER = re.compile(r'#include\s+"(sim|fakes|scenarios|properties|tools|bench|kafka)/')
AROUND_PORTS = re.compile(
    r'std::chrono::(steady|system|high_resolution)_clock::now|this_thread::sleep|'
    r'std::thread\b|\brand\(\)|std::random_device|std::(uniform_int|uniform_real|normal|'
    r'bernoulli)_distribution|\bgettimeofday\(|\bclock_gettime\(|\busleep\(|\bnanosleep\(')
# The adapters that implement the ports on the real world.
ADAPTERS = {'core/port/system_clock.cc', 'core/sync/os_thread.cc', 'core/port/random.cc'}
RDKAFKA = re.compile(r'#include\s+[<"]librdkafka/|#include\s+[<"]rdkafka')
# The transport adapter over librdkafka: the only files that may include its headers.
RDKAFKA_ADAPTER_DIR = 'core/transport/rdkafka/'


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
    for p in problems:
        print(p)
    print(f'check_layering: {len(problems)} problem(s) in core/')
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
