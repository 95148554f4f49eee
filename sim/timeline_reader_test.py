#!/usr/bin/env python3
"""timeline_reader_test: `restoresim replay --timeline` loads in an independent reader (issue 24).

The reader is chrometrace from PyPI (pinned in tools/dask/requirements.txt, run with the
project's venv by tools/dask/with_venv.sh), not our own parser: every event of the file must
load as its TraceEvent (it refuses unknown keys and events without name, phase or timestamp).
Then the story must be on it: the restorations of the runtime as slices ("X", category
"restoration") on tracks named after their restore thread, within the run; metadata with a
category; no display unit other than the format's microseconds; scheduling points absent by
default and present with --timeline-sync. The run is a failing one (a planted bug), and its
story is checked too: each task's lifecycle states as slices (category "task") on a track of
its own, one after another; the rebalances (category "rebalance") and the faults (category
"fault", one slice for each fault the run marked) as spans on their tracks; the failure.

usage: timeline_reader_test.py [RESTORESIM_BIN]   (default: $RESTORESIM_BIN)
"""
import json
import os
import pathlib
import subprocess
import sys
import tempfile

import chrometrace

PROGRAM = ['bug.no_checkpoint_after_restoration', '--seed', '0', '--strategy', 'pct:3']


def timeline(binary, scratch, *extra):
    path = pathlib.Path(scratch, 'timeline%s.json' % len(extra))
    done = subprocess.run([binary, 'replay', *PROGRAM, '--timeline', str(path), *extra],
                          capture_output=True, text=True, timeout=120)
    if done.returncode not in (0, 1):  # 1: the planted bug's failure, replayed
        raise AssertionError(f'replay exited {done.returncode}: {done.stderr}')
    return json.loads(path.read_text())


def check(doc, errors):
    events = [chrometrace.TraceEvent.from_dict(e) for e in doc['traceEvents']]
    if doc.get('displayTimeUnit') not in (None, 'ms'):
        errors.append(f"displayTimeUnit {doc['displayTimeUnit']!r}: timestamps are microseconds")
    names = {e.thread_id: e.args['name'] for e in events
             if e.event_type == chrometrace.TraceEventType.METADATA and e.name == 'thread_name'}
    if any(not e.categories for e in events if e.event_type == 'M'):
        errors.append('a metadata event without a category')
    end = max(e.timestamp_us + e.duration_us for e in events)
    slices = [e for e in events
              if e.event_type == chrometrace.TraceEventType.COMPLETE and
              e.categories == 'restoration']
    if not slices:
        errors.append('no restoration slice')
    for s in slices:
        track = names.get(s.thread_id, '')
        if not track.endswith('-restore restorations') and '-restore restorations (' not in track:
            errors.append(f'{s.name} on track {track!r}, not a restore thread\'s')
        if s.duration_us <= 0 or s.timestamp_us + s.duration_us > end:
            errors.append(f'{s.name}: [{s.timestamp_us}, +{s.duration_us}) outside the run')
        if not s.name.startswith(('restore ', 'update ')):
            errors.append(f'restoration slice named {s.name!r}')
    return events


TASK_STATES = {'CREATED', 'RESTORING', 'RUNNING', 'SUSPENDED', 'CLOSED', 'CLOSED (recycled)'}


def slices_of(events, category):
    return [e for e in events
            if e.event_type == chrometrace.TraceEventType.COMPLETE and e.categories == category]


def check_story(events, errors):
    """The run's story: task lifecycles, rebalances, faults, the failure."""
    names = {e.thread_id: e.args['name'] for e in events
             if e.event_type == chrometrace.TraceEventType.METADATA and e.name == 'thread_name'}
    tasks = {}
    for s in slices_of(events, 'task'):
        track = names.get(s.thread_id, '')
        if not track.startswith('task '):
            errors.append(f'task state {s.name} on track {track!r}')
        if s.name not in TASK_STATES:
            errors.append(f'task state slice named {s.name!r} on {track!r}')
        tasks.setdefault(track, []).append(s)
    if len(tasks) < 2:
        errors.append(f'{len(tasks)} task tracks: every task of the run should have one')
    for track, states in tasks.items():
        states.sort(key=lambda s: s.timestamp_us)
        for a, b in zip(states, states[1:]):
            if a.timestamp_us + a.duration_us > b.timestamp_us:
                errors.append(f'{track}: {a.name} overlaps {b.name}')
            if a.name.startswith('CLOSED'):
                errors.append(f'{track}: {b.name} after {a.name}')
    if not any(s.name == 'RESTORING' for states in tasks.values() for s in states):
        errors.append('no task restoring')
    rebalances = slices_of(events, 'rebalance')
    if not rebalances or any(not names.get(s.thread_id, '').startswith('rebalances')
                             for s in rebalances):
        errors.append(f'{len(rebalances)} rebalance spans, or one off the rebalances track')
    fault_marks = sorted((e.timestamp_us, e.name.removeprefix('fault/')) for e in events
                         # The reader keeps the format's lowercase 'i' as it is ('I' is its enum)
                         if e.event_type in (chrometrace.TraceEventType.INSTANT, 'i') and
                         e.categories == 'fault')
    fault_spans = sorted((s.timestamp_us, s.name) for s in slices_of(events, 'fault'))
    if not fault_marks or fault_marks != fault_spans:
        errors.append(f'fault marks {fault_marks} but fault spans {fault_spans}')
    if not any(e.name.startswith('FAILURE: ') for e in events):
        errors.append('no FAILURE event on a failing run')


def main(argv):
    binary = argv[0] if argv else os.environ['RESTORESIM_BIN']
    errors = []
    with tempfile.TemporaryDirectory(prefix='timeline-test-') as scratch:
        plain = check(timeline(binary, scratch), errors)
        check_story(plain, errors)
        sync = check(timeline(binary, scratch, '--timeline-sync'), errors)
    points = [e for e in plain if e.categories == 'sched' and e.name.startswith('mutex.')]
    if points:
        errors.append(f'{len(points)} mutex instants without --timeline-sync')
    if not any(e.categories == 'sched' and e.name.startswith('mutex.') for e in sync):
        errors.append('no mutex instant with --timeline-sync')
    for e in errors:
        print(e)
    print(f'timeline_reader_test: {len(plain)} and {len(sync)} events read, '
          f'{len(errors)} problem(s)')
    return 1 if errors else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
