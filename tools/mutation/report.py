"""The mutation-score report: its JSON form, merging shards, and its text form.

JSON: {"format": "restoresim-mutation-score", "version": 1, "campaign": {...}, "baseline":
{...}, "shards": {"count": N, "present": [...]}, "mutants": [...], "counts": {...},
"score": {...}, "complete": bool}. Shards of one campaign (same campaign fields, same
baseline trace hashes) merge into one report; `campaign` is what makes the sample (seed,
sample size, source digest, universalmutator's version and rules) and the budget (seeds,
strategies), so reports of different campaigns are refused, not added up.
"""

import json

from judge import CLASSES, KILLED

FORMAT = "restoresim-mutation-score"
VERSION = 1
TARGET_PERCENT = 90.0
CLASS_TITLES = {
    "killed_invariant": "killed by an oracle invariant",
    "killed_runtime": "killed only by a runtime check or crash",
    "killed_liveness": "killed by a livelock/step budget/deadlock",
    "survived_reached": "survived, trace hash changed (reached, not judged)",
    "survived_unreached": "survived, trace hash unchanged (never reached or equivalent)",
}


class ReportError(Exception):
    """A report that cannot be read or merged."""


def counts_of(mutants):
    counts = {c: 0 for c in CLASSES}
    counts.update(sampled=len(mutants), dropped=0, identical_object=0)
    for m in mutants:
        if m["build"] == "failed":
            counts["dropped"] += 1
            continue
        counts[m["class"]] += 1
        if m["build"] == "identical":
            counts["identical_object"] += 1
    counts["built"] = counts["sampled"] - counts["dropped"]
    return counts


def score_of(counts):
    changed = sum(counts[c] for c in KILLED) + counts["survived_reached"]
    killed = counts["killed_invariant"]
    percent = round(100.0 * killed / changed, 1) if changed else None
    return {"hash_changed": changed, "killed_invariant": killed, "percent": percent,
            "target_percent": TARGET_PERCENT,
            "target_met": percent is not None and percent >= TARGET_PERCENT}


def make(campaign, baseline, shard_index, shard_count, mutants, interrupted):
    mutants = sorted(mutants, key=lambda m: m["position"])
    counts = counts_of(mutants)
    return {"format": FORMAT, "version": VERSION, "campaign": campaign,
            "baseline": baseline, "shards": {"count": shard_count, "present": [shard_index]},
            "interrupted": interrupted, "complete": shard_count == 1 and not interrupted,
            "mutants": mutants, "counts": counts, "score": score_of(counts)}


def load(path):
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        raise ReportError(f"{path}: {e}") from e
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ReportError(f"{path}: not a {FORMAT} report")
    if doc.get("version") != VERSION:
        raise ReportError(f"{path}: version {doc.get('version')}, this tool reads {VERSION}")
    return doc


def _baseline_hashes(doc):
    return {s: b["trace_hash"] for s, b in doc["baseline"].items()}


def merge(docs, names):
    first = docs[0]
    present, mutants, seen, interrupted = [], [], set(), False
    for doc, name in zip(docs, names):
        if doc["campaign"] != first["campaign"]:
            raise ReportError(f"{name}: another campaign than {names[0]} (campaign differs: "
                              f"{_campaign_difference(first['campaign'], doc['campaign'])})")
        if _baseline_hashes(doc) != _baseline_hashes(first):
            raise ReportError(f"{name}: its baseline trace hashes differ from {names[0]}'s "
                              f"(another build of the runtime?)")
        if doc["shards"]["count"] != first["shards"]["count"]:
            raise ReportError(f"{name}: split into {doc['shards']['count']} shards, "
                              f"{names[0]} into {first['shards']['count']}")
        for index in doc["shards"]["present"]:
            if index in present:
                raise ReportError(f"{name}: shard {index} is in two reports")
            present.append(index)
        for m in doc["mutants"]:
            if m["id"] in seen:
                raise ReportError(f"{name}: mutant {m['id']} is in two reports")
            seen.add(m["id"])
            mutants.append(m)
        interrupted = interrupted or doc.get("interrupted", False)
    mutants.sort(key=lambda m: m["position"])
    counts = counts_of(mutants)
    count = first["shards"]["count"]
    return {"format": FORMAT, "version": VERSION, "campaign": first["campaign"],
            "baseline": first["baseline"],
            "shards": {"count": count, "present": sorted(present)},
            "interrupted": interrupted,
            "complete": len(present) == count and not interrupted,
            "mutants": mutants, "counts": counts, "score": score_of(counts)}


