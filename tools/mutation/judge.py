"""Runs the catalogue on a binary and classifies a mutant against the unmutated baseline.

For each strategy, `restoresim explore --scenario 'scenario.*' --seeds S --json` (the zoo's
budget: about 10 s per strategy on 2 cores). A mutant is classified by the strongest verdict
any run reached, in this order:

  killed_invariant    a run failed with kind "invariant": an oracle checker, a scenario's own
                      check, or the runtime's inline RS_INVARIANT (it names an oracle invariant)
  killed_runtime      only runtime checks (RS_CHECK: kind "check"), uncaught exceptions, a
                      program's own failure (kind "other"), or restoresim itself crashed
  killed_liveness     only deadlocks, step budgets (livelock), or the wall-clock limit (a
                      sweep past it with no run failed is run again with twice the limit
                      first: on a loaded machine it may only be slow)
  survived_reached    no run failed, but some scenario's trace hash differs from the baseline
  survived_unreached  no run failed and every trace hash equals the baseline's (never reached
                      or equivalent); also a mutant whose object file is byte-identical

A quick pass (the first few seeds of each strategy) runs first: an invariant failure there
decides the class at once, as the full pass would (it runs those seeds too).
"""

import json
import os
import signal
import subprocess
import time

SCENARIOS = "scenario.*"
KILL_GRACE_S = 10
QUICK_TIMEOUT_FLOOR_S = 60
CLASSES = ("killed_invariant", "killed_runtime", "killed_liveness", "survived_reached",
           "survived_unreached")
KILLED = CLASSES[:3]
RUNTIME_KINDS = ("check", "exception", "other")
LIVENESS_KINDS = ("deadlock", "step-budget")


class JudgeError(Exception):
    """The baseline is unusable (it fails, or restoresim cannot run)."""


