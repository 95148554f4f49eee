"""tools/mutation-score: a mutation score of the runtime, measured by the project's catalogue.

  tools/mutation-score run --sample 60 --seed 1 --shard 0/2 --out shard0.json
  tools/mutation-score merge shard0.json shard1.json [--json] [--out merged.json]
  tools/mutation-score list --sample 60 --seed 1 [--shard 0/2]   # the sample, nothing built
  tools/mutation-score show merged.json                          # a JSON report as text

`run` builds each mutant in a scratch copy (scratch.py), runs the catalogue on it and
classifies it (judge.py); see docs/MUTATION_SCORE.md. Exit codes: 0 done, 1 (run --mutants
with expectations) a mutant not classified as expected, 2 bad usage, 3 the setup failed (no
build, a baseline that fails, no scratch), 130 interrupted (the report so far is written).
"""

import argparse
import hashlib
import importlib.metadata
import json
import os
import signal
import sys
import time

import judge
import mutants as mutants_mod
import report
import scratch as scratch_mod

EXIT_OK, EXIT_UNEXPECTED, EXIT_USAGE, EXIT_SETUP, EXIT_INTERRUPTED = 0, 1, 2, 3, 130
DEFAULT_STRATEGIES = "random,pct:3,pos"
KNOWN_STRATEGY_PREFIXES = ("random", "pos", "pct:")
TIMEOUT_FACTOR = 5
TIMEOUT_FLOOR_S = 60
SAMPLE_MAX = 100_000
SEEDS_MAX = 1_000_000


class UsageError(Exception):
    pass


