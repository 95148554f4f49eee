#!/usr/bin/env python3
"""Tests of tools/check_layering.py on small trees: a clean tree passes; each arrow that runs up
inside core/ (the ones issue 20 removed among them), an unplaced folder of core/, sim/
including the runtime and core/ including a layer above it fail naming FILE:LINE.
usage: check_layering_test.py [PATH_TO_SCRIPT]"""
import pathlib
import subprocess
import sys
import tempfile
import unittest

SCRIPT = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else
                      pathlib.Path(__file__).resolve().parent / 'check_layering.py')

CLEAN = {
    'core/util/run_context.h': '#include "core/util/mutation.h"\n',
    'core/util/check.cc': '#include "core/util/sim_hooks.h"\n',
    'core/sync/condvar.h': '#include "core/sync/clock.h"\n#include "core/util/check.h"\n',
    'core/port/system_clock.cc': '#include "core/sync/condvar.h"\n',
    'core/transport/transport.h': '#include "core/sync/clock.h"\n',
    'core/transport/rdkafka/rdkafka_handle.cc': '#include <librdkafka/rdkafka.h>\n'
                                                '#include "core/port/system_clock.h"\n',
    'core/state/checkpoint_file.h': '#include "core/transport/transport.h"\n',
    'core/state/log_store.cc': '#include "core/util/run_context.h"\n',
    'core/runtime/task.cc': '#include "core/state/log_store.h"\n',
    'core/events/event.h': '#include "core/runtime/runtime_observer.h"\n',
    # A test beside the code may use what sits above its layer.
    'core/sync/sync_test.cc': '#include "core/port/system_clock.h"\n',
    'sim/simulation.cc': '#include "core/util/sim_hooks.h"\n#include "core/port/random.h"\n',
    # A comment is not an include.
    'core/util/prng.h': '// see "core/runtime/runtime.h"\n',
}


class CheckLayeringTest(unittest.TestCase):
    def run_on(self, extra):
        with tempfile.TemporaryDirectory() as tmp:
            root = pathlib.Path(tmp)
            for rel, text in {**CLEAN, **extra}.items():
                path = root / rel
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text)
            done = subprocess.run([sys.executable, str(SCRIPT), str(root)],
                                  capture_output=True, text=True, check=False)
            return done.returncode, done.stdout

    def assert_fails(self, extra, *expected):
        code, out = self.run_on(extra)
        self.assertEqual(code, 1, out)
        for text in expected:
            self.assertIn(text, out)

    def test_clean_tree_passes(self):
        code, out = self.run_on({})
        self.assertEqual(code, 0, out)
        self.assertIn('0 problem(s)', out)

    def test_state_including_the_runtime_fails(self):
        self.assert_fails({'core/state/log_store.cc': '#include "core/runtime/mutation.h"\n'},
                          'core/state/log_store.cc:1: core/state/ includes the higher layer '
                          'core/runtime/')

    def test_sync_including_the_runtime_fails(self):
        self.assert_fails({'core/sync/os_thread.cc':
                           '#include "core/sync/thread.h"\n'
                           '#include "core/runtime/runtime_observer.h"\n'},
                          'core/sync/os_thread.cc:2: core/sync/ includes the higher layer '
                          'core/runtime/')

    def test_sync_including_port_fails(self):
        self.assert_fails({'core/sync/condvar.h': '#include "core/port/clock.h"\n'},
                          'core/sync/condvar.h:1: core/sync/ includes the higher layer core/port/')

    def test_util_including_sync_fails(self):
        self.assert_fails({'core/util/check.cc': '#include "core/sync/thread.h"\n'},
                          'core/util/check.cc:1')

    def test_runtime_including_events_fails(self):
        self.assert_fails({'core/runtime/task.cc': '#include "core/events/event.h"\n'},
                          'core/runtime/task.cc:1: core/runtime/ includes the higher layer '
                          'core/events/')

    def test_transport_adapter_including_state_fails(self):
        self.assert_fails({'core/transport/rdkafka/rdkafka_handle.cc':
                           '#include "core/state/log_store.h"\n'},
                          'core/transport/rdkafka/rdkafka_handle.cc:1: core/transport/ includes '
                          'the higher layer core/state/')

    def test_unplaced_folder_fails(self):
        self.assert_fails({'core/context/run_context.h': '#include "core/util/mutation.h"\n'},
                          'core/context/ has no place in the layers of core/')

    def test_sim_including_the_runtime_fails(self):
        self.assert_fails({'sim/runner.cc': '#include "core/runtime/mutation.h"\n'},
                          'sim/runner.cc:1: sim/ includes core/runtime/')

    def test_higher_layer_than_core_still_fails(self):
        self.assert_fails({'core/runtime/task.cc': '#include "sim/simulation.h"\n'},
                          'core/runtime/task.cc:1: core/ includes a higher layer')


if __name__ == '__main__':
    unittest.main(argv=sys.argv[:1])