def explore(binary, strategy, seeds, jobs, timeout_s):
    """One sweep; returns (report or None, note). SIGTERM at the limit, then SIGKILL."""
    cmd = [binary, "explore", "--scenario", SCENARIOS, "--seeds", str(seeds), "--strategy",
           strategy, "--jobs", str(jobs), "--json", "--repro-dir", "", "--quiet"]
    started = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    timed_out = False
    try:
        out, err = proc.communicate(timeout=timeout_s)
    except BaseException as e:
        if not isinstance(e, subprocess.TimeoutExpired):
            proc.kill()  # interrupted: no orphan sweep left running
            proc.wait()
            raise
        timed_out = True
        proc.send_signal(signal.SIGTERM)  # explore prints what it has so far (exit 130)
        try:
            out, err = proc.communicate(timeout=KILL_GRACE_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
    wall_s = time.monotonic() - started
    report = None
    try:
        report = json.loads(out) if out.strip() else None
    except ValueError:
        report = None
    note = {"exit": proc.returncode, "wall_s": round(wall_s, 2), "timed_out": timed_out}
    if report is None:
        note["stderr"] = err[-2000:]
    return report, note


def scenario_hashes(report):
    return {s["name"]: s["trace_hash"] for s in report.get("scenarios", [])}


def baseline(binary, strategies, seeds, jobs, log):
    """The unmutated catalogue: per strategy, its hashes and wall time. Must pass."""
    result = {}
    for strategy in strategies:
        report, note = explore(binary, strategy, seeds, jobs, timeout_s=None)
        if report is None or report.get("failed_runs", 1) != 0 or note["exit"] != 0:
            raise JudgeError(f"the unmutated catalogue does not pass under {strategy} "
                             f"({note}): a mutation score needs a clean baseline")
        result[strategy] = {"trace_hash": report["trace_hash"],
                            "scenarios": scenario_hashes(report),
                            "runs": report["runs"], "wall_s": note["wall_s"]}
        log(f"baseline {strategy}: {report['runs']} runs, trace hash {report['trace_hash']}, "
            f"{note['wall_s']:.1f} s")
    return result


def _failure_entry(strategy, failure):
    f = failure.get("failure", {})
    return {"strategy": strategy, "scenario": failure.get("scenario"),
            "seed": failure.get("seed"), "kind": f.get("kind"),
            "invariant": f.get("invariant") or None,
            "message": (failure.get("message") or "").split("\n")[0][:300]}


def verdict_of(strategy, report, note):
    """What one sweep says: ('invariant'|'runtime'|'liveness'|'none', first failure)."""
    if report is None:
        if note["timed_out"]:
            return "liveness", {"strategy": strategy, "kind": "wall-clock limit",
                                "message": f"no report within {note['wall_s']} s"}
        return "runtime", {"strategy": strategy, "kind": "crash",
                           "message": f"restoresim exited {note['exit']}: "
                                      f"{note.get('stderr', '').strip()[-300:]}"}
    failures = report.get("failures", [])
    for want, kinds in (("invariant", ("invariant",)), ("runtime", RUNTIME_KINDS),
                        ("liveness", LIVENESS_KINDS)):
        for failure in failures:
            if failure.get("failure", {}).get("kind") in kinds:
                return want, _failure_entry(strategy, failure)
    if failures:  # a kind this tool does not know: judged as a runtime failure, shown
        return "runtime", _failure_entry(strategy, failures[0])
    if report.get("failed_runs", 0) > 0 or note["timed_out"]:
        return "liveness", {"strategy": strategy, "kind": "wall-clock limit",
                            "message": f"interrupted after {note['wall_s']} s"}
    return "none", None


RANK = {"invariant": 3, "runtime": 2, "liveness": 1, "none": 0}


def explore_patiently(binary, strategy, seeds, jobs, timeout_s):
    """A sweep that hit its wall-clock limit with no run failed may only be slow (a loaded
    machine): it runs once more with twice the limit before it counts as a hang."""
    report, note = explore(binary, strategy, seeds, jobs, timeout_s)
    if note["timed_out"] and report is not None and not report.get("failures"):
        report, note = explore(binary, strategy, seeds, jobs, 2 * timeout_s)
        note["retried_after_s"] = timeout_s
    return report, note


def judge(binary, base, strategies, seeds, quick_seeds, jobs, timeout_s):
    """Classifies the mutant built into `binary`. Returns a dict for the report."""
    best, first, changed, sweeps = "none", None, set(), []
    if quick_seeds:
        # The quick pass's limit in proportion to its seeds: a hang shows in a minute.
        quick_timeout_s = max(QUICK_TIMEOUT_FLOOR_S, timeout_s * quick_seeds / seeds)
        for strategy in strategies:
            report, note = explore(binary, strategy, quick_seeds, jobs, quick_timeout_s)
            verdict, failure = verdict_of(strategy, report, note)
            sweeps.append({"strategy": strategy, "seeds": quick_seeds, "verdict": verdict,
                           **note})
            if verdict == "invariant":
                return {"class": "killed_invariant", "first_failure": failure,
                        "sweeps": sweeps, "changed_scenarios": []}
            if note["timed_out"] and verdict == "liveness":  # a hang: see below
                return {"class": "killed_liveness", "first_failure": failure,
                        "sweeps": sweeps, "changed_scenarios": []}
    for strategy in strategies:
        report, note = explore_patiently(binary, strategy, seeds, jobs, timeout_s)
        verdict, failure = verdict_of(strategy, report, note)
        sweeps.append({"strategy": strategy, "seeds": seeds, "verdict": verdict, **note})
        if RANK[verdict] > RANK[best]:
            best, first = verdict, failure
        if report is not None and not note["timed_out"]:
            hashes = scenario_hashes(report)
            for name, h in base[strategy]["scenarios"].items():
                if hashes.get(name) != h:
                    changed.add(name)
        if verdict == "invariant":
            break
        if note["timed_out"] and verdict == "liveness":
            # A hang: the other strategies would hang as long; their runs are not judged.
            sweeps.append({"skipped": "strategies after a wall-clock limit"})
            break
    if best != "none":
        klass = "killed_" + best
    else:
        klass = "survived_reached" if changed else "survived_unreached"
    return {"class": klass, "first_failure": first, "sweeps": sweeps,
            "changed_scenarios": sorted(changed)}


def timeout_for(base, factor, floor_s):
    """The wall-clock limit of one sweep: a multiple of the slowest baseline sweep."""
    slowest = max(b["wall_s"] for b in base.values())
    return max(floor_s, factor * slowest)


def binary_ok(path):
    return os.path.isfile(path) and os.access(path, os.X_OK)
