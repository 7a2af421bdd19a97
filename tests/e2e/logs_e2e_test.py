#!/usr/bin/python3
"""End-to-end: logs, as a newcomer meets them.

`vigil up`, then a program that writes its output to a file (found by process
discovery, no configuration) and one under `vigil run`; their lines must be
searchable through `vigil logs` and the HTTP API, with context and levels.
Environment (set by CTest): VIGIL_BIN, VIGIL_FAKE_NVML, VIGIL_SOURCE_DIR.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_util import free_port, private_instance, wait_for  # noqa: E402

VIGIL = os.environ["VIGIL_BIN"]




def query(url, q, limit=1000, **params):
    qs = urllib.parse.urlencode(dict(query=q, limit=limit, start=0, **params))
    with urllib.request.urlopen(f"{url}/api/v1/logs/query?{qs}", timeout=10) as r:
        return json.loads(r.read())["data"]




class LogsE2E(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.home = tempfile.mkdtemp(prefix="vigil-logs-e2e-")
        cls.work = tempfile.mkdtemp(prefix="vigil-logs-job-")
        cls.port, cls.url, cls.env = private_instance(cls.home)
        # What discovery cannot see (no process holds the file) comes from config.json.
        os.makedirs(os.path.join(cls.work, "runs"))
        with open(os.path.join(cls.home, "config.json"), "w") as f:
            json.dump({"logs": {"paths": [os.path.join(cls.work, "runs", "*.jsonl")]}}, f)
        with open(os.path.join(cls.work, "runs", "metrics.jsonl"), "w") as f:
            f.write('{"step": 1, "loss": 2.5}\n{"step": 2, "loss": 2.25}\n')
        up = subprocess.run([VIGIL, "up", "--listen", f"127.0.0.1:{cls.port}"],
                            capture_output=True, text=True, env=cls.env, timeout=60)
        assert up.returncode == 0, up.stdout + up.stderr
        # A "training job" that logs to a file through its stdout, as
        # `python train.py > train.log 2>&1 &` would.
        cls.job_log = os.path.join(cls.work, "train.log")
        script = os.path.join(cls.work, "train.sh")
        with open(script, "w") as f:
            f.write("i=0\nwhile [ $i -lt 100000 ]; do\n"
                    "  echo \"step $i loss=0.$i\"\n"
                    "  if [ $i = 5 ]; then echo 'WARNING: lr is high'; fi\n"
                    "  i=$((i+1)); sleep 0.2\ndone\n")
        cls.job = subprocess.Popen(["sh", "-c", f"exec >{cls.job_log} 2>&1; exec sh {script}"],
                                   env=cls.env)

    @classmethod
    def tearDownClass(cls):
        cls.job.kill()
        cls.job.wait()
        subprocess.run([VIGIL, "down"], env=cls.env, capture_output=True, timeout=60)
        shutil.rmtree(cls.home, ignore_errors=True)
        shutil.rmtree(cls.work, ignore_errors=True)

    def vigil(self, *args, check=True):
        p = subprocess.run([VIGIL, *args], capture_output=True, text=True, env=self.env,
                           timeout=60)
        if check and p.returncode != 0:
            self.fail(f"vigil {args} exited {p.returncode}\n{p.stdout}\n{p.stderr}")
        return p

    def test_a_job_writing_to_a_file_is_found_without_configuration(self):
        data = wait_for(lambda: query(self.url, '{job="train"} |= "step 3 "')["entries"],
                        what="the job's lines")
        e = data[0]
        self.assertEqual(e["text"], "step 3 loss=0.3")
        labels = query(self.url, '{job="train"}', limit=1)["streams"]
        (stream_labels,) = labels.values()
        self.assertEqual(stream_labels["source"], self.job_log)
        self.assertIn("node", stream_labels)
        warn = wait_for(lambda: query(self.url, '{job="train", level="warn"}')["entries"],
                        what="the warning")
        self.assertEqual(warn[0]["text"], "WARNING: lr is high")

    def test_a_new_line_is_searchable_quickly_once_the_file_is_followed(self):
        wait_for(lambda: query(self.url, '{job="train"}', limit=1)["entries"], what="the job")
        # Follow it live: the newest line's number grows while we watch.
        def newest():  # the newest "step N ..." line (the job also warns)
            e = query(self.url, '{job="train"} |= "step "', limit=1)["entries"]
            return int(e[0]["text"].split()[1]) if e else -1
        first = newest()
        wait_for(lambda: newest() >= first + 5, timeout=10, what="new lines")

    def test_status_counts_the_logs(self):
        wait_for(lambda: query(self.url, '{job="train"}', limit=1)["entries"], what="the job")
        st = self.vigil("status").stdout
        self.assertRegex(st, r"Logs:\s+\d+ streams, [1-9]\d* lines stored")

    def test_configured_paths_are_followed_too(self):
        lines = wait_for(lambda: query(self.url, '{source=~".*metrics.jsonl"}')["entries"],
                         what="the configured file")
        self.assertEqual([e["text"] for e in reversed(lines)],
                         ['{"step": 1, "loss": 2.5}', '{"step": 2, "loss": 2.25}'])

    def test_a_mistake_in_the_config_is_refused_at_start(self):
        home = tempfile.mkdtemp(prefix="vigil-badconf-")
        try:
            with open(os.path.join(home, "config.json"), "w") as f:
                f.write('{"logs": {"pathz": []}}')
            p = subprocess.run([VIGIL, "up", "--home", home, "--listen", f"127.0.0.1:{free_port()}"],
                               capture_output=True, text=True, env=self.env, timeout=60)
            self.assertEqual(p.returncode, 1)
            self.assertIn("unknown key logs.pathz", p.stderr)
        finally:
            shutil.rmtree(home, ignore_errors=True)

    def test_vigil_logs_prints_plain_lines_context_and_errors(self):
        wait_for(lambda: query(self.url, '{job="train"} |= "step 12 "')["entries"],
                 what="step 12")
        p = self.vigil("logs", "--since", "1h", "-n", "3", '{job="train"} |~ "step 1[0-2] "')
        self.assertEqual(p.stdout.splitlines(),
                         ["step 10 loss=0.10", "step 11 loss=0.11", "step 12 loss=0.12"])
        ctx = self.vigil("logs", "-n", "1", "-C", "1", '{job="train"} |= "step 8 "')
        self.assertEqual(ctx.stdout.splitlines(), ["step 7 loss=0.7", "step 8 loss=0.8",
                                                   "step 9 loss=0.9"])
        words = self.vigil("logs", "-n", "1", "lr is high")
        self.assertEqual(words.stdout.strip(), "WARNING: lr is high")
        bad = self.vigil("logs", '{job="train"', check=False)
        self.assertEqual(bad.returncode, 2)
        self.assertIn("parse error", bad.stderr)

    def test_vigil_logs_pages_past_the_apis_cap(self):
        # 12,000 lines in one burst: more than one API page (5,000), many of
        # them on the same timestamp, so pages meet inside a timestamp.
        p = subprocess.run([VIGIL, "run", "--name", "bulk", "--", "sh", "-c",
                            "seq 1 12000 | sed 's/^/bulk-line-/'"],
                           capture_output=True, env=self.env, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        want = [f"bulk-line-{i}" for i in range(1, 12001)]
        every = wait_for(lambda: (lambda out: out if len(out) >= 12000 else None)(
            self.vigil("logs", "--since", "1h", "--all", '{job="bulk"}').stdout.splitlines()),
            timeout=60, what="the 12,000 lines stored")
        self.assertEqual(every, want)
        newest = self.vigil("logs", "--since", "1h", "-n", "7000", '{job="bulk"}')
        self.assertEqual(newest.stdout.splitlines(), want[-7000:])
        self.assertEqual(
            self.vigil("logs", "--since", "1h", "-n", "100000", '{job="bulk"}').stdout.splitlines(),
            want)

    def test_vigil_run_passes_output_through_and_records_it(self):
        # A stderr line in the middle of a stdout traceback: the streams are
        # recorded apart, so the traceback stays one record.
        cmd = ("printf 'out one\\nprogress 50%%\\rprogress 100%%\\n'; "
               "echo 'Traceback (most recent call last):'; echo 'err one' >&2; "
               "echo '  File \"x.py\", line 1'; echo 'ValueError: bad'; exit 3")
        p = subprocess.run([VIGIL, "run", "--name", "myjob", "--", "sh", "-c", cmd],
                           capture_output=True, env=self.env, timeout=60)
        self.assertEqual(p.returncode, 3)
        self.assertEqual(p.stdout, b"out one\nprogress 50%\rprogress 100%\n"
                         b"Traceback (most recent call last):\n  File \"x.py\", line 1\n"
                         b"ValueError: bad\n")
        self.assertEqual(p.stderr, b"err one\n")
        spool = os.path.join(self.home, "spool", "run")
        (meta,) = [f for f in os.listdir(spool) if f.startswith("myjob.") and f.endswith(".json")]
        with open(os.path.join(spool, meta)) as f:
            record = json.load(f)
        self.assertEqual(record["exit_code"], 3)
        self.assertEqual(record["cmd"][:2], ["sh", "-c"])
        tb = wait_for(lambda: query(self.url, '{job="myjob"} |= "Traceback"')["entries"],
                      what="the recorded traceback")
        self.assertEqual(tb[0]["level"], "error")
        self.assertIn('File "x.py", line 1', tb[0]["text"])
        self.assertIn("ValueError: bad", tb[0]["text"])
        lines = [e["text"] for e in reversed(query(self.url, '{job="myjob", stream="stdout"}')["entries"])]
        self.assertIn("out one", lines)
        self.assertNotIn("err one", lines)
        err = wait_for(lambda: query(self.url, '{job="myjob", stream="stderr"}')["entries"],
                       what="the recorded stderr")
        self.assertEqual([e["text"] for e in err], ["err one"])

    def test_vigil_run_forwards_signals_and_dies_the_same_way(self):
        p = subprocess.Popen([VIGIL, "run", "--", "sh", "-c", "echo ready; exec sleep 30"],
                             stdout=subprocess.PIPE, env=self.env)
        self.assertEqual(p.stdout.readline(), b"ready\n")
        p.send_signal(signal.SIGTERM)
        self.assertEqual(p.wait(timeout=10), -signal.SIGTERM)

    def test_vigil_run_reports_a_missing_command(self):
        p = subprocess.run([VIGIL, "run", "--", "/nonexistent/cmd"], capture_output=True,
                           env=self.env, timeout=30)
        self.assertEqual(p.returncode, 127)
        self.assertIn(b"cannot run", p.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
