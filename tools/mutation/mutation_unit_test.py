"""mutation_unit_test (suite sweep): the mutation-score tool's pure parts, in a second.

How a sweep's JSON is classified (an invariant outranks a check, a check a step budget, a
crash and a hang are judged without a report), the score, merging (and its refusals), a
mutant applied and diffed, the enclosing function, shard and sample arithmetic. The whole tool,
built mutants and all, is mutation_score_test (suite slow).
"""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import judge  # noqa: E402
import mutants  # noqa: E402
import report  # noqa: E402
from mutation_score import UsageError, parse_shard  # noqa: E402


def failure(kind, invariant=""):
    return {"scenario": "scenario.x", "seed": 3, "message": f"{kind} failed",
            "failure": {"kind": kind, "invariant": invariant}}


def sweep(*failures):
    return {"failures": list(failures), "failed_runs": len(failures), "scenarios": []}


OK_NOTE = {"exit": 1, "wall_s": 1.0, "timed_out": False}


class VerdictTest(unittest.TestCase):
    def test_an_invariant_outranks_a_check_and_a_budget(self):
        report_ = sweep(failure("step-budget"), failure("check"), failure("invariant", "x"))
        verdict, first = judge.verdict_of("pos", report_, OK_NOTE)
        self.assertEqual(verdict, "invariant")
        self.assertEqual(first["invariant"], "x")

    def test_a_check_or_an_exception_is_the_runtime(self):
        for kind in ("check", "exception", "other"):
            verdict, _ = judge.verdict_of("pos", sweep(failure("deadlock"), failure(kind)),
                                          OK_NOTE)
            self.assertEqual(verdict, "runtime", kind)

    def test_budgets_and_deadlocks_are_liveness(self):
        verdict, _ = judge.verdict_of("pos", sweep(failure("deadlock")), OK_NOTE)
        self.assertEqual(verdict, "liveness")

    def test_no_report(self):
        crash = {"exit": -11, "wall_s": 1.0, "timed_out": False, "stderr": "boom"}
        self.assertEqual(judge.verdict_of("pos", None, crash)[0], "runtime")
        hang = {"exit": -9, "wall_s": 60.0, "timed_out": True}
        self.assertEqual(judge.verdict_of("pos", None, hang)[0], "liveness")

    def test_a_clean_sweep(self):
        self.assertEqual(judge.verdict_of("pos", sweep(), {**OK_NOTE, "exit": 0}),
                         ("none", None))


def record(position, klass, build="ok"):
    return {"position": position, "id": f"m{position}", "class": klass, "build": build,
            "file": "core/x.cc", "line": 1, "rule": "r", "diff": ""}


CAMPAIGN = {"seed": 1, "sample": 4, "tree": "t"}
BASELINE = {"pos": {"trace_hash": "0x1", "runs": 1, "scenarios": {}}}


class ReportTest(unittest.TestCase):
    def shards(self):
        a = report.make(CAMPAIGN, BASELINE, 0, 2, [record(0, "killed_invariant"),
                                                  record(2, None, build="failed")], False)
        b = report.make(CAMPAIGN, BASELINE, 1, 2, [record(1, "survived_reached"),
                                                  record(3, "survived_unreached")], False)
        return a, b

    def test_merge_adds_up_and_scores(self):
        merged = report.merge(list(self.shards()), ["a", "b"])
        self.assertTrue(merged["complete"])
        self.assertEqual([m["position"] for m in merged["mutants"]], [0, 1, 2, 3])
        self.assertEqual(merged["counts"]["dropped"], 1)
        self.assertEqual(merged["score"]["hash_changed"], 2)
        self.assertEqual(merged["score"]["percent"], 50.0)
        self.assertFalse(merged["score"]["target_met"])

    def test_merge_refuses(self):
        a, b = self.shards()
        with self.assertRaisesRegex(report.ReportError, "shard 0 is in two"):
            report.merge([a, a], ["a", "a2"])
        other = dict(b, campaign=dict(CAMPAIGN, seed=2))
        with self.assertRaisesRegex(report.ReportError, "another campaign"):
            report.merge([a, other], ["a", "b"])
        rebuilt = dict(b, baseline={"pos": dict(BASELINE["pos"], trace_hash="0x2")})
        with self.assertRaisesRegex(report.ReportError, "baseline"):
            report.merge([a, rebuilt], ["a", "b"])

    def test_an_incomplete_merge_says_so(self):
        a, _ = self.shards()
        self.assertFalse(report.merge([a], ["a"])["complete"])


SOURCE = ["namespace x {\n", "\n", "int Foo::Bar(int a) {\n", "  if (a == 1) return 2;\n",
          "  return a;\n", "}\n"]


class MutantTest(unittest.TestCase):
    def test_apply_diff_and_function(self):
        m = mutants.Mutant(file="core/x.cc", line=4, original=SOURCE[3],
                           replacement="  if (a != 1) return 2;\n", rule="== ==> !=")
        self.assertIn("+  if (a != 1) return 2;", mutants.diff(SOURCE, m))
        self.assertEqual(mutants.enclosing_function(SOURCE, 4), "Foo::Bar")
        self.assertEqual(mutants.enclosing_function(SOURCE, 1), "")
        moved = mutants.Mutant(file="core/x.cc", line=5, original=SOURCE[3],
                               replacement="x\n", rule="r")
        with self.assertRaises(mutants.MutantError):
            mutants.apply(SOURCE, moved)

    def test_sample_and_shards(self):
        population = [mutants.Mutant(file="f.cc", line=i, original="a\n",
                                     replacement=f"b{i}\n", rule="r") for i in range(1, 40)]
        s1 = mutants.sample(population, 10, 1)
        self.assertEqual(s1, mutants.sample(list(reversed(population)), 10, 1))
        self.assertNotEqual(s1, mutants.sample(population, 10, 2))
        parts = [m for i in range(3) for m in mutants.shard_of(s1, i, 3)]
        self.assertEqual(sorted(m.id for m in parts), sorted(m.id for m in s1))
        with self.assertRaises(mutants.MutantError):
            mutants.sample(population, 40, 1)

    def test_hand_written_occurrence(self):
        import json
        import tempfile
        with tempfile.TemporaryDirectory() as root:
            os.makedirs(os.path.join(root, "core"))
            with open(os.path.join(root, "core/x.cc"), "w") as f:
                f.write("int a() {\n  return 1;\n}\nint b() {\n  return 1;\n}\n")
            entry = {"name": "n", "file": "core/x.cc", "original": "return 1;",
                     "replacement": "return 2;"}
            path = os.path.join(root, "m.json")

            def load(**extra):
                with open(path, "w") as f:
                    json.dump([dict(entry, **extra)], f)
                return mutants.load_hand_written(root, path)

            with self.assertRaisesRegex(mutants.MutantError, "2 lines"):
                load()  # two lines read so: which one is ambiguous
            self.assertEqual(load(occurrence=1)[0].line, 5)
            self.assertEqual(load(occurrence=0)[0].replacement, "  return 2;\n")
            for bad in (2, -1, "1", True):
                with self.assertRaisesRegex(mutants.MutantError, "occurrence", msg=bad):
                    load(occurrence=bad)

    def test_shard_syntax(self):
        self.assertEqual(parse_shard("1/3"), (1, 3))
        for bad in ("3/3", "-1/2", "1", "a/b", "1/0", "1/2/3"):
            with self.assertRaises(UsageError, msg=bad):
                parse_shard(bad)


if __name__ == "__main__":
    unittest.main()
