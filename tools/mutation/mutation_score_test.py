"""mutation_score_test (suite slow): tools/mutation-score end to end on a fixed sample.

The fixed sample (tools/mutation/testdata/fixed_sample.json) holds hand-written mutants whose
class is known (a checkpoint skipped: killed by the oracle's checkpoint_progress; a runtime
check inverted: killed by the check only; a RocksDB-only path: never reached; ++i for i++:
the same object code; a type name broken: does not build) and mutants universalmutator made
in the first campaign, with the class they have today (one of them changes trace hashes and
survives: the condition of a coverage mark; standby progress published late survived so until
the standby_progress checker, and is now killed by it). It is run as two shards, which must
merge into the report of the whole sample; every mutant must get its expected class (the
tool exits 1 otherwise). Bad input must fail with exit 2 (usage) or 3 (setup), and the
sample must be a pure function of the seed.

usage: mutation_score_test.py --root DIR --build DIR   (run with the project's venv)
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

SEEDS = "30"
QUICK_SEEDS = "5"


class Failed(Exception):
    pass


def tool(root, *args, expect_rc=None):
    cmd = [sys.executable, os.path.join(root, "tools/mutation/mutation_score.py"), *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if expect_rc is not None and proc.returncode != expect_rc:
        raise Failed(f"{' '.join(args)}: exit {proc.returncode}, expected {expect_rc}\n"
                     f"stdout: {proc.stdout[-3000:]}\nstderr: {proc.stderr[-3000:]}")
    return proc


def check_bad_input(root, build, tmp):
    usage = [["run", "--sample", "0"], ["run", "--sample", "x"], ["run"],
             ["run", "--sample", "3", "--shard", "2/2"], ["run", "--sample", "3", "--shard", "1"],
             ["run", "--sample", "3", "--strategies", "dfs"],
             ["run", "--sample", "3", "--mutants", "f.json"],
             ["list", "--sample", "100000"], ["merge", os.path.join(root, "README.md")]]
    for args in usage:
        proc = tool(root, *args, "--root", root, expect_rc=2)
        if "tools/mutation-score" not in proc.stderr:
            raise Failed(f"{args}: no message on stderr")
    missing = os.path.join(tmp, "no-build")
    proc = tool(root, "run", "--sample", "1", "--root", root, "--build", missing, expect_rc=3)
    if "no build" not in proc.stderr:
        raise Failed(f"a missing build dir: {proc.stderr}")
    print("bad input: every case refused with its exit code")


def check_sample_is_seeded(root):
    a = tool(root, "list", "--sample", "20", "--seed", "7", "--root", root, expect_rc=0).stdout
    b = tool(root, "list", "--sample", "20", "--seed", "7", "--root", root, expect_rc=0).stdout
    c = tool(root, "list", "--sample", "20", "--seed", "8", "--root", root, expect_rc=0).stdout
    if a != b or a == c:
        raise Failed("the sample is not a function of its seed")
    whole = sorted(a.splitlines()[1:])
    parts = []
    for i in range(3):
        out = tool(root, "list", "--sample", "20", "--seed", "7", "--shard", f"{i}/3",
                   "--root", root, expect_rc=0).stdout
        parts += out.splitlines()[1:]
    if sorted(parts) != whole:
        raise Failed("the shards of a sample do not partition it")
    print("sample: the same for a seed, another for another seed, shards partition it")


def run_shards(root, build, tmp):
    sample = os.path.join(root, "tools/mutation/testdata/fixed_sample.json")
    outs = []
    for i in range(2):
        out = os.path.join(tmp, f"shard{i}.json")
        tool(root, "run", "--mutants", sample, "--shard", f"{i}/2", "--seeds", SEEDS,
             "--quick-seeds", QUICK_SEEDS, "--jobs", "2", "--root", root, "--build", build,
             "--out", out, expect_rc=0)
        outs.append(out)
    merged = os.path.join(tmp, "merged.json")
    tool(root, "merge", *outs, "--out", merged, expect_rc=0)
    tool(root, "merge", outs[0], outs[0], expect_rc=2)  # one shard twice
    with open(merged) as f:
        return json.load(f), len(json.load(open(sample)))


def check_report(doc, size):
    if doc["format"] != "restoresim-mutation-score" or doc["version"] != 1:
        raise Failed(f"format {doc['format']} version {doc['version']}")
    if not doc["complete"] or doc["shards"]["present"] != [0, 1]:
        raise Failed(f"the merged report is not complete: {doc['shards']}")
    counts = doc["counts"]
    classes = ("killed_invariant", "killed_runtime", "killed_liveness", "survived_reached",
               "survived_unreached")
    if counts["sampled"] != size or counts["built"] + counts["dropped"] != size or \
            sum(counts[c] for c in classes) != counts["built"]:
        raise Failed(f"counts do not add up: {counts}")
    for m in doc["mutants"]:
        got = "dropped" if m["build"] == "failed" else m["class"]
        print(f"  {got:<20} {m['name']}")
        if m["expect"] and got not in m["expect"]:
            raise Failed(f"{m['name']}: {got}, expected {m['expect']}")
        if not m["diff"].startswith("--- a/"):
            raise Failed(f"{m['name']}: no diff")
    got = {"dropped" if m["build"] == "failed" else m["class"] for m in doc["mutants"]}
    if got != {"dropped", "killed_invariant", "killed_runtime", "survived_reached",
               "survived_unreached"}:
        raise Failed(f"the fixed sample no longer covers the classes: {sorted(got)}")
    if not any(m["build"] == "identical" for m in doc["mutants"]):
        raise Failed("no mutant was recognised as the same object code")
    print(f"report: {size} mutants, score {doc['score']}")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--root", required=True)
    p.add_argument("--build", required=True)
    args = p.parse_args()
    root, build = os.path.realpath(args.root), os.path.realpath(args.build)
    try:
        with tempfile.TemporaryDirectory(prefix="mutation-score-test-") as tmp:
            check_bad_input(root, build, tmp)
            check_sample_is_seeded(root)
            doc, size = run_shards(root, build, tmp)
            check_report(doc, size)
    except Failed as e:
        print(f"FAILED: {e}")
        print("0 passed, 1 failed")
        return 1
    print("1 passed, 0 failed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
