#!/usr/bin/python3
"""Checks the real-log corpus (tests/data/real, format in its README.md).

Every excerpt must cite its source and family, its gold must be well formed
(metric entries in line order with a line inside the body whose text holds
the value, then known event kinds, each once), no source URL may be in both
splits, and excerpts added after the first collection round must be in the
split their source URL's CRC-32 gives (`crc32(url) % 2`: 1 held-out, 0 dev),
so nobody can move an excerpt to the split that flatters a rule.

  scripts/real_corpus_check.py [--corpus tests/data/real]   check; exit 1 on a problem
  scripts/real_corpus_check.py --table                     print the README's families table
"""
import argparse
import collections
import json
import os
import re
import sys
import zlib

KINDS = {"cuda_oom", "nccl_error", "nccl_timeout", "device_assert", "cuda_error",
         "no_kernel_image", "driver_too_old", "traceback", "nan_loss", "loss_overflow",
         "dataloader_killed", "segfault", "oom_killed", "xid", "completed"}
METRICS = {"loss", "learning_rate", "grad_norm"}
HEADER = "#vigil "


def read_excerpt(path):
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        lines = f.read().split("\n")
    header = {}
    i = 0
    while i < len(lines) and lines[i].startswith(HEADER):
        key, _, value = lines[i][len(HEADER):].partition(":")
        header.setdefault(key.strip(), value.strip())
        i += 1
    return header, lines[i:]


def number_on_line(value, line):
    """Whether the line prints `value` (as written: 6.5E+00, 2.000e-02, 0.000)."""
    for token in re.findall(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?", line):
        try:
            v = float(token)
        except ValueError:
            continue
        if v == value or abs(v - value) <= 1e-9 * max(abs(v), abs(value)):
            return True
    return False


def check_excerpt(path, problems):
    name = os.path.basename(path)[:-len(".log")]
    header, body = read_excerpt(path)
    for key in ("source", "family"):
        if not header.get(key):
            problems.append(f"{path}: no '#vigil {key}:' header")
    gold_path = path[:-len(".log")] + ".gold.jsonl"
    if not os.path.exists(gold_path):
        problems.append(f"{path}: no {os.path.basename(gold_path)}")
        return name, header
    seen_event, kinds, last_line, entries = False, set(), 0, 0
    with open(gold_path, encoding="utf-8") as f:
        for n, text in enumerate(f, 1):
            if not text.strip():
                continue
            where = f"{gold_path}:{n}"
            try:
                g = json.loads(text)
            except ValueError as e:
                problems.append(f"{where}: not JSON ({e})")
                continue
            entries += 1
            if "event" in g:
                seen_event = True
                if set(g) != {"event"} or g["event"] not in KINDS:
                    problems.append(f"{where}: an event entry is {{\"event\": <known kind>}}")
                elif g["event"] in kinds:
                    problems.append(f"{where}: event {g['event']} listed twice")
                kinds.add(g.get("event"))
                continue
            if set(g) != {"line", "metric", "value"} or g["metric"] not in METRICS:
                problems.append(f"{where}: a metric entry is {{line, metric, value}}")
                continue
            if seen_event:
                problems.append(f"{where}: metrics come before events")
            line, value = g["line"], g["value"]
            if not isinstance(line, int) or not 1 <= line <= len(body):
                problems.append(f"{where}: line {line} is outside the body")
                continue
            if line < last_line:
                problems.append(f"{where}: metric entries out of line order")
            last_line = line
            if not isinstance(value, (int, float)) or not number_on_line(value, body[line - 1]):
                problems.append(f"{where}: {value!r} is not printed on line {line}")
    if entries == 0:
        problems.append(f"{gold_path}: no metric and no event (the README says: not kept)")
    return name, header


def load(corpus, problems):
    """{split: [(name, header)]} for dev and heldout."""
    out = {}
    for split in ("dev", "heldout"):
        d = os.path.join(corpus, split)
        out[split] = [check_excerpt(os.path.join(d, f), problems)
                      for f in sorted(os.listdir(d)) if f.endswith(".log")]
    return out


def check_splits(corpus, splits, problems):
    with open(os.path.join(corpus, "round1.txt"), encoding="utf-8") as f:
        round1 = {l.strip() for l in f if l.strip() and not l.startswith("#")}
    url_split = {}
    names = collections.Counter()
    for split, excerpts in splits.items():
        for name, header in excerpts:
            names[name] += 1
            url = header.get("source", "")
            if url_split.setdefault(url, split) != split:
                problems.append(f"{split}/{name}: source {url} is in both splits")
            if name not in round1 and url:
                want = "heldout" if zlib.crc32(url.encode()) % 2 else "dev"
                if want != split:
                    problems.append(f"{split}/{name}: crc32 of its source puts it in {want}")
    for name, n in names.items():
        if n > 1:
            problems.append(f"{name}: in both splits")


def table(splits):
    counts = collections.defaultdict(lambda: [0, 0, set()])
    for i, split in enumerate(("dev", "heldout")):
        for _, header in splits[split]:
            c = counts[header.get("family", "?")]
            c[i] += 1
            c[2].add(header.get("source"))
    rows = sorted(counts.items(), key=lambda kv: (-(kv[1][0] + kv[1][1]), kv[0].lower()))
    print("| family | dev | heldout | sources |")
    print("|---|---:|---:|---:|")
    for family, (dev, held, sources) in rows:
        print(f"| {family} | {dev} | {held} | {len(sources)} |")
    dev = sum(c[0] for c in counts.values())
    held = sum(c[1] for c in counts.values())
    sources = set().union(*(c[2] for c in counts.values()))
    print(f"| **total ({len(counts)} families)** | **{dev}** | **{held}** | **{len(sources)}** |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default=os.path.join(os.path.dirname(__file__), "..",
                                                     "tests", "data", "real"))
    ap.add_argument("--table", action="store_true")
    args = ap.parse_args()
    problems = []
    splits = load(args.corpus, problems)
    if args.table:
        table(splits)
        return 0
    check_splits(args.corpus, splits, problems)
    for p in problems:
        print(p)
    total = sum(len(v) for v in splits.values())
    print(f"{total} excerpts ({len(splits['dev'])} dev, {len(splits['heldout'])} heldout), "
          f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
