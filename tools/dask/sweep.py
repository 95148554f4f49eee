"""A restoresim seed sweep split into shards on a Dask cluster, then merged.

Each shard is one Dask task that runs `restoresim explore ... --shard I/N --json-out` in a
scratch folder on its worker and returns the report and its repro files; the driver writes them
under OUT/shards/I/, shows one progress bar for the whole sweep as shards finish, and runs
`restoresim merge` over all of them (the merged report: OUT/merged.json, repros: OUT/repros/).

A shard is a pure function of its options, so one whose worker died is simply run again
(--retries times) and the merged result is still exact. Dask's scheduler reschedules a task
whose worker died by itself (up to its allowed-failures); the driver also resubmits a shard
that ends in KilledWorker or a lost connection. A shard that fails on its own (restoresim exit
code 2 or more, or killed by a signal while its worker lived) is not retried: it would fail
again; the sweep stops with its message.

Without --address a LocalCluster of --workers processes (one thread each) is started and
stopped, so the same command works on a laptop. --bin is the restoresim binary's path on the
workers (the same build everywhere: merge refuses shards of different builds).

Exit code: merge's (0 as expected, 1 findings, 2 refused), 2 for bad usage, 4 when a shard
could not be run.
"""

import argparse
import ctypes
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

# Options the driver sets for every shard; given on the command line they are refused.
DRIVER_OWNED = ("--shard", "--json", "--json-out", "--repro-dir", "--quiet")
EXIT_SHARD_FAILED = 4


class ShardFailed(Exception):
    """The shard's own failure (bad options, a crash of restoresim): not retried."""


def _die_with_parent():
    # The shard's restoresim ends when its worker process does (a killed worker leaves no
    # orphan burning a core while its retry runs elsewhere).
    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def run_shard(binary, explore_args, index, count):
    """Runs on a worker: one shard, in a scratch folder. Returns its report and repro files."""
    scratch = tempfile.mkdtemp(prefix=f"restoresim-shard{index}-")
    try:
        cmd = [binary, "explore", *explore_args, "--shard", f"{index}/{count}",
               "--json-out", "shard.json", "--repro-dir", "repros", "--quiet"]
        started = time.monotonic()
        try:
            proc = subprocess.run(cmd, cwd=scratch, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, preexec_fn=_die_with_parent,
                                  check=False)
        except OSError as e:
            raise ShardFailed(f"shard {index}/{count}: cannot run {binary}: {e}") from e
        # 0: as expected, 1: findings; both wrote the report.
        if proc.returncode not in (0, 1):
            raise ShardFailed(f"shard {index}/{count}: restoresim exited with "
                              f"{proc.returncode}: {proc.stderr.decode(errors='replace')[-2000:]}")
        with open(os.path.join(scratch, "shard.json"), encoding="utf-8") as f:
            report = f.read()
        repros = {}
        repro_dir = os.path.join(scratch, "repros")
        if os.path.isdir(repro_dir):
            for name in sorted(os.listdir(repro_dir)):
                with open(os.path.join(repro_dir, name), "rb") as f:
                    repros[name] = f.read()
        return {"index": index, "report": report, "repros": repros, "pid": os.getpid(),
                "host": os.uname().nodename, "seconds": time.monotonic() - started}
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


class Progress:
    """One bar for the whole sweep on a terminal; one line per finished shard otherwise."""

    def __init__(self, count, stream=sys.stderr):
        self.count, self.stream = count, stream
        self.done = self.runs = self.failed = self.retried = 0
        self.tty = stream.isatty()
        self.started = time.monotonic()

    def shard_done(self, index, report):
        self.done += 1
        self.runs += report["runs"]
        self.failed += report["failed_runs"]
        self.show(f"shard {index}/{self.count} done")

    def retry(self, index, reason):
        self.retried += 1
        self.show(f"shard {index}/{self.count} retried ({reason})")

    def show(self, event):
        elapsed = time.monotonic() - self.started
        width = 30
        filled = width * self.done // self.count
        line = (f"[{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.count} shards, "
                f"{self.runs} runs, {self.failed} failed, {self.retried} retried, {elapsed:.1f} s")
        if self.tty:
            self.stream.write("\r" + line + ("\n" if self.done == self.count else ""))
        else:
            self.stream.write(f"[sweep] {line}: {event}\n")
        self.stream.flush()


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="tools/sweep", description=__doc__.split("\n\n")[0],
        epilog="Other options go to `restoresim explore` (e.g. --scenario, --seeds, "
               "--seed-start, --strategy, --jobs, --steps-max, --repros-max).")
    p.add_argument("--address", help="a Dask scheduler (tcp://HOST:PORT); default: start a "
                   "LocalCluster")
    p.add_argument("--shards", type=int, required=True, help="shards to split the sweep into")
    p.add_argument("--workers", type=int, default=2,
                   help="worker processes of the LocalCluster (default 2; not with --address)")
    p.add_argument("--bin", required=True, help="the restoresim binary (its path on the workers)")
    p.add_argument("--out", default="restoresim-sweep",
                   help="where shard reports, merged.json and repros/ go (default %(default)s)")
    p.add_argument("--retries", type=int, default=3,
                   help="resubmissions of a shard whose worker died (default %(default)s)")
    p.add_argument("--json", action="store_true", help="print the merged report as JSON")
    args, explore_args = p.parse_known_args(argv)
    for a in explore_args:
        if a.split("=")[0] in DRIVER_OWNED:
            p.error(f"{a.split('=')[0]} is set by the driver for each shard")
    if not 1 <= args.shards <= 100000:
        p.error("--shards must be in [1, 100000]")
    if not 1 <= args.workers <= 256:
        p.error("--workers must be in [1, 256]")
    if args.retries < 0:
        p.error("--retries must be >= 0")
    args.bin = os.path.abspath(args.bin)
    if args.address and "--workers" in argv:
        p.error("--workers starts a local cluster; not with --address")
    return args, explore_args


