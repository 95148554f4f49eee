"""tools/dask/sweep.py against real Dask clusters on this machine (loopback only), no mocks.

* A LocalCluster of 2 worker processes (what `tools/sweep` starts without --address) runs a
  sweep split into 8 shards; the merged report equals the single-process `restoresim explore
  --json` byte for byte without "timing", with the same repro files, and both workers ran
  shards.
* A scheduler and 2 workers started as separate processes (`dask scheduler`, `dask worker`),
  reached with --address: a worker process is killed (SIGKILL) while it runs a shard; the
  scheduler (allowed-failures 0) reports KilledWorker, the driver resubmits the shard, and the
  merged report is still the single-process one.

Run by the 'sweep' suite through tools/dask/with_venv.sh (the project's venv).
"""

import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest

import psutil

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BIN = os.path.abspath(
    os.environ.get("RESTORESIM_BIN", os.path.join(ROOT, "build/tools/restoresim")))
SWEEP = os.path.join(HERE, "sweep.py")
DASK = os.path.join(os.path.dirname(sys.executable), "dask")
# Every program (runtime scenarios, bug programs, demos): failures, repros and coverage.
EXPLORE = ["--scenario", "all", "--seeds", "40", "--seed-start", "5", "--repros-max", "2",
           "--jobs", "1"]
TIMEOUT_S = 240


def without_timing(text):
    report = json.loads(text)
    report.pop("timing")
    return json.dumps(report, indent=2, sort_keys=True)


def repro_files(folder):
    if not os.path.isdir(folder):
        return {}
    out = {}
    for name in sorted(os.listdir(folder)):
        with open(os.path.join(folder, name), "rb") as f:
            out[name] = f.read()
    return out


def alive(pid):
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


class SweepOnDaskTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="restoresim-sweep-test-")
        single = os.path.join(cls.tmp.name, "single")
        os.makedirs(single)
        proc = subprocess.run([BIN, "explore", *EXPLORE, "--json", "--repro-dir", "repros"],
                              cwd=single, capture_output=True, text=True, timeout=TIMEOUT_S,
                              check=False)
        assert proc.returncode in (0, 1), proc.stderr
        cls.single_code = proc.returncode
        cls.single = proc.stdout
        cls.single_repros = repro_files(os.path.join(single, "repros"))
        assert len(json.loads(cls.single)["failures"]) > 10
        assert len(cls.single_repros) > 5

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def sweep(self, out, *extra):
        return subprocess.Popen(
            [sys.executable, SWEEP, "--bin", BIN, "--shards", "8", "--out", out, *extra,
             *EXPLORE], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def check_merged(self, out, proc, stdout, stderr):
        self.assertEqual(proc.returncode, self.single_code, stderr)
        with open(os.path.join(out, "merged.json"), encoding="utf-8") as f:
            merged = f.read()
        self.assertEqual(without_timing(merged), without_timing(self.single))
        self.assertEqual(repro_files(os.path.join(out, "repros")), self.single_repros)
        self.assertEqual(len(json.loads(merged)["timing"]["shards"]), 8)
        self.assertIn("restoresim merge: 8 shards of scenario=all", stdout)
        self.assertIn("runs/s over the slowest of 8 shards", stdout)
        self.assertIn("8/8 shards", stderr)  # the progress of the whole sweep
        with open(os.path.join(out, "sweep.json"), encoding="utf-8") as f:
            return json.load(f)

    def test_local_cluster_of_two_workers_merges_to_the_single_process_result(self):
        out = os.path.join(self.tmp.name, "local")
        proc = self.sweep(out, "--workers", "2")
        stdout, stderr = proc.communicate(timeout=TIMEOUT_S)
        info = self.check_merged(out, proc, stdout, stderr)
        self.assertGreaterEqual(len(set(info["workers"].values())), 2, info)

    def test_a_worker_killed_mid_sweep_is_survived(self):
        scheduler_file = os.path.join(self.tmp.name, "scheduler.json")
        started = []
        try:
            # A scheduler that gives up on a task at its first lost worker (KilledWorker), so
            # the driver's own resubmission is what survives the kill.
            env = dict(os.environ, DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES="0")
            started.append(subprocess.Popen(
                [DASK, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                 "--scheduler-file", scheduler_file], stderr=subprocess.DEVNULL, env=env))
            deadline = time.monotonic() + 60
            while not os.path.exists(scheduler_file) and time.monotonic() < deadline:
                time.sleep(0.1)
            with open(scheduler_file, encoding="utf-8") as f:
                address = json.load(f)["address"]
            for _ in range(2):
                started.append(subprocess.Popen(
                    [DASK, "worker", address, "--host", "127.0.0.1", "--nthreads", "1",
                     "--no-dashboard"], stderr=subprocess.DEVNULL))
            out = os.path.join(self.tmp.name, "killed")
            proc = self.sweep(out, "--address", address)
            killed = {}
            killer = threading.Thread(target=self.kill_a_busy_worker,
                                      args=(started[1:], proc, killed))
            killer.start()
            stdout, stderr = proc.communicate(timeout=TIMEOUT_S)
            killer.join()
            self.assertIn("worker", killed, "no worker was caught running a shard")
            self.assertFalse(alive(killed["shard"]), "the killed worker's restoresim outlived it")
            info = self.check_merged(out, proc, stdout, stderr)
            self.assertGreaterEqual(info["retried"], 1, stderr)
            self.assertIn("retried (KilledWorker)", stderr)
        finally:
            for p in reversed(started):
                p.terminate()
                try:
                    p.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    p.kill()

    @staticmethod
    def kill_a_busy_worker(nannies, sweep, killed):
        """SIGKILLs the worker process of the first restoresim shard seen running."""
        deadline = time.monotonic() + TIMEOUT_S
        while sweep.poll() is None and time.monotonic() < deadline:
            for nanny in nannies:
                try:
                    for child in psutil.Process(nanny.pid).children(recursive=True):
                        if child.name() == "restoresim" and "explore" in child.cmdline():
                            worker = child.parent()
                            os.kill(worker.pid, signal.SIGKILL)
                            killed.update(worker=worker.pid, shard=child.pid)
                            time.sleep(0.5)
                            return
                except psutil.Error:
                    continue
            time.sleep(0.01)


if __name__ == "__main__":
    unittest.main(verbosity=2)
