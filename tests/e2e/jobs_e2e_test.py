#!/usr/bin/python3
"""End-to-end: jobs and their training metrics, with no flag and no code change.

`vigil up`, then jobs under `vigil run` that train (print a loss), crash with
CUDA out of memory, get stopped by SIGTERM (a scheduler's cancel) and complete;
and a process that looks like a torchrun launcher, found by detection alone.
`vigil jobs` must give each its state and reason; the loss must be a
`training_loss` series; `vigil inspect-log` must explain the crash.
Environment (set by CTest): VIGIL_BIN, VIGIL_FAKE_NVML, VIGIL_SOURCE_DIR.
"""
import glob
import json
import os
import pwd
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
from e2e_util import private_instance, wait_for  # noqa: E402

VIGIL = os.environ["VIGIL_BIN"]

TRAIN = r"""
import sys, time
for step in range(1, 6):
    print({'loss': round(2.0 / step, 4), 'learning_rate': 5e-05, 'epoch': step / 10}, flush=True)
    time.sleep(0.2)
if sys.argv[1] == "oom":
    print("Traceback (most recent call last):", flush=True)
    print('  File "train.py", line 42, in <module>', flush=True)
    print("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. "
          "GPU 0 has a total capacity of 79.15 GiB of which 1.06 GiB is free.", flush=True)
    sys.exit(1)
if sys.argv[1] == "wait":
    time.sleep(300)
print("Training completed. Do not forget to share your model on huggingface.co/models =)", flush=True)
"""


# A job writing a TensorBoard event file as SummaryWriter does: the file
# stays open, records are appended (TFRecord framing, masked CRC-32C).
TENSORBOARD = r"""
import sys, time
sys.path.insert(0, sys.argv[3])
from e2e_util import file_version_event, record, scalar_event

with open(sys.argv[1], "ab", buffering=0) as f:
    f.write(record(file_version_event(time.time())))
    for step in range(1, 6):
        f.write(record(scalar_event(step, "train/loss", 1.0 / step, time.time())))
        time.sleep(0.3)
    time.sleep(float(sys.argv[2]))
"""


# A job logging with MLflow's local file store (mlruns/ in its working
# directory), as mlflow.log_metric writes it: one line per value, the file
# opened and closed each time.
MLFLOW = r"""
import os, sys, time
metrics = os.path.join("mlruns", "0", "run42", "metrics")
os.makedirs(os.path.join(metrics, "eval"), exist_ok=True)
for step in range(1, 6):
    with open(os.path.join(metrics, "loss"), "a") as f:
        f.write("%d %s %d\n" % (int(time.time() * 1000), 2.0 / step, step))
    time.sleep(0.3)
with open(os.path.join(metrics, "eval", "acc"), "a") as f:
    f.write("%d 0.9 5\n" % int(time.time() * 1000))
time.sleep(float(sys.argv[1]))
"""


# A training run that dies at start-up, as the commonest crashes do: an import
# that fails, a fraction of a second after exec. It lives far less than a
# detection pass; detection knows it as a job by its command line (a
# nanoGPT-style script path), and it writes its traceback to a redirected
# stdout file. argv[1]: how long it lives before it crashes.
CRASH_AT_START = r"""
import sys, time
print("loading config", sys.argv[2], flush=True)
time.sleep(float(sys.argv[1]))
import flash_attn_missing_for_e2e  # noqa: F401
"""


def start_crash(work, name, lives_s):
    """Starts CRASH_AT_START as <work>/nanogpt_<name>/<name>.py, stdout and
    stderr to <name>.log; returns (process, log path)."""
    d = os.path.join(work, "nanogpt_" + name)
    os.makedirs(d, exist_ok=True)
    script = os.path.join(d, name + ".py")
    with open(script, "w") as f:
        f.write(CRASH_AT_START)
    log = os.path.join(d, name + ".log")
    with open(log, "w") as out:
        p = subprocess.Popen(["/usr/bin/python3", script, str(lives_s), "config/train_tiny.py"],
                             cwd=d, stdout=out, stderr=subprocess.STDOUT)
    return p, log


def assert_crashed_at_start(test, jobs_fn, name, log, exit_code):
    seen = []

    def settled():
        j = jobs_fn().get(name)
        seen[:] = [j]
        return j if j and j["state"] == "crashed" and j["reason"] == "traceback" else None
    try:
        job = wait_for(settled, 60, f"{name} to be listed as crashed with its traceback")
    except AssertionError as e:
        raise AssertionError(f"{e}; last listed: {seen!r}") from None
    test.assertIn("No module named 'flash_attn_missing_for_e2e'", job["reason_text"])
    test.assertEqual(job["exit_code"], exit_code)
    test.assertEqual(job["kind"], "training")
    test.assertEqual(job["trainer"], "nanogpt-style")
    test.assertIn("traceback", [e["event"] for e in job["events"]])
    with open(log) as f:
        test.assertIn("ModuleNotFoundError", f.read())
    return job


