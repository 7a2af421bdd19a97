#!/usr/bin/env python3
"""SQLite FTS5 peer for bench/log_store_compare.sh: the same lines in a full-text table.

  log_fts5.py build FILE DB          one row per line, default unicode61 tokenizer,
                                     one transaction, then `optimize` (merges segments)
  log_fts5.py query DB TERM [RUNS]   newest 100 matches (ORDER BY rowid DESC LIMIT 100)
                                     and the count of all matches, RUNS rounds

FTS5 matches tokens, not substrings: TERM is searched as a phrase ("a-b" is the
token sequence a, b), which finds the same lines as a substring search when the
term starts and ends at token boundaries (the script's terms do; the counts are
printed for each system so this is checked). Prints `key: value` lines.
"""
import os
import sqlite3
import statistics
import sys
import time


def build(path, db):
    if os.path.exists(db):
        os.remove(db)
    t0 = time.time()
    c0 = time.process_time()
    con = sqlite3.connect(db)
    # The fastest safe-enough bulk load: no rollback journal, no fsync.
    con.execute("PRAGMA journal_mode=OFF")
    con.execute("PRAGMA synchronous=OFF")
    con.execute("CREATE VIRTUAL TABLE logs USING fts5(line)")
    n = 0
    with open(path, "r", encoding="utf-8", errors="replace", newline="\n") as f:
        def rows():
            nonlocal n
            for line in f:
                n += 1
                yield (line.rstrip("\n"),)
        con.executemany("INSERT INTO logs(line) VALUES (?)", rows())
    con.commit()
    t_insert = time.time() - t0
    con.execute("INSERT INTO logs(logs) VALUES ('optimize')")
    con.commit()
    con.execute("VACUUM")
    con.close()
    wall = time.time() - t0
    cpu = time.process_time() - c0
    print("lines: %d" % n)
    print("insert_s: %.2f" % t_insert)
    print("build_s: %.2f" % wall)
    print("build_cpu_s: %.2f" % cpu)
    print("ingest_lines_per_s: %.0f" % (n / wall))
    print("db_bytes: %d" % os.path.getsize(db))


def query(db, term, runs):
    phrase = '"%s"' % term.replace('"', '""')
    t0 = time.time()
    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    open_s = time.time() - t0
    top, count = [], []
    hits = total = 0
    for _ in range(runs):
        t = time.time()
        hits = len(con.execute("SELECT line FROM logs WHERE logs MATCH ? ORDER BY rowid DESC LIMIT 100",
                               (phrase,)).fetchall())
        top.append(time.time() - t)
        t = time.time()
        total = con.execute("SELECT count(*) FROM logs WHERE logs MATCH ?", (phrase,)).fetchone()[0]
        count.append(time.time() - t)
    print("query: %s" % phrase)
    print("open_s: %.4f" % open_s)
    print("top100_hits: %d" % hits)
    print("count: %d" % total)
    print("cold_top100_s: %.4f" % top[0])
    print("cold_count_s: %.4f" % count[0])
    print("warm_top100_s: %.4f" % statistics.median(top[1:]))
    print("warm_count_s: %.4f" % statistics.median(count[1:]))


if __name__ == "__main__":
    if len(sys.argv) >= 4 and sys.argv[1] == "build":
        build(sys.argv[2], sys.argv[3])
    elif len(sys.argv) >= 4 and sys.argv[1] == "query":
        query(sys.argv[2], sys.argv[3], max(2, int(sys.argv[4]) if len(sys.argv) > 4 else 5))
    else:
        sys.exit(__doc__)
