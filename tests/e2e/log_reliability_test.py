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

# A job's log writer in its own process (so discovery sees a process start
# when it starts): one numbered line per write(2), paced at RATE lines/s,
# until SECONDS after its rotation (30 s at most: it stops by itself).
# Rotation happens inside it, between two lines, so no line falls in a
# rotator's own window (logrotate's copy -> truncate gap, which no reader can
# close): RENAME_AT > 0 renames the log to <log>.1 and reopens it after that
# many lines; SIGUSR1 copies it to <log>.1 and truncates it. It prints
# "renamed", "copytruncated <seq>" and, at the end, "wrote <n> <s>", then
# keeps the file open (its writer stays discoverable) until stdin ends.
JOB_WRITER = r"""
import os, shutil, signal, sys, time
path, name, rate, seconds, rename_at = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND
fd = os.open(path, flags, 0o644)
print("open", flush=True)
pending = []
signal.signal(signal.SIGUSR1, lambda *_: pending.append("copytruncate"))
seq, start = 0, time.monotonic()
stop_at = start + 30
while time.monotonic() < stop_at:
    due = int((time.monotonic() - start) * rate)
    while seq < due:
        os.write(fd, f"{name} seq={seq} step loss=0.{seq}\n".encode())
        seq += 1
        if seq == rename_at:
            os.rename(path, path + ".1")
            os.close(fd)
            fd = os.open(path, flags, 0o644)
            print("renamed", flush=True)
            stop_at = time.monotonic() + seconds
        if pending:
            pending.clear()
            shutil.copyfile(path, path + ".1")
            os.truncate(path, 0)
            print(f"copytruncated {seq}", flush=True)
            stop_at = time.monotonic() + seconds
    time.sleep(0.001)
print(f"wrote {seq} {time.monotonic() - start:.3f}", flush=True)
sys.stdin.read()
"""
JOB_RATE = 8000  # lines/s: the "a few thousand per second", and more






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
        self.job_writers = []
        self.logs = open(os.path.join(self.root, "vigil-output.log"), "ab")

    def tearDown(self):
        for p in self.job_writers:
            p.kill()
            p.wait()
            p.stdin.close()
            p.stdout.close()
        for p in (self.agent, self.server):
            if p and p.poll() is None:
                p.send_signal(signal.SIGCONT)  # a test that failed while it was stopped
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

    def query(self, q, limit=5000, cursor=None):
        params = dict(query=q, limit=limit, start=0, direction="forward")
        if cursor:
            params["cursor"] = cursor
        qs = urllib.parse.urlencode(params)
        with urllib.request.urlopen(f"{self.url}/api/v1/logs/query?{qs}", timeout=30) as r:
            return json.loads(r.read())["data"]["entries"]

    def all_seqs(self, name):
        """Every stored "<name> seq=<n>" line's n, paging past the 5000 cap."""
        seqs, cursor = [], None
        while True:
            page = self.query(f'{{source=~"{self.work}/.*"}} |= "{name} seq="', cursor=cursor)
            seqs += [int(e["text"].split()[1][4:]) for e in page]
            if len(page) < 5000:
                return seqs
            cursor = f'{page[-1]["ts"]}-{page[-1]["seq"]}'

    def start_job_writer(self, path, name, seconds, rename_at=0):
        """Starts the writer while the agent is held (SIGSTOP), which the
        caller does: a discovery pass between the writer's exec and its
        open() would find its log only at a later full rescan (up to 30 s on
        kernels before 6.2: docs/discovery.md "Cost")."""
        p = subprocess.Popen([sys.executable, "-c", JOB_WRITER, path, name, str(JOB_RATE),
                              str(seconds), str(rename_at)],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.job_writers.append(p)
        self.assertEqual(p.stdout.readline().strip(), "open")
        return p

    def finish_job_writer(self, p):
        """Waits for the writer's last line; returns (lines written, lines/s)."""
        words = p.stdout.readline().split()
        self.assertEqual(words[0], "wrote", words)
        return int(words[1]), int(words[1]) / float(words[2])

    def assert_exactly_once(self, name, n):
        # The rotated file's lines are read before the live file's, so once
        # the last line is stored every line that will arrive has.
        last = f'{{source=~"{self.work}/.*"}} |= "{name} seq={n - 1} "'
        wait_for(lambda: self.query(last, limit=1), timeout=90, what=f"{name}'s last line")
        got = self.all_seqs(name)
        dups = len(got) - len(set(got))
        missing = sorted(set(range(n)) - set(got))
        self.assertEqual((dups, missing[:10], len(missing)), (0, [], 0),
                         f"{name}: {len(got)} lines stored of {n} written")

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


    def test_copytruncate_under_load_reads_the_copy(self):
        """Lines the agent had not read when a copytruncate happened are read
        from the copy: the agent is held (SIGSTOP) while the job writes on,
        is copied and truncated, and writes on, at 8,000 lines/s."""
        self.start_server()
        self.start_agent()
        path = os.path.join(self.work, "load.log")
        self.agent.send_signal(signal.SIGSTOP)
        job = self.start_job_writer(path, "load", seconds=1.5)
        self.agent.send_signal(signal.SIGCONT)
        wait_for(lambda: self.query(f'{{source="{path}"}} |= "load seq="', limit=1),
                 what="load.log followed")
        self.agent.send_signal(signal.SIGSTOP)
        time.sleep(0.4)  # lines the agent has not read pile up
        job.send_signal(signal.SIGUSR1)
        words = job.stdout.readline().split()
        self.assertEqual(words[0], "copytruncated", words)
        time.sleep(0.3)  # the job writes on into the truncated file
        self.agent.send_signal(signal.SIGCONT)
        n, rate = self.finish_job_writer(job)
        self.assertGreater(n, int(words[1]))
        self.assert_exactly_once("load", n)
        print(f"copytruncate: {n} lines at {rate:.0f} lines/s, copy made after line {words[1]}")

    def test_rotated_before_first_discovery_is_read(self):
        """A job that writes, renames its log and opens a new one before
        discovery first sees it (the agent is held meanwhile): the rotated
        file is read first, then the live one, each line once."""
        self.start_server()
        self.start_agent()
        hello = Writer(os.path.join(self.work, "hello.log"), "hello")
        hello.line()
        wait_for(lambda: self.lines_of("hello"), what="the agent's first discovery")
        self.agent.send_signal(signal.SIGSTOP)
        path = os.path.join(self.work, "early.log")
        job = self.start_job_writer(path, "early", seconds=2.0, rename_at=2000)
        self.assertEqual(job.stdout.readline().strip(), "renamed")
        time.sleep(0.2)
        self.agent.send_signal(signal.SIGCONT)
        n, rate = self.finish_job_writer(job)
        self.assertGreater(n, 2000)
        self.assert_exactly_once("early", n)
        hello.close()
        print(f"early rotation: {n} lines at {rate:.0f} lines/s, renamed after line 2000")


if __name__ == "__main__":
    unittest.main(verbosity=2)
