#!/usr/bin/python3
"""Logs: nothing lost, nothing duplicated, end to end (issue: logs).

A `vigil server` and a `vigil agent` run as separate processes. This test is
the "training job": it holds log files open for writing (so process
discovery finds them with no configuration) and writes numbered lines while
it rotates them (rename+create, copytruncate), truncates one, deletes one
while the agent has it open, writes a 5 MiB line, invalid UTF-8 and GBK,
floods one file past the rate limit, kills the agent with SIGKILL and
restarts it, and stops the server for a while and restarts it.

Afterwards every numbered line is in the store exactly once, in order per
file, and the counts of cut and sampled lines are exact.
Environment (set by CTest): VIGIL_BIN, VIGIL_FAKE_NVML, VIGIL_SOURCE_DIR.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_util import free_port, start_foreground, wait_for  # noqa: E402

VIGIL = os.environ["VIGIL_BIN"]
FAKE_NVML = os.environ["VIGIL_FAKE_NVML"]
SCENARIO = os.path.join(os.environ["VIGIL_SOURCE_DIR"], "tests/fake_nvml/scenarios/a100x2.scenario")






class Writer:
    """One log file written the way a program writes it: O_APPEND, one
    numbered line at a time ("<name> seq=<n> <padding>")."""

    def __init__(self, path, name):
        self.path, self.name = path, name
        self.seq = 0
        self.lock = threading.Lock()
        self.f = open(path, "ab", buffering=0)

    def line(self, extra=""):
        self.lines(1, extra)

    def lines(self, n, extra=""):
        """n numbered lines in one write: a burst that lands at once."""
        with self.lock:
            self.f.write("".join(f"{self.name} seq={self.seq + i} {extra}step loss=0.{self.seq + i}\n"
                                 for i in range(n)).encode())
            self.seq += n

    def raw(self, data):
        with self.lock:
            self.f.write(data)

    def reopen(self):
        with self.lock:
            self.f.close()
            self.f = open(self.path, "ab", buffering=0)

    def close(self):
        with self.lock:
            self.f.close()


class LogReliability(unittest.TestCase):
    def setUp(self):
        self.root = tempfile.mkdtemp(prefix="vigil-reliability-")
        self.work = os.path.join(self.root, "job")
        os.makedirs(self.work)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = dict(os.environ, VIGIL_NVML_LIBRARY=FAKE_NVML, VIGIL_FAKE_NVML_SCENARIO=SCENARIO)
        for k in ("VIGIL_HOME", "VIGIL_URL"):
            self.env.pop(k, None)
        self.server = self.agent = None
        self.logs = open(os.path.join(self.root, "vigil-output.log"), "ab")

    def tearDown(self):
        for p in (self.agent, self.server):
            if p and p.poll() is None:
                p.kill()
                p.wait()
        self.logs.close()
        if os.environ.get("VIGIL_KEEP_TEST_DIR"):
            print("kept", self.root)
        else:
            shutil.rmtree(self.root, ignore_errors=True)

    def start_server(self):
        self.server = start_foreground(
            ["server", "--home", os.path.join(self.root, "server"),
             "--listen", f"127.0.0.1:{self.port}"], self.env, self.logs, wait_url=self.url)

    def start_agent(self):
        self.agent = start_foreground(
            ["agent", "--home", os.path.join(self.root, "agent"), "--server", self.url,
             "--listen", f"127.0.0.1:{free_port()}", "--node", "node-r"], self.env, self.logs)

    def query(self, q, limit=5000):
        qs = urllib.parse.urlencode(dict(query=q, limit=limit, start=0, direction="forward"))
        with urllib.request.urlopen(f"{self.url}/api/v1/logs/query?{qs}", timeout=30) as r:
            return json.loads(r.read())["data"]["entries"]

    def mine(self, filters):
        """Lines of this test's files only: other programs on the machine
        (ctest's own LastTest.log) log too, and Vigil finds them."""
        return self.query(f'{{source=~"{self.work}/.*"}} {filters}')

    def lines_of(self, name):
        return [e["text"] for e in self.mine(f'|= "{name} seq="')]

    def has_line(self, w, seq):
        return any(f"seq={seq} " in t for t in self.lines_of(w.name))

    def count(self, q):
        """Lines matching q in the last hour, from the level histogram."""
        now = time.time()
        qs = urllib.parse.urlencode(dict(query=q, start=now - 3600, end=now + 60, step="2h"))
        with urllib.request.urlopen(f"{self.url}/api/v1/logs/histogram?{qs}", timeout=30) as r:
            return sum(sum(b) for b in json.loads(r.read())["data"]["buckets"])

    def sources(self):
        with urllib.request.urlopen(f"{self.url}/api/v1/logs/sources", timeout=10) as r:
            return json.loads(r.read())["data"]

    def test_every_numbered_line_exactly_once(self):
        self.start_server()
        self.start_agent()
        rot = Writer(os.path.join(self.work, "rot.log"), "rot")
        ct = Writer(os.path.join(self.work, "ct.log"), "ct")
        tr = Writer(os.path.join(self.work, "tr.log"), "tr")
        dl = Writer(os.path.join(self.work, "del.log"), "dl")
        enc = Writer(os.path.join(self.work, "enc.log"), "enc")
        writers = [rot, ct, tr, dl, enc]

        # A steady background writer on rot.log, as a training loop.
        stop = threading.Event()

        def steady():
            while not stop.is_set():
                rot.line()
                time.sleep(0.005)
        bg = threading.Thread(target=steady)
        bg.start()
        try:
            for w in (ct, tr, dl, enc):
                for _ in range(20):
                    w.line()
            wait_for(lambda: all(self.has_line(w, 19) for w in (ct, tr, dl, enc)),
                     what="discovery of the job's files")

            # Rename + create, twice, while lines keep coming.
            for i in (1, 2):
                time.sleep(0.5)
                with rot.lock:
                    os.rename(rot.path, f"{rot.path}.{i}")
                    rot.f.close()
                    rot.f = open(rot.path, "ab", buffering=0)

            # A 5 MiB line, cut at the 1 MiB cap and flagged, never dropped.
            rot.raw(b"rot huge " + b"x" * (5 << 20) + b"\n")

            # Invalid UTF-8 and GBK (GB18030) text keep their numbered lines.
            enc.raw(f"enc seq={enc.seq} ".encode() + b"\xff\xfe broken\n")
            enc.seq += 1
            enc.raw(f"enc seq={enc.seq} ".encode() + "训练开始".encode("gb18030") + b" done\n")
            enc.seq += 1
            bad_utf8_seq = enc.seq
            enc.raw(f"enc seq={enc.seq} ".encode() + b"\xc3\x28 bad utf8\n")
            enc.seq += 1

            # The agent dies without warning and comes back.
            for w in (ct, tr, dl):
                for _ in range(30):
                    w.line()
            time.sleep(0.3)
            self.agent.send_signal(signal.SIGKILL)
            self.agent.wait()
            for w in (ct, tr, dl):
                for _ in range(30):
                    w.line()
            self.start_agent()

            # copytruncate and truncation, once the agent has read the file
            # (what is written between the last read and the truncation
            # exists only in the copy: docs/tailer.md).
            wait_for(lambda: self.has_line(ct, ct.seq - 1) and self.has_line(tr, tr.seq - 1),
                     what="ct.log and tr.log read before truncation")
            with ct.lock:
                shutil.copyfile(ct.path, ct.path + ".1")
                os.truncate(ct.path, 0)
            with tr.lock:
                os.truncate(tr.path, 0)
            for w in (ct, tr):
                for _ in range(25):
                    w.line()

            # Deleted while open: what was written before the unlink is read.
            for _ in range(40):
                dl.line()
            os.unlink(dl.path)
            dl.close()

            # The server goes away; the job keeps writing; it comes back.
            self.server.send_signal(signal.SIGTERM)
            self.assertEqual(self.server.wait(timeout=60), 0)
            for w in (ct, tr, enc):
                for _ in range(50):
                    w.line()
            time.sleep(2)
            self.start_server()
            for w in (ct, tr):
                for _ in range(10):
                    w.line()
        finally:
            stop.set()
            bg.join()

        # A flood past the rate limit: INFO lines are sampled, counted exactly.
        flood = Writer(os.path.join(self.work, "flood.log"), "flood")
        flood.line()
        wait_for(lambda: self.lines_of("flood"), what="flood.log followed")
        # In one write: line by line, a slow (loaded, sanitized) writer can stay
        # under the limit's 10,000 lines/s plus its 20,000-line burst.
        flood.lines(40000)
        flood.line(extra="WARNING ")  # never sampled away

        # Everything arrives, exactly once, in order.
        for w in writers + [flood]:
            if w is flood:
                continue
            wait_for(lambda: self.has_line(w, w.seq - 1), timeout=90, what=f"{w.name}'s last line")
        for w in (rot, ct, tr, dl, enc):
            got = [int(t.split()[1][4:]) for t in self.lines_of(w.name)]
            self.assertEqual(got, list(range(w.seq)), f"{w.name}: lines missing, duplicated or "
                             f"out of order ({len(got)} of {w.seq})")

        huge = self.mine('|= "rot huge"')
        self.assertEqual(len(huge), 1)
        self.assertTrue(huge[0].get("truncated"))
        self.assertEqual(len(huge[0]["text"]), 1 << 20)
        gbk = self.mine('|= "训练开始"')
        self.assertEqual(len(gbk), 1)
        self.assertTrue(gbk[0].get("converted"))
        bad = self.mine('|= "bad utf8"')
        self.assertEqual(bad[0]["text"], f"enc seq={bad_utf8_seq} \ufffd( bad utf8")

        def flood_totals():
            for s in self.sources():
                if s["labels"].get("source", "").endswith("flood.log"):
                    if s["lines"] + s["sampled_lines"] == flood.seq:
                        return s
            return None
        totals = wait_for(flood_totals, timeout=90, what="the flood's lines and counters")
        self.assertGreater(totals["sampled_lines"], 0)
        self.assertEqual(self.count(f'{{source="{flood.path}"}} |= "flood seq="'), totals["lines"])
        self.assertEqual(len(self.mine('|= "flood seq=" |= "WARNING"')), 1)
        truncated = sum(s["truncated_lines"] for s in self.sources()
                        if s["labels"].get("source", "").endswith("rot.log"))
        self.assertEqual(truncated, 1)
        for w in writers + [flood]:
            if not w.f.closed:
                w.close()
        print(f"lines: " + ", ".join(f"{w.name} {w.seq}" for w in writers + [flood]) +
              f"; flood stored {totals['lines']}, sampled {totals['sampled_lines']}")


if __name__ == "__main__":
    unittest.main(verbosity=2)