def log(text):
    print(f"[mutation-score {time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)


def positive_int(name, text, maximum):
    try:
        value = int(text)
    except (TypeError, ValueError):
        raise UsageError(f"{name} {text!r}: expected a whole number") from None
    if value < 1 or value > maximum:
        raise UsageError(f"{name} {value}: expected 1 to {maximum}")
    return value


def parse_shard(text):
    parts = text.split("/")
    try:
        index, count = int(parts[0]), int(parts[1])
        if len(parts) != 2 or count < 1 or not 0 <= index < count:
            raise ValueError
    except (ValueError, IndexError):
        raise UsageError(f"--shard {text!r}: expected I/N with 0 <= I < N "
                         f"(e.g. 0/4)") from None
    return index, count


def parse_strategies(text):
    found = [s.strip() for s in text.split(",") if s.strip()]
    if not found or any(not s.startswith(KNOWN_STRATEGY_PREFIXES) for s in found):
        raise UsageError(f"--strategies {text!r}: expected a comma-separated list of "
                         f"random, pos, pct:D")
    return found


def parser():
    p = argparse.ArgumentParser(prog="tools/mutation-score", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="build, run and classify a sample of mutants")
    lst = sub.add_parser("list", help="print the sample (nothing built or run)")
    for q in (run, lst):
        q.add_argument("--sample", help="mutants drawn from the population (N)")
        q.add_argument("--seed", default="0", help="the sample's seed (default 0)")
        q.add_argument("--mutants", help="hand-written mutants (JSON) instead of a sample")
        q.add_argument("--shard", default="0/1", help="only shard I of N of the sample")
        q.add_argument("--root", default=os.path.join(os.path.dirname(__file__), "..", ".."),
                       help="the source root (default: this checkout)")
    run.add_argument("--build", help="the build dir to copy (default ROOT/build)")
    run.add_argument("--scratch", help="scratch dir (same path length as ROOT; default "
                                       "/tmp/rsm<hash>)")
    run.add_argument("--seeds", default="250", help="seeds per scenario and strategy (250: "
                                                   "about 10 s per strategy on 2 cores)")
    run.add_argument("--quick-seeds", default="10", help="seeds of the quick pass (0: none)")
    run.add_argument("--strategies", default=DEFAULT_STRATEGIES)
    run.add_argument("--jobs", default="2", help="restoresim explore --jobs")
    run.add_argument("--timeout-s", help="wall-clock limit of a full sweep (default: 5 times "
                                         "the slowest baseline sweep, at least 60 s)")
    run.add_argument("--json", action="store_true", help="print the JSON report")
    run.add_argument("--out", help="write the JSON report here (after every mutant)")
    run.add_argument("--resume", help="a report of this shard (an interrupted run's --out): "
                                      "its mutants are kept, not run again")
    merge = sub.add_parser("merge", help="merge shard reports into one")
    merge.add_argument("reports", nargs="+")
    merge.add_argument("--json", action="store_true")
    merge.add_argument("--out")
    show = sub.add_parser("show", help="a JSON report as text")
    show.add_argument("report")
    show.add_argument("--markdown", action="store_true",
                      help="the survivors and non-invariant kills as Markdown, with diffs")
    return p


def chosen_mutants(args):
    """(campaign fields, the shard's mutants with their sample positions)."""
    root = os.path.realpath(args.root)
    index, count = parse_shard(args.shard)
    if args.mutants and args.sample:
        raise UsageError("--mutants and --sample exclude each other")
    if args.mutants:
        chosen = mutants_mod.load_hand_written(root, args.mutants)
        campaign = {"mutants_file": os.path.basename(args.mutants), "seed": None,
                    "sample": len(chosen), "population": None}
    else:
        if args.sample is None:
            raise UsageError("give --sample N (with --seed S) or --mutants FILE")
        size = positive_int("--sample", args.sample, SAMPLE_MAX)
        try:
            seed = int(args.seed)
        except ValueError:
            raise UsageError(f"--seed {args.seed!r}: expected a whole number") from None
        everything = mutants_mod.population(root)
        chosen = mutants_mod.sample(everything, size, seed)
        campaign = {"mutants_file": None, "seed": seed, "sample": size,
                    "population": len(everything)}
    files = sorted({m.file for m in chosen} | set(mutants_mod.source_files(root)))
    campaign.update(tree=mutants_mod.tree_digest(root, files),
                    universalmutator=importlib.metadata.version("universalmutator"),
                    rules=list(mutants_mod.RULES))
    positioned = list(enumerate(chosen))
    return campaign, [(p, m) for p, m in positioned if p % count == index], (index, count)


def cmd_list(args):
    campaign, chosen, _ = chosen_mutants(args)
    print(f"# population {campaign['population']}, tree {campaign['tree']}")
    for position, m in chosen:
        print(f"{position}\t{m.id}\t{m.file}:{m.line}\t{m.rule}")
    return EXIT_OK


def record_of(position, m, root):
    lines = mutants_mod.read_lines(root, m.file)
    return {"position": position, "id": m.id, "name": m.name or None, "file": m.file,
            "line": m.line, "function": mutants_mod.enclosing_function(lines, m.line),
            "rule": m.rule, "original": m.original, "replacement": m.replacement,
            "diff": mutants_mod.diff(lines, m), "expect": m.expect or None}


def run_one(s, m, rec, ctx):
    """Builds and judges one mutant in the scratch; fills rec. The scratch file stays mutated
    (the caller restores it)."""
    lines = mutants_mod.read_lines(ctx["root"], m.file)
    s.write_source(m.file, mutants_mod.apply(lines, m))
    started = time.monotonic()
    ok, output = s.build_target()
    rec["build_s"] = round(time.monotonic() - started, 1)
    if not ok:
        rec["build"] = "failed"
        rec["build_error"] = _first_error(output)
        return
    if scratch_mod.object_digest(s.object_of(m.file)) == ctx["objects"][m.file]:
        rec.update(build="identical", **{"class": "survived_unreached"},
                   judge={"first_failure": None, "sweeps": [], "changed_scenarios": [],
                          "note": "object file identical to the unmutated one: not run"})
        return
    rec["build"] = "ok"
    started = time.monotonic()
    verdict = judge.judge(s.binary, ctx["baseline"], ctx["strategies"], ctx["seeds"],
                          ctx["quick_seeds"], ctx["jobs"], ctx["timeout_s"])
    rec["run_s"] = round(time.monotonic() - started, 1)
    rec["class"] = verdict.pop("class")
    rec["judge"] = verdict


def _first_error(output):
    for line in output.splitlines():
        if "error" in line:
            return line.strip()[:300]
    return output.strip().splitlines()[-1][:300] if output.strip() else ""


def prepare(args):
    root = os.path.realpath(args.root)
    build = os.path.realpath(args.build or os.path.join(root, "build"))
    ctx = {"root": root, "strategies": parse_strategies(args.strategies),
           "seeds": positive_int("--seeds", args.seeds, SEEDS_MAX),
           "quick_seeds": 0 if args.quick_seeds == "0" else
           positive_int("--quick-seeds", args.quick_seeds, SEEDS_MAX),
           "jobs": positive_int("--jobs", args.jobs, 256)}
    timeout_s = (positive_int("--timeout-s", args.timeout_s, 86_400)
                 if args.timeout_s is not None else None)
    campaign, chosen, shard = chosen_mutants(args)
    campaign.update(seeds=ctx["seeds"], quick_seeds=ctx["quick_seeds"],
                    strategies=ctx["strategies"], scenarios=judge.SCENARIOS)
    log(f"{len(chosen)} mutants in shard {shard[0]}/{shard[1]} "
        f"(population {campaign['population']}, source {campaign['tree']})")
    s = scratch_mod.acquire(root, build, args.scratch, log)
    ctx["baseline"] = cached_baseline(s, ctx)
    ctx["timeout_s"] = timeout_s or judge.timeout_for(ctx["baseline"], TIMEOUT_FACTOR,
                                                      TIMEOUT_FLOOR_S)
    log(f"wall-clock limit per sweep: {ctx['timeout_s']:.0f} s")
    ctx["objects"] = {f: scratch_mod.object_digest(s.object_of(f))
                      for f in sorted({m.file for _, m in chosen})}
    return ctx, campaign, chosen, shard, s


def cached_baseline(s, ctx):
    """The unmutated catalogue's sweeps, kept in the scratch per (binary, seeds, strategies):
    a resumed or later run of the same build does not sweep it again."""
    key = hashlib.sha256()
    with open(s.binary, "rb") as f:
        key.update(f.read())
    key.update(f"{ctx['seeds']}\0{','.join(ctx['strategies'])}".encode())
    path = os.path.join(s.path, f".baseline-{key.hexdigest()[:16]}.json")
    if os.path.exists(path):
        with open(path) as f:
            log(f"scratch {s.path}; baseline of the unmutated runtime from {path}")
            return json.load(f)
    log(f"scratch {s.path}; baseline of the unmutated runtime")
    base = judge.baseline(s.binary, ctx["strategies"], ctx["seeds"], ctx["jobs"], log)
    with open(path + ".tmp", "w") as f:
        json.dump(base, f)
    os.replace(path + ".tmp", path)
    return base


def baseline_summary(base):
    return {k: {"trace_hash": v["trace_hash"], "runs": v["runs"], "scenarios": v["scenarios"]}
            for k, v in base.items()}


def resumed(args, campaign, base, shard):
    """{id: record} of the mutants a previous run of this shard judged (--resume)."""
    if not args.resume:
        return {}
    prev = report.load(args.resume)
    if prev["campaign"] != campaign:
        raise UsageError(f"--resume {args.resume}: another campaign")
    if {k: v["trace_hash"] for k, v in prev["baseline"].items()} != \
            {k: v["trace_hash"] for k, v in base.items()}:
        raise UsageError(f"--resume {args.resume}: its baseline trace hashes differ from this "
                         f"build's")
    if prev["shards"] != {"count": shard[1], "present": [shard[0]]}:
        raise UsageError(f"--resume {args.resume}: not a report of shard {shard[0]}/{shard[1]}")
    return {m["id"]: m for m in prev["mutants"]}


def cmd_run(args):
    ctx, campaign, chosen, shard, s = prepare(args)
    done = resumed(args, campaign, ctx["baseline"], shard)
    records, interrupted, mutated = [], False, None
    ordered = sorted(chosen, key=lambda pm: (pm[1].file, pm[1].line, pm[0]))
    try:
        for n, (position, m) in enumerate(ordered):
            if m.id in done:
                records.append(done[m.id])
                continue
            rec = record_of(position, m, ctx["root"])
            mutated = m.file
            run_one(s, m, rec, ctx)
            if n + 1 == len(ordered) or ordered[n + 1][1].file != m.file:
                s.restore_source(m.file)  # the next mutant overwrites it otherwise
                mutated = None
            records.append(rec)
            log(f"{n + 1}/{len(ordered)} {m.id} {m.file}:{m.line}: "
                f"{rec.get('class') if rec['build'] != 'failed' else 'dropped'} "
                f"(build {rec['build_s']} s, run {rec.get('run_s', 0)} s)")
            _write(args, report.make(campaign, baseline_summary(ctx["baseline"]), shard[0],
                                     shard[1], records, interrupted=True))
    except KeyboardInterrupt:
        interrupted = True
        log("interrupted: writing the report so far")
    finally:
        if mutated:
            s.restore_source(mutated)
    doc = report.make(campaign, baseline_summary(ctx["baseline"]), shard[0], shard[1],
                      records, interrupted)
    _write(args, doc)
    print(json.dumps(doc, indent=1) if args.json else report.text(doc), end="")
    if interrupted:
        return EXIT_INTERRUPTED
    return EXIT_UNEXPECTED if _unexpected(doc) else EXIT_OK


def _unexpected(doc):
    bad = []
    for m in doc["mutants"]:
        got = "dropped" if m["build"] == "failed" else m["class"]
        if m.get("expect") and got not in m["expect"]:
            bad.append(f"{m['name'] or m['id']}: {got}, expected {' or '.join(m['expect'])}")
    for line in bad:
        log("unexpected: " + line)
    return bad


def _write(args, doc):
    if not args.out:
        return
    tmp = args.out + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    os.replace(tmp, args.out)


def cmd_merge(args):
    docs = [report.load(path) for path in args.reports]
    merged = report.merge(docs, args.reports)
    if not merged["complete"]:
        log(f"merged {len(merged['shards']['present'])} of {merged['shards']['count']} "
            f"shards{' (some interrupted)' if merged['interrupted'] else ''}: not complete")
    _write(args, merged)
    print(json.dumps(merged, indent=1) if args.json else report.text(merged), end="")
    return EXIT_OK


def cmd_show(args):
    doc = report.load(args.report)
    print(report.markdown(doc) if args.markdown else report.text(doc), end="")
    return EXIT_OK


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def main(argv):
    signal.signal(signal.SIGTERM, _interrupt)
    args = parser().parse_args(argv)
    commands = {"run": cmd_run, "list": cmd_list, "merge": cmd_merge, "show": cmd_show}
    try:
        return commands[args.command](args)
    except (UsageError, mutants_mod.MutantError) as e:
        print(f"tools/mutation-score: {e}", file=sys.stderr)
        return EXIT_USAGE
    except report.ReportError as e:
        print(f"tools/mutation-score {args.command}: {e}", file=sys.stderr)
        return EXIT_USAGE
    except (scratch_mod.ScratchError, judge.JudgeError) as e:
        print(f"tools/mutation-score: {e}", file=sys.stderr)
        return EXIT_SETUP
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