def _campaign_difference(a, b):
    keys = sorted(set(a) | set(b))
    return ", ".join(f"{k}: {a.get(k)!r} vs {b.get(k)!r}" for k in keys if a.get(k) != b.get(k))


def _where(m):
    fn = f" {m['function']}" if m.get("function") else ""
    return f"{m['file']}:{m['line']}{fn}"


def text(doc):
    c, s, camp = doc["counts"], doc["score"], doc["campaign"]
    sample = (f"hand-written mutants {camp['mutants_file']}" if camp.get("mutants_file") else
              f"seed {camp['seed']}, sample {camp['sample']} of {camp['population']} mutants")
    shards = doc["shards"]
    lines = [f"restoresim mutation score: {sample} (universalmutator "
             f"{camp['universalmutator']}, source {camp['tree']})",
             f"  budget: {camp['seeds']} seeds of '{camp['scenarios']}' per strategy "
             f"({', '.join(camp['strategies'])}), quick pass {camp['quick_seeds']} seeds",
             f"  shards: {len(shards['present'])} of {shards['count']} "
             f"({'complete' if doc['complete'] else 'INCOMPLETE'})",
             f"  mutants: {c['sampled']} run, {c['built']} built, {c['dropped']} did not "
             f"build (dropped)"]
    for klass in CLASSES:
        extra = (f" ({c['identical_object']} with identical object code)"
                 if klass == "survived_unreached" and c["identical_object"] else "")
        lines.append(f"  {CLASS_TITLES[klass] + ':':<66}{c[klass]:>5}{extra}")
    if s["percent"] is None:
        lines.append("score: no mutant changed the trace hash")
    else:
        lines.append(f"score: {s['killed_invariant']} of {s['hash_changed']} mutants that change "
                     f"the trace hash killed by an oracle invariant = {s['percent']}% "
                     f"(target {s['target_percent']:.0f}%: "
                     f"{'met' if s['target_met'] else 'not met'})")
    lines += _listing(doc["mutants"])
    return "\n".join(lines) + "\n"


def _listing(mutants):
    lines = ["", "mutants:"]
    for m in mutants:
        klass = "dropped (does not build)" if m["build"] == "failed" else m["class"]
        first = m.get("judge", {}).get("first_failure") or {}
        why = f"  [{first.get('strategy')}] {first.get('message', '')[:120]}" if first else ""
        lines.append(f"  {m['id']} {klass:<20} {_where(m)}{why}")
    for klass in ("survived_reached", "survived_unreached", "killed_runtime",
                  "killed_liveness"):
        chosen = [m for m in mutants if m["build"] != "failed" and m["class"] == klass]
        if not chosen:
            continue
        lines += ["", f"{CLASS_TITLES[klass]}:"]
        for m in chosen:
            changed = m.get("judge", {}).get("changed_scenarios", [])
            lines.append(f"  {m['id']} {_where(m)}  rule: {m['rule']}")
            if changed:
                lines.append(f"    changed: {', '.join(changed[:6])}"
                             f"{' ...' if len(changed) > 6 else ''}")
            lines += ["    " + d for d in m["diff"].splitlines()]
    return lines


def markdown(doc):
    """The survivors and the other non-invariant kills, by file and function, with diffs (the
    body of docs/MUTATION_SCORE.md's listing)."""
    out = []
    for klass in ("survived_reached", "survived_unreached", "killed_runtime",
                  "killed_liveness"):
        chosen = sorted((m for m in doc["mutants"]
                         if m["build"] != "failed" and m["class"] == klass),
                        key=lambda m: (m["file"], m["function"] or "", m["line"]))
        out += [f"### {CLASS_TITLES[klass][0].upper()}{CLASS_TITLES[klass][1:]} "
                f"({len(chosen)})", ""]
        for m in chosen:
            first = (m.get("judge") or {}).get("first_failure") or {}
            note = f" — {first.get('strategy')}: {first.get('message', '')[:200]}" if first else ""
            identical = " (identical object code)" if m["build"] == "identical" else ""
            out += [f"* `{m['file']}` `{m['function'] or '(file scope)'}` line {m['line']}, "
                    f"mutant `{m['id']}`{identical}{note}", "", "  ```diff"]
            out += ["  " + line for line in m["diff"].splitlines() if not
                    line.startswith(("---", "+++", "@@"))]
            out += ["  ```", ""]
    return "\n".join(out) + "\n"
