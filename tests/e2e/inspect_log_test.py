#!/usr/bin/python3
"""End-to-end: `vigil inspect-log FILE|-` as a user runs it.

The real binary on corpus files (tests/data/training/failures) and on standard
input gives exactly the hand-written expectations; a missing file is a clear
error with exit status 1; a large stream runs in bounded memory.
Environment (set by CTest): VIGIL_BIN, VIGIL_SOURCE_DIR.
"""
import os
import resource
import subprocess
import sys
import tempfile
import threading
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_util import file_version_event, record, scalar_event  # noqa: E402

VIGIL = os.environ["VIGIL_BIN"]
CORPUS = os.path.join(os.environ["VIGIL_SOURCE_DIR"], "tests/data/training/failures")


def expected(name):
    with open(os.path.join(CORPUS, name + ".expected.jsonl"), encoding="utf-8") as f:
        return [line for line in f.read().splitlines() if line]


class InspectLog(unittest.TestCase):
    def run_vigil(self, *args, stdin=None):
        return subprocess.run([VIGIL, "inspect-log", *args], input=stdin, capture_output=True,
                              timeout=120)

    def test_a_file(self):
        for name in ("xid_dmesg", "cuda_oom", "nccl_timeout"):
            p = self.run_vigil(os.path.join(CORPUS, name + ".log"))
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(p.stdout.decode().splitlines(), expected(name), name)

    def test_standard_input(self):
        with open(os.path.join(CORPUS, "nan_loss_hf.log"), "rb") as f:
            p = self.run_vigil("-", stdin=f.read())
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout.decode().splitlines(), expected("nan_loss_hf"))

    def test_a_tensorboard_event_file(self):
        # As SummaryWriter writes it: the file_version record, then scalars.
        data = record(file_version_event()) + record(scalar_event(10, "train/loss", 0.5)) + \
            record(scalar_event(20, "train/loss", 0.25))
        with tempfile.NamedTemporaryFile(suffix=".tfevents", delete=False) as f:
            f.write(data)
        try:
            p = self.run_vigil(f.name)
        finally:
            os.unlink(f.name)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout.decode().splitlines(), [
            '{"record": 2, "metric": "train/loss", "value": 0.5, "step": 10}',
            '{"record": 3, "metric": "train/loss", "value": 0.25, "step": 20}'])
        # A damaged file is an error, after what could be read.
        bad = bytearray(data)
        bad[-10] ^= 0xFF
        p = self.run_vigil("-", stdin=bytes(bad))
        self.assertEqual(p.returncode, 1)
        self.assertIn("tfevents: bad record CRC", p.stderr.decode())
        self.assertEqual(len(p.stdout.decode().splitlines()), 1)

    def test_empty_input_prints_nothing(self):
        p = self.run_vigil("-", stdin=b"")
        self.assertEqual((p.returncode, p.stdout), (0, b""))

    def test_a_missing_file_is_a_clear_error(self):
        p = self.run_vigil("/nonexistent/train.log")
        self.assertEqual(p.returncode, 1)
        self.assertEqual(p.stdout, b"")
        self.assertIn("cannot open /nonexistent/train.log: No such file or directory",
                      p.stderr.decode())

    def test_help_says_what_it_is_for(self):
        p = subprocess.run([VIGIL, "inspect-log", "--help"], capture_output=True, text=True,
                           timeout=30)
        self.assertEqual(p.returncode, 0)
        self.assertIn("why is my loss not showing?", p.stdout)

    def test_a_large_stream_in_bounded_memory(self):
        # 64 MiB of progress lines, one 3 MiB line (cut at 1 MiB, still one
        # line) and an OOM at the end: memory stays small, nothing is lost.
        progress_lines = 1000
        chunk = (b"{'loss': 1.5, 'epoch': 0.5}\n" + b"INFO:__main__:still training\n") * 1000
        p = subprocess.Popen([VIGIL, "inspect-log", "-"], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE)
        seen = {"objects": 0, "last": b""}

        def read():
            for out in p.stdout:
                seen["objects"] += 1
                seen["last"] = out
        reader = threading.Thread(target=read)
        reader.start()
        written = 0
        lines = 0
        while written < 64 << 20:
            p.stdin.write(chunk)
            written += len(chunk)
            lines += 2 * progress_lines
        p.stdin.write(b"x" * (3 << 20) + b"\n")
        p.stdin.write(b"RuntimeError: CUDA error: out of memory\n")
        lines += 2
        p.stdin.close()
        reader.join()
        p.stdout.close()
        self.assertEqual(p.wait(timeout=120), 0)
        # Two metrics per progress line, then the event.
        self.assertEqual(seen["objects"], (lines - 2) // 2 * 2 + 1)
        self.assertEqual(seen["last"].decode().strip(),
                         '{"line": %d, "event": "cuda_oom", "exception": "RuntimeError", '
                         '"message": "CUDA error: out of memory"}' % lines)
        rss_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        if os.environ.get("VIGIL_SANITIZED") != "1":  # ASan's shadow memory is not ours
            self.assertLess(rss_kib, 64 * 1024, "inspect-log should stream in bounded memory")


if __name__ == "__main__":
    unittest.main()