def save_shard(out, result):
    folder = os.path.join(out, "shards", str(result["index"]))
    os.makedirs(os.path.join(folder, "repros"), exist_ok=True)
    with open(os.path.join(folder, "shard.json"), "w", encoding="utf-8") as f:
        f.write(result["report"])
    for name, data in result["repros"].items():
        with open(os.path.join(folder, "repros", os.path.basename(name)), "wb") as f:
            f.write(data)
    return json.loads(result["report"])


def run_sweep(client, args, explore_args, progress):
    """Submits every shard and collects them; resubmits a shard whose worker died."""
    from distributed import as_completed  # pylint: disable=import-outside-toplevel
    from distributed.comm.core import CommClosedError  # pylint: disable=import-outside-toplevel
    attempts = {}

    def submit(index):
        attempts[index] = attempts.get(index, 0) + 1
        return client.submit(run_shard, args.bin, explore_args, index, args.shards,
                             key=f"restoresim-shard-{index}-try{attempts[index]}", pure=False)

    futures = {submit(i): i for i in range(args.shards)}
    workers = {}
    pending = as_completed(list(futures))
    for future in pending:
        index = futures.pop(future)
        try:
            result = future.result()
        except Exception as e:  # pylint: disable=broad-except
            # ShardFailed comes back re-created from the worker: matched by name.
            if type(e).__name__ == "ShardFailed":
                raise ShardFailed(str(e)) from e
            killed = type(e).__name__ == "KilledWorker" or isinstance(
                e, (CommClosedError, ConnectionError))
            if not killed or attempts[index] > args.retries:
                raise ShardFailed(f"shard {index}/{args.shards}: {type(e).__name__}: {e}") from e
            progress.retry(index, type(e).__name__)
            again = submit(index)
            futures[again] = index
            pending.add(again)
            continue
        report = save_shard(args.out, result)
        workers[index] = f"{result['host']}:{result['pid']}"
        progress.shard_done(index, report)
    return workers


def main(argv):
    args, explore_args = parse_args(argv)
    from distributed import Client, LocalCluster  # pylint: disable=import-outside-toplevel
    import dask  # pylint: disable=import-outside-toplevel

    shutil.rmtree(os.path.join(args.out, "shards"), ignore_errors=True)
    shutil.rmtree(os.path.join(args.out, "repros"), ignore_errors=True)
    os.makedirs(args.out, exist_ok=True)
    started = time.monotonic()
    cluster = None
    with dask.config.set({"distributed.scheduler.allowed-failures": args.retries}):
        if args.address:
            try:
                client = Client(args.address, timeout="30s")
            except (OSError, TimeoutError) as e:
                print(f"tools/sweep: cannot reach the Dask scheduler at {args.address}: {e}",
                      file=sys.stderr)
                return 2
        else:
            cluster = LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                                   host="127.0.0.1", dashboard_address=None)
            client = Client(cluster)
        try:
            progress = Progress(args.shards)
            workers = run_sweep(client, args, explore_args, progress)
        except ShardFailed as e:
            print(f"tools/sweep: {e}", file=sys.stderr)
            return EXIT_SHARD_FAILED
        finally:
            client.close()
            if cluster is not None:
                cluster.close()
    seconds = time.monotonic() - started
    with open(os.path.join(args.out, "sweep.json"), "w", encoding="utf-8") as f:
        json.dump({"shards": args.shards, "retried": progress.retried, "seconds": seconds,
                   "workers": {str(i): w for i, w in sorted(workers.items())}}, f, indent=2)
    print(f"[sweep] {args.shards} shards on {len(set(workers.values()))} worker processes, "
          f"{progress.retried} retried, {seconds:.1f} s end to end "
          f"({progress.runs / seconds:.0f} runs/s, cluster start included)", file=sys.stderr)
    shard_files = [os.path.join("shards", str(i), "shard.json") for i in range(args.shards)]
    merge = [args.bin, "merge", *shard_files, "--repros-to", "repros",
             "--json-out", "merged.json"] + (["--json"] if args.json else [])
    return subprocess.run(merge, cwd=args.out, check=False).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
