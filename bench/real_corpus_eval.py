#!/usr/bin/python3
"""How Vigil reads real training logs nobody here wrote (issue: right on real data).

Runs `vigil inspect-log` (the same readers the server applies to every stored
line) on every excerpt of tests/data/real/<split>/*.log and scores it against
the hand-checked <name>.gold.jsonl (format: tests/data/real/README.md):

  metric recall   gold values of loss, learning_rate and grad_norm that Vigil
                  reports under that canonical name, on that line, with that
                  value (relative difference under 1e-6)
  invented        values Vigil reports under a canonical name that the gold
                  does not have on that line (a number it should not have taken)
  event recall    gold event kinds Vigil reports anywhere in the excerpt

The held-out split is the figure that counts: rules are written against dev
only. Usage:
  bench/real_corpus_eval.py --vigil build/src/cli/vigil [--corpus tests/data/real]
                            [--split dev|heldout|all] [--misses] [--by-family]

--by-family prints, per `#vigil family:` value, aggregate counts only (files,
gold values, found, invented, gold events, events found, and per event kind
gold / found): it may be run on held-out to direct where dev data is gathered;
it never prints a line or a file.
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile

CANONICAL = ("loss", "learning_rate", "grad_norm")
HEADER = "#vigil "


def read_excerpt(path):
    """The log body without its `#vigil ` header lines."""
    with open(path, "rb") as f:
        lines = f.read().split(b"\n")
    i = 0
    while i < len(lines) and lines[i].startswith(HEADER.encode()):
        i += 1
    return b"\n".join(lines[i:])


def family_of(path):
    """The excerpt's `#vigil family:` header value."""
    with open(path, "rb") as f:
        for raw in f:
            if not raw.startswith(HEADER.encode()):
                break
            line = raw.decode(errors="replace").strip()
            if line.startswith(HEADER + "family:"):
                return line[len(HEADER + "family:"):].strip()
    return "?"


def inspect(vigil, body):
    with tempfile.NamedTemporaryFile(suffix=".log") as f:
        f.write(body)
        f.flush()
        p = subprocess.run([vigil, "inspect-log", f.name], capture_output=True, timeout=60)
    if p.returncode != 0:
        raise RuntimeError(f"inspect-log failed: {p.stderr.decode(errors='replace')}")
    return [json.loads(line) for line in p.stdout.decode().splitlines() if line.strip()]


def same(a, b):
    return a == b or (math.isfinite(a) and math.isfinite(b) and
                      abs(a - b) <= 1e-6 * max(abs(a), abs(b), 1e-12))