class JobsE2E(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.home = tempfile.mkdtemp(prefix="vigil-jobs-e2e-")
        cls.work = tempfile.mkdtemp(prefix="vigil-jobs-work-")
        cls.port, cls.url, cls.env = private_instance(cls.home)
        cls.script = os.path.join(cls.work, "train.py")
        with open(cls.script, "w") as f:
            f.write(TRAIN)
        up = subprocess.run([VIGIL, "up", "--listen", f"127.0.0.1:{cls.port}"],
                            capture_output=True, text=True, env=cls.env, timeout=60)
        assert up.returncode == 0, up.stdout + up.stderr
        run = lambda name, mode: subprocess.Popen(  # noqa: E731
            [VIGIL, "run", "--name", name, "--", "/usr/bin/python3", cls.script, mode],
            env=cls.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        cls.oom = run("oom-run", "oom")
        cls.done = run("good-run", "done")
        cls.cancel = run("cancelled-run", "wait")
        # A launcher found by detection alone (its command line says torchrun).
        cls.launcher = subprocess.Popen(["bash", "-c", "exec -a torchrun sleep 300"])

    @classmethod
    def tearDownClass(cls):
        for p in (cls.oom, cls.done, cls.cancel, cls.launcher):
            if p.poll() is None:
                p.kill()
            p.wait()
        subprocess.run([VIGIL, "down"], env=cls.env, capture_output=True, timeout=60)
        shutil.rmtree(cls.home, ignore_errors=True)
        shutil.rmtree(cls.work, ignore_errors=True)

    def jobs(self):
        p = subprocess.run([VIGIL, "jobs", "--json"], capture_output=True, text=True, env=self.env,
                           timeout=30)
        self.assertEqual(p.returncode, 0, p.stderr)
        return {j["name"]: j for j in json.loads(p.stdout)["data"]["jobs"]}

    def test_states_reasons_and_loss(self):
        self.assertEqual(self.oom.wait(timeout=60), 1)
        self.assertEqual(self.done.wait(timeout=60), 0)
        # The cancelled job is running, then a scheduler cancels it.
        wait_for(lambda: self.jobs().get("cancelled-run", {}).get("state") == "running", 30,
                 "the waiting job to show as running")
        self.cancel.send_signal(signal.SIGTERM)
        self.cancel.wait(timeout=30)

        # An end is known at once (the kernel's exit event); the log lines
        # that explain it reach the store a moment later: wait for both.
        def settled():
            jobs = self.jobs()
            want = {"oom-run": "crashed", "good-run": "completed", "cancelled-run": "killed"}
            done = all(jobs.get(n, {}).get("state") == s for n, s in want.items())
            return jobs if done and jobs["oom-run"]["reason"] == "cuda_oom" else None
        jobs = wait_for(settled, 60, "the three runs to reach their final states")
        self.assertEqual(jobs["oom-run"]["reason"], "cuda_oom")
        self.assertIn("CUDA out of memory", jobs["oom-run"]["reason_text"])
        self.assertEqual(jobs["oom-run"]["exit_code"], 1)
        self.assertEqual(jobs["cancelled-run"]["exit_signal"], "SIGTERM")
        self.assertIn("cuda_oom", [e["event"] for e in jobs["oom-run"]["events"]])
        # Its lines carry its run: the log query and its series select it alone.
        self.assertEqual(jobs["oom-run"]["log_query"],
                         '{run="%s", node="%s"}' % (jobs["oom-run"]["id"], jobs["oom-run"]["node"]))
        self.assertEqual(jobs["oom-run"]["series_selector"], jobs["oom-run"]["log_query"])

        # The detected launcher: running, PyTorch by its launcher. Found by its
        # pid: other tests on this host may run (and kill) a "torchrun" too.
        torchrun = wait_for(lambda: self.job_of_pid(self.launcher.pid), 30,
                            "the torchrun launcher job")
        self.assertEqual(torchrun["state"], "running")
        self.assertEqual(torchrun["launcher"], "torchrun")
        # Whose job (issue 15): the user who started it, named as on this node.
        me = pwd.getpwuid(os.getuid()).pw_name
        self.assertEqual((torchrun["user"], torchrun["uid"]), (me, os.getuid()))
        self.assertEqual((jobs["oom-run"]["user"], jobs["oom-run"]["uid"]), (me, os.getuid()))

        # The loss curve, from the log lines, as a series with the job's label:
        # every value (the raw samples of a range selector).
        series = wait_for(lambda: self.samples('training_loss{job="good-run"}', 5), 30,
                          "training_loss of good-run")
        self.assertEqual([float(v) for _, v in series[0]["values"]], [2.0, 1.0, 0.6667, 0.5, 0.4])

        # The table a person reads.
        p = subprocess.run([VIGIL, "jobs"], capture_output=True, text=True, env=self.env, timeout=30)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("crashed", p.stdout)
        self.assertIn("CUDA out of memory", p.stdout)
        self.assertIn("SIGTERM", p.stdout)
        header = p.stdout.splitlines()[0].split()
        self.assertEqual(header[:3], ["NAME", "STATE", "USER"])
        oom_row = [line.split() for line in p.stdout.splitlines() if line.startswith("oom-run ")]
        self.assertEqual(oom_row[0][2], me[:10])

    def test_two_runs_of_one_script_are_two_jobs_with_their_own_series(self):
        """A sweep: the same script twice at once, under one name. Each run is
        its own job, and its loss curve is its own (the `run` label)."""
        runs = [subprocess.Popen([VIGIL, "run", "--name", "sweep", "--", "/usr/bin/python3",
                                  self.script, "done"], env=self.env, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL) for _ in range(2)]
        for r in runs:
            self.assertEqual(r.wait(timeout=60), 0)

        def two_runs():
            p = subprocess.run([VIGIL, "jobs", "--json"], capture_output=True, text=True,
                               env=self.env, timeout=30)
            sweep = [j for j in json.loads(p.stdout)["data"]["jobs"] if j["name"] == "sweep"]
            done = len(sweep) == 2 and all(j["state"] == "completed" for j in sweep)
            return sweep if done and all(j["log_query"].startswith("{run=") for j in sweep) else None
        sweep = wait_for(two_runs, 60, "the two runs of the sweep, completed")
        self.assertNotEqual(sweep[0]["id"], sweep[1]["id"])
        for job in sweep:
            series = wait_for(lambda: self.samples("training_loss" + job["series_selector"], 5), 30,
                              "training_loss of one run")
            self.assertEqual(len(series), 1, series)  # one run's series, not both
            self.assertEqual(series[0]["metric"]["run"], job["id"])
            self.assertEqual([float(v) for _, v in series[0]["values"]],
                             [2.0, 1.0, 0.6667, 0.5, 0.4])

    def test_tensorboard_scalars_of_a_running_job(self):
        script = os.path.join(self.work, "tb.py")
        with open(script, "w") as f:
            f.write(TENSORBOARD)
        events = os.path.join(self.work, "events.out.tfevents.1764460800.node.1.0")
        job = subprocess.Popen([VIGIL, "run", "--name", "tb-run", "--", "/usr/bin/python3", script,
                                events, "20", os.path.dirname(os.path.abspath(__file__))],
                               env=self.env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
        try:
            series = wait_for(lambda: self.samples('training_train_loss{job="tb-run"}', 5), 40,
                              "the TensorBoard scalars of tb-run")
            self.assertEqual([round(float(v), 4) for _, v in series[0]["values"]],
                             [1.0, 0.5, 0.3333, 0.25, 0.2])
            self.assertEqual(series[0]["metric"]["source"], events)
        finally:
            job.terminate()  # forwarded to the python child by `vigil run`
            job.wait(timeout=30)

    def test_mlflow_metrics_of_a_running_job(self):
        workdir = os.path.join(self.work, "mlflow-job")
        os.makedirs(workdir)
        script = os.path.join(workdir, "train_mlflow.py")
        with open(script, "w") as f:
            f.write(MLFLOW)
        job = subprocess.Popen([VIGIL, "run", "--name", "mlflow-run", "--", "/usr/bin/python3",
                                script, "20"], cwd=workdir, env=self.env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            series = wait_for(lambda: self.samples('training_loss{job="mlflow-run"}', 5), 40,
                              "the MLflow losses of mlflow-run")
            self.assertEqual([float(v) for _, v in series[0]["values"]], [2.0, 1.0, 2 / 3, 0.5, 0.4])
            self.assertEqual(series[0]["metric"]["mlflow_run"], "run42")
            wait_for(lambda: self.query_instant('training_eval_acc{job="mlflow-run"}'), 20,
                     "the nested eval/acc metric")
        finally:
            job.terminate()
            job.wait(timeout=30)

    def job_of_pid(self, pid):
        p = subprocess.run([VIGIL, "jobs", "--json"], capture_output=True, text=True, env=self.env,
                           timeout=30)
        for j in json.loads(p.stdout)["data"]["jobs"]:
            if any(proc["pid"] == pid for proc in j["processes"]):
                return j
        return None

    def samples(self, selector, at_least):
        """The raw samples of `selector` over the last 10 minutes, once a
        series has at least `at_least` of them (else None)."""
        res = self.query_instant(selector + "[10m]")
        return res if res and len(res[0]["values"]) >= at_least else None

    def query_instant(self, q):
        qs = urllib.parse.urlencode({"query": q})
        with urllib.request.urlopen(f"{self.url}/api/v1/query?{qs}", timeout=10) as r:
            return json.loads(r.read())["data"]["result"]

    def test_a_job_that_dies_at_start_up_is_listed_as_crashed(self):
        # Issue 13: it lives ~0.2 s; the kernel's process events (vigil up
        # runs as root here) snapshot it on exec and give its exit status.
        # Once a pass has listed the launcher, the watcher is listening.
        wait_for(lambda: self.jobs().get("torchrun"), 30, "the first detection pass")
        p, log = start_crash(self.work, "quick_crash", 0.2)
        self.assertEqual(p.wait(timeout=30), 1)
        job = assert_crashed_at_start(self, self.jobs, "quick_crash", log, 1)
        self.assertEqual(len(job["processes"]), 1)
        self.assertEqual(job["processes"][0]["pid"], p.pid)
        # One process, one job: never listed twice, and it stays crashed.
        time.sleep(3)
        again = subprocess.run([VIGIL, "jobs", "--json"], capture_output=True, text=True,
                               env=self.env, timeout=30)
        listed = [j for j in json.loads(again.stdout)["data"]["jobs"] if j["name"] == "quick_crash"]
        self.assertEqual([(j["id"], j["state"]) for j in listed], [(job["id"], "crashed")])

    def test_inspect_log_explains_the_crash(self):
        self.assertEqual(self.oom.wait(timeout=60), 1)
        spooled = glob.glob(os.path.join(self.home, "spool", "run", "oom-run.*[0-9].log"))
        self.assertEqual(len(spooled), 1)
        p = subprocess.run([VIGIL, "inspect-log", spooled[0]], capture_output=True, text=True,
                           timeout=30)
        self.assertEqual(p.returncode, 0, p.stderr)
        out = [json.loads(l) for l in p.stdout.splitlines()]
        losses = [o["value"] for o in out if o.get("metric") == "loss"]
        self.assertEqual(losses, [2.0, 1.0, 0.6667, 0.5, 0.4])
        events = [o for o in out if "event" in o]
        # The OOM, and (since every traceback is reported) its traceback, at
        # the same line.
        self.assertEqual([e["event"] for e in events], ["cuda_oom", "traceback"])
        self.assertEqual(events[0]["requested"], "2.00 GiB")
        self.assertEqual(events[1]["line"], events[0]["line"])
        self.assertEqual(events[1]["exception"], "torch.cuda.OutOfMemoryError")


class ShortLivedJobsWithoutTheConnector(unittest.TestCase):
    """The fallback where the connector is not permitted (forced here with
    VIGIL_PROC_EVENTS=poll): /proc's pids every 250 ms. No exit status, so the
    verdict rests on the traceback in its log."""

    @classmethod
    def setUpClass(cls):
        cls.home = tempfile.mkdtemp(prefix="vigil-jobs-poll-e2e-")
        cls.work = tempfile.mkdtemp(prefix="vigil-jobs-poll-work-")
        cls.port, cls.url, cls.env = private_instance(cls.home)
        cls.env["VIGIL_PROC_EVENTS"] = "poll"
        up = subprocess.run([VIGIL, "up", "--listen", f"127.0.0.1:{cls.port}"],
                            capture_output=True, text=True, env=cls.env, timeout=60)
        assert up.returncode == 0, up.stdout + up.stderr
        cls.launcher = subprocess.Popen(["bash", "-c", "exec -a torchrun sleep 300"])

    @classmethod
    def tearDownClass(cls):
        cls.launcher.kill()
        cls.launcher.wait()
        subprocess.run([VIGIL, "down"], env=cls.env, capture_output=True, timeout=60)
        shutil.rmtree(cls.home, ignore_errors=True)
        shutil.rmtree(cls.work, ignore_errors=True)

    def jobs(self):
        with urllib.request.urlopen(f"{self.url}/api/v1/jobs", timeout=10) as r:
            return {j["name"]: j for j in json.loads(r.read())["data"]["jobs"]}

    def test_a_job_that_dies_at_start_up_is_found_by_the_poll(self):
        # Once a pass has listed the launcher, the poll has taken its first look.
        wait_for(lambda: self.jobs().get("torchrun"), 30, "the first detection pass")
        # Alive for ~0.8 s: longer than the poll's 250 ms, shorter than any pass.
        p, log = start_crash(self.work, "polled_crash", 0.8)
        self.assertEqual(p.wait(timeout=30), 1)
        assert_crashed_at_start(self, self.jobs, "polled_crash", log, None)


if __name__ == "__main__":
    unittest.main()