def score_file(vigil, log_path):
    gold_path = log_path[:-len(".log")] + ".gold.jsonl"
    gold = [json.loads(l) for l in open(gold_path) if l.strip()]
    out = inspect(vigil, read_excerpt(log_path))
    got = [o for o in out if o.get("metric") in CANONICAL and isinstance(o.get("value"), (int, float))]
    want = [g for g in gold if "metric" in g]
    found, missed = 0, []
    used = set()
    for g in want:
        hit = next((i for i, o in enumerate(got) if i not in used and o["line"] == g["line"]
                    and o["metric"] == g["metric"] and same(float(o["value"]), float(g["value"]))),
                   None)
        if hit is None:
            missed.append(g)
        else:
            used.add(hit)
            found += 1
    invented = [o for i, o in enumerate(got) if i not in used and not any(
        g["line"] == o["line"] and g["metric"] == o["metric"] for g in want)]
    want_events = sorted({g["event"] for g in gold if "event" in g})
    got_events = {o["event"] for o in out if "event" in o}
    missed_events = [e for e in want_events if e not in got_events]
    return {
        "metrics": len(want), "found": found, "missed": missed, "invented": invented,
        "events": len(want_events), "events_found": len(want_events) - len(missed_events),
        "missed_events": missed_events, "want_events": want_events,
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vigil", required=True)
    ap.add_argument("--corpus", default=os.path.join(os.path.dirname(__file__), "..",
                                                     "tests", "data", "real"))
    ap.add_argument("--split", default="all", choices=["dev", "heldout", "all"])
    ap.add_argument("--misses", action="store_true", help="list what was missed or invented")
    ap.add_argument("--by-family", action="store_true",
                    help="aggregate counts per #vigil family: value and per event kind")
    args = ap.parse_args()
    if args.misses and args.by_family:
        ap.error("--by-family prints aggregates only; use --misses on dev alone")
    splits = ["dev", "heldout"] if args.split == "all" else [args.split]
    print(f"{'split':8} {'files':>5} {'metrics':>7} {'found':>6} {'recall':>7} "
          f"{'invented':>8} {'events':>6} {'found':>6} {'recall':>7}")
    for split in splits:
        d = os.path.join(args.corpus, split)
        if not os.path.isdir(d):
            continue
        total = {"files": 0, "metrics": 0, "found": 0, "invented": 0, "events": 0,
                 "events_found": 0}
        fams, kinds = {}, {}
        for name in sorted(os.listdir(d)):
            if not name.endswith(".log"):
                continue
            r = score_file(args.vigil, os.path.join(d, name))
            total["files"] += 1
            for k in ("metrics", "found", "events", "events_found"):
                total[k] += r[k]
            total["invented"] += len(r["invented"])
            if args.by_family:
                f = fams.setdefault(family_of(os.path.join(d, name)),
                                    dict.fromkeys(total, 0))
                f["files"] += 1
                for k in ("metrics", "found", "events", "events_found"):
                    f[k] += r[k]
                f["invented"] += len(r["invented"])
                for e in r["want_events"]:
                    kk = kinds.setdefault(e, [0, 0])
                    kk[0] += 1
                    kk[1] += e not in r["missed_events"]
            if args.misses and (r["missed"] or r["invented"] or r["missed_events"]):
                print(f"  {split}/{name}:", file=sys.stderr)
                for m in r["missed"]:
                    print(f"    missed   line {m['line']}: {m['metric']} = {m['value']}",
                          file=sys.stderr)
                for o in r["invented"]:
                    print(f"    invented line {o['line']}: {o['metric']} = {o['value']}",
                          file=sys.stderr)
                for e in r["missed_events"]:
                    print(f"    missed   event {e}", file=sys.stderr)
        rec = total["found"] / total["metrics"] if total["metrics"] else float("nan")
        erec = total["events_found"] / total["events"] if total["events"] else float("nan")
        print(f"{split:8} {total['files']:5} {total['metrics']:7} {total['found']:6} {rec:7.3f} "
              f"{total['invented']:8} {total['events']:6} {total['events_found']:6} {erec:7.3f}")
        if args.by_family:
            print_by_family(split, fams, kinds)


def print_by_family(split, fams, kinds):
    """Aggregates only: families ordered by what they miss (values, invented, events)."""
    print(f"\n{split}: by family (missed = gold - found), most missed first")
    print(f"  {'family':32} {'files':>5} {'metrics':>7} {'found':>6} {'invented':>8} "
          f"{'events':>6} {'found':>6}")
    order = sorted(fams.items(), key=lambda kv: (-(kv[1]['metrics'] - kv[1]['found'])
                                                 - kv[1]['invented']
                                                 - (kv[1]['events'] - kv[1]['events_found']),
                                                 kv[0].lower()))
    for name, f in order:
        print(f"  {name:32} {f['files']:5} {f['metrics']:7} {f['found']:6} {f['invented']:8} "
              f"{f['events']:6} {f['events_found']:6}")
    print(f"\n{split}: by event kind")
    print(f"  {'kind':20} {'gold':>5} {'found':>6}")
    for k, (g, fnd) in sorted(kinds.items(), key=lambda kv: (kv[1][1] - kv[1][0], kv[0])):
        print(f"  {k:20} {g:5} {fnd:6}")


if __name__ == "__main__":
    main()
