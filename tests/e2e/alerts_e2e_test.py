#!/usr/bin/env python3
"""Alerts end to end, with no rule written: `vigil up` on a fake GPU that
overheats and then cools, a job that crashes and one that finishes, and a
webhook receiver on loopback. Each scenario must bring the right alert at the
webhook once (Alertmanager's payload, version 4), list it in `vigil alerts`,
and send its resolution; a restart while firing must not notify again. A
silence (`vigil silence add job=...`) keeps a crash from the webhook while
`vigil alerts` lists it, silenced; `vigil silence rm` ends it, and the crash,
still firing, is notified then.

GPU scenarios on the fake NVML (GpuScenario and below), each asserting the
exact alerts notified, how many times each was announced and resolved: OOM
risk (gpu_memory_near_full warning then critical, gpu_memory_growing), Xid 79
then the GPU lost (its metric alerts muted while lost), an idle allocated GPU
(gpu_idle_allocated, idle_gpu_cost priced), and values hovering at a
threshold inside the hysteresis band (one notice, one resolution). Jobs under
`vigil run`: a GPU under-used, a NaN loss and a stall (JobAlerts), a loss that
blows up then a normal end (DivergingLoss: training_loss_diverging, then
job_finished, nothing else).

time_scale 0.05 in config.json plays the presets' durations 20x faster
(`for: 30s` -> 1.5 s).

Environment (set by CTest): VIGIL_BIN, VIGIL_FAKE_NVML, VIGIL_SOURCE_DIR.
"""
import http.server
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_util import ServerAgentCase, child_of, free_port, start_foreground, wait_for  # noqa: E402

VIGIL = os.environ["VIGIL_BIN"]

# GPU 0 at 95 C (its slowdown is 90) for its first 20 s, then 60 C; GPU 1
# stays cool. Both busy, so no under-use alert. The fake's clock starts with
# the process, so after a restart GPU 0 is hot again for 20 s.
SCENARIO = """
driver_version 550.54.15
cuda_version 12.4
gpus 2
gpu all model "NVIDIA H100 80GB HBM3"
gpu all temp_slowdown_c 90
curve all gpu_util 0:95
curve all power_w 0:500
curve 1 temp 0:60
curve 0 temp 0:95 20:95 21:60 step
"""


class Receiver(http.server.BaseHTTPRequestHandler):
    bodies = []
    lock = threading.Lock()

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        body = json.loads(self.rfile.read(n))
        body["_path"] = self.path  # which test's channel it came to
        if self.path == "/quiet":
            body["_quiet"] = True
        with Receiver.lock:
            Receiver.bodies.append((time.time(), body))
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args):
        pass


def received(alertname=None, status=None):
    """(time, alert, payload) of every alert received, in order."""
    out = []
    with Receiver.lock:
        for t, body in Receiver.bodies:
            for a in body["alerts"]:
                if alertname and a["labels"]["alertname"] != alertname:
                    continue
                if status and a["status"] != status:
                    continue
                out.append((t, a, body))
    return out


class AlertsE2E(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.home = tempfile.mkdtemp(prefix="vigil-alerts-e2e-")
        cls.work = tempfile.mkdtemp(prefix="vigil-alerts-work-")
        scenario = os.path.join(cls.work, "hot.scenario")
        with open(scenario, "w") as f:
            f.write(SCENARIO)
        cls.hook = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
        threading.Thread(target=cls.hook.serve_forever, daemon=True).start()
        hook_url = f"http://127.0.0.1:{cls.hook.server_address[1]}/hook"
        with open(os.path.join(cls.home, "config.json"), "w") as f:
            json.dump({"alerts": {"time_scale": 0.05},
                       "notify": {"channels": [{"name": "hook", "type": "webhook", "url": hook_url}]}},
                      f)
        cls.port = free_port()
        cls.url = f"http://127.0.0.1:{cls.port}"
        cls.env = dict(os.environ, VIGIL_NVML_LIBRARY=os.environ["VIGIL_FAKE_NVML"],
                       VIGIL_FAKE_NVML_SCENARIO=scenario, VIGIL_HOME=cls.home)
        cls.env.pop("VIGIL_URL", None)
        cls.start()

    @classmethod
    def start(cls):
        up = subprocess.run([VIGIL, "up", "--listen", f"127.0.0.1:{cls.port}"],
                            capture_output=True, text=True, env=cls.env, timeout=60)
        assert up.returncode == 0, up.stdout + up.stderr

    @classmethod
    def tearDownClass(cls):
        subprocess.run([VIGIL, "down"], env=cls.env, capture_output=True, timeout=60)
        cls.hook.shutdown()
        shutil.rmtree(cls.home, ignore_errors=True)
        shutil.rmtree(cls.work, ignore_errors=True)

    def alerts(self, *args):
        p = subprocess.run([VIGIL, "alerts", "--json", *args], capture_output=True, text=True,
                           env=self.env, timeout=30)
        self.assertEqual(p.returncode, 0, p.stderr)
        return json.loads(p.stdout)

    def test_1_overheating_gpu_then_its_resolution_and_a_restart(self):
        # The critical level (>= 90 C for 30 s, here 1.5 s) reaches the hook.
        first = wait_for(lambda: received("gpu_temperature_high", "firing"), 40,
                         "gpu_temperature_high at the webhook")
        t, a, body = first[0]
        self.assertEqual(body["version"], "4")
        self.assertEqual(body["receiver"], "hook")
        self.assertEqual(body["status"], "firing")
        self.assertEqual(a["endsAt"], "0001-01-01T00:00:00Z")
        self.assertEqual(a["labels"]["gpu"], "0")
        self.assertEqual(len(a["fingerprint"]), 16)
        self.assertIn("95", a["annotations"]["summary"])
        self.assertIn("GPU 0", a["annotations"]["summary"])
        listed = wait_for(lambda: [x for x in self.alerts() if x["rule"] == "gpu_temperature_high"
                                   and x["state"] == "firing" and x["severity"] == "critical"],
                          20, "the critical alert in vigil alerts")
        self.assertEqual(listed[0]["labels"]["gpu"], "0")
        self.assertEqual(listed[0]["threshold"], 90)
        # The diagnosis is filled when the alert fires (docs/diagnosis.md): a
        # hot GPU whose NVML reports no clock slowdown has no known cause.
        diagnosis = listed[0]["diagnosis"]
        self.assertEqual(diagnosis["causes"][0]["id"], "unknown", diagnosis)
        self.assertIsInstance(diagnosis["suggestions"], list)
        # GPU 1 never alerts.
        self.assertFalse([x for x in self.alerts() if x["labels"].get("gpu") == "1"])

        # Restart while firing (the GPU is hot again at once): what fired is
        # restored and still firing, and nothing is sent again.
        sent_before = len(received("gpu_temperature_high"))
        subprocess.run([VIGIL, "down"], env=self.env, capture_output=True, timeout=60)
        self.start()
        time.sleep(5)
        self.assertTrue([x for x in self.alerts() if x["rule"] == "gpu_temperature_high"
                         and x["state"] == "firing" and x["id"] == listed[0]["id"]])
        self.assertEqual(received("gpu_temperature_high")[sent_before:], [],
                         "a restart must not notify a firing alert again")

        # It cools 20 s after the restart; its resolution arrives, once per alert.
        resolved = wait_for(lambda: received("gpu_temperature_high", "resolved"), 60,
                            "the resolution at the webhook")
        ids = [a["fingerprint"] for _, a, _ in resolved]
        time.sleep(3)
        self.assertEqual(len(set(ids)), len(ids))
        history = [x for x in self.alerts("--all") if x["state"] == "resolved"]
        self.assertTrue(history)
        self.assertIsNotNone(history[0]["resolved_at"])

    def test_2_a_crash_and_a_finished_job(self):
        crash = subprocess.run(
            [VIGIL, "run", "--name", "crashy", "--", "/usr/bin/python3", "-c",
             "import time; time.sleep(1.5); raise RuntimeError('CUDA error: an illegal memory access was encountered')"],
            env=self.env, capture_output=True, text=True, timeout=60)
        self.assertNotEqual(crash.returncode, 0)
        t_end = time.time()
        got = wait_for(lambda: [x for x in received("job_crashed", "firing")
                                if x[1]["labels"].get("job") == "crashy"], 30, "job_crashed at the webhook")
        self.assertLess(got[0][0] - t_end, 15)
        self.assertEqual(got[0][1]["labels"]["severity"], "critical")
        self.assertTrue(got[0][1]["labels"].get("run"))
        done = subprocess.run([VIGIL, "run", "--name", "tidy", "--", "/usr/bin/python3", "-c",
                               "import time; print('loss 1.0', flush=True); time.sleep(4); print('done')"],
                              env=self.env, capture_output=True, text=True, timeout=60)
        self.assertEqual(done.returncode, 0)
        fin = wait_for(lambda: [x for x in received("job_finished", "firing")
                                if x[1]["labels"].get("job") == "tidy"], 30, "job_finished at the webhook")
        self.assertEqual(fin[0][1]["labels"]["severity"], "info")
        # The end's notification carries the run's summary (one message, not two).
        summary = fin[0][1]["annotations"]["description"]
        self.assertIn("Ran ", summary)
        self.assertIn("alerts during the run", summary)
        self.assertIn("运行", fin[0][1]["annotations"]["description_zh"])
        self.assertIn("exit", got[0][1]["annotations"]["description"])
        # Its numbers come from the run's own training_loss: in the message
        # when its line was stored before the end was known, in the alert's
        # record in any case once the line is stored (late on a loaded node).
        wait_for(lambda: [x for x in self.alerts() if x["rule"] == "job_finished"
                          and x["labels"].get("job") == "tidy"
                          and "final loss 1" in x.get("description", "")], 30,
                 "the finished run's final loss in its summary")
        time.sleep(3)
        crashes = [x for x in received("job_crashed", "firing") if x[1]["labels"].get("job") == "crashy"]
        self.assertEqual(len(crashes), 1, "one notification per crash")
        # The finished run did not crash.
        self.assertFalse([x for x in received("job_crashed") if x[1]["labels"].get("job") == "tidy"])

    def silence(self, *args):
        return subprocess.run([VIGIL, "silence", *args], capture_output=True, text=True,
                              env=self.env, timeout=30)

    def silences(self):
        p = self.silence("ls", "--json")
        self.assertEqual(p.returncode, 0, p.stderr)
        return json.loads(p.stdout)

    def test_3_a_silenced_crash(self):
        add = self.silence("add", "job=hushed", "--duration", "1h", "--comment", "e2e maintenance")
        self.assertEqual(add.returncode, 0, add.stderr)
        sid = add.stdout.strip()
        self.assertRegex(sid, r"^[0-9a-f]{16}$")
        mine = [s for s in self.silences() if s["id"] == sid]
        self.assertEqual(len(mine), 1)
        self.assertEqual(mine[0]["status"]["state"], "active")
        self.assertEqual(mine[0]["matchers"],
                         [{"name": "job", "value": "hushed", "isRegex": False, "isEqual": True}])
        self.assertEqual(mine[0]["comment"], "e2e maintenance")

        crash = subprocess.run(
            [VIGIL, "run", "--name", "hushed", "--", "/usr/bin/python3", "-c",
             "import time; time.sleep(1.5); raise RuntimeError('CUDA error: an illegal memory access was encountered')"],
            env=self.env, capture_output=True, text=True, timeout=60)
        self.assertNotEqual(crash.returncode, 0)

        def hushed_alerts():
            return [x for x in self.alerts() if x["rule"] == "job_crashed"
                    and x["labels"].get("job") == "hushed" and x["state"] == "firing"]
        listed = wait_for(hushed_alerts, 30, "the silenced crash in vigil alerts")
        self.assertIs(listed[0].get("silenced"), True)
        table = subprocess.run([VIGIL, "alerts"], capture_output=True, text=True, env=self.env,
                               timeout=30)
        self.assertIn("firing~", table.stdout)
        time.sleep(4)  # many evaluations and group waits (time_scale 0.05)
        self.assertEqual([x for x in received("job_crashed") if x[1]["labels"].get("job") == "hushed"],
                         [], "a silenced crash must not reach the webhook")

        rm = self.silence("rm", sid)
        self.assertEqual(rm.returncode, 0, rm.stderr)
        self.assertEqual([s["status"]["state"] for s in self.silences() if s["id"] == sid],
                         ["expired"])
        ls = self.silence("ls")
        self.assertIn(sid, ls.stdout)
        self.assertIn("expired", ls.stdout)
        self.assertIn('job="hushed"', ls.stdout)
        # Still firing once the silence ends: notified now, once.
        wait_for(lambda: [x for x in received("job_crashed", "firing")
                          if x[1]["labels"].get("job") == "hushed"], 30,
                 "the crash at the webhook after vigil silence rm")
        self.assertFalse([x for x in hushed_alerts() if x.get("silenced")])
        time.sleep(3)
        self.assertEqual(len([x for x in received("job_crashed", "firing")
                              if x[1]["labels"].get("job") == "hushed"]), 1)

        # Mistakes are refused with a reason, and an unknown id is not found.
        bad = self.silence("add", "job")
        self.assertEqual(bad.returncode, 2)
        self.assertIn("name=value", bad.stderr)
        bad = self.silence("add", "job=~(")
        self.assertEqual(bad.returncode, 2)
        self.assertIn("does not compile", bad.stderr)
        gone = self.silence("rm", "0123456789abcdef")
        self.assertEqual(gone.returncode, 1)
        self.assertIn("no silence has the id", gone.stderr)


QUIET_TRAIN = """import math, random, sys, time
random.seed(7)
step, t0 = 0, time.time()
while time.time() - t0 < float(sys.argv[1]):
    step += 1
    loss = 2.5 * math.exp(-step / 400) + 0.4 + random.uniform(-0.04, 0.04)
    lr = 3e-4 * min(1.0, step / 50)
    print(f"step {step} | loss {loss:.4f} | lr {lr:.2e} | grad_norm {0.8 + random.uniform(-0.2, 0.2):.3f}",
          flush=True)
    time.sleep(0.2)
"""


def host_near_full():
    """Whether this machine's own memory or a disk is over the presets'
    thresholds (the quiet day cannot make the CI machine's disk emptier)."""
    with open("/proc/meminfo") as f:
        info = {l.split(":")[0]: int(l.split()[1]) for l in f if len(l.split()) >= 2}
    if 1 - info["MemAvailable"] / info["MemTotal"] > 0.85:
        return True
    with open("/proc/mounts") as f:
        for line in f:
            mnt, fstype = line.split()[1], line.split()[2]
            if fstype in ("tmpfs", "devtmpfs", "overlay", "squashfs", "proc", "sysfs"):
                continue
            try:
                st = os.statvfs(mnt)
            except OSError:
                continue
            if st.f_blocks and 1 - st.f_bavail / st.f_blocks > 0.85:
                return True
    return False


class QuietDay(unittest.TestCase):
    """Two hours of a healthy 8-GPU training node, played 60x fast (the fake
    NVML's clock and the presets' durations alike), with a healthy training
    job: no alert may fire and nothing may reach the webhook."""

    def test_two_healthy_hours_raise_no_alert(self):
        home = tempfile.mkdtemp(prefix="vigil-quiet-e2e-")
        work = tempfile.mkdtemp(prefix="vigil-quiet-work-")
        hook = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
        threading.Thread(target=hook.serve_forever, daemon=True).start()
        with open(os.path.join(home, "config.json"), "w") as f:
            json.dump({"alerts": {"time_scale": 1 / 60},
                       "notify": {"channels": [{"name": "hook", "type": "webhook",
                                                "url": f"http://127.0.0.1:{hook.server_address[1]}/quiet"}]}},
                      f)
        port = free_port()
        scenario = os.path.join(os.environ["VIGIL_SOURCE_DIR"],
                                "tests/fake_nvml/scenarios/healthy_h100x8.scenario")
        env = dict(os.environ, VIGIL_NVML_LIBRARY=os.environ["VIGIL_FAKE_NVML"], VIGIL_HOME=home,
                   VIGIL_FAKE_NVML_SCENARIO=scenario, VIGIL_FAKE_NVML_SPEED="60")
        env.pop("VIGIL_URL", None)
        job = None
        try:
            up = subprocess.run([VIGIL, "up", "--listen", f"127.0.0.1:{port}"],
                                capture_output=True, text=True, env=env, timeout=60)
            self.assertEqual(up.returncode, 0, up.stdout + up.stderr)
            script = os.path.join(work, "train.py")
            with open(script, "w") as f:
                f.write(QUIET_TRAIN)
            job = subprocess.Popen([VIGIL, "run", "--name", "quiet-train", "--", "/usr/bin/python3",
                                    script, "200"], env=env, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL)
            time.sleep(120)  # two scenario hours
            p = subprocess.run([VIGIL, "alerts", "--all", "--json"], capture_output=True, text=True,
                               env=env, timeout=30)
            # Vigil finds every process's job on the host: another test's job
            # on a shared machine (a killed `torchrun`) is no part of this one.
            raised = [a for a in json.loads(p.stdout) if a["state"] != "pending"
                      and a["labels"].get("job", "quiet-train") == "quiet-train"]
            if host_near_full():
                raised = [a for a in raised if a["rule"] not in ("host_memory_near_full", "disk_near_full")]
            self.assertEqual(raised, [], "a healthy node raised alerts")
            sent = [a["labels"] for _, a, body in received() if body.get("_quiet")
                    and a["labels"].get("job", "quiet-train") == "quiet-train"]
            if host_near_full():
                sent = [l for l in sent if l["alertname"] not in ("host_memory_near_full", "disk_near_full")]
            self.assertEqual(sent, [], "a healthy node notified")
        finally:
            if job is not None and job.poll() is None:
                job.terminate()
                job.wait(30)
            subprocess.run([VIGIL, "down"], env=env, capture_output=True, timeout=60)
            hook.shutdown()
            shutil.rmtree(home, ignore_errors=True)
            shutil.rmtree(work, ignore_errors=True)


STALLING_TRAIN = """import sys, time
for step in range(1, 101):
    loss = "nan" if step >= 70 else f"{2.0 - step / 100:.3f}"
    print(f"step {step} | loss {loss} | lr 3.00e-04", flush=True)
    time.sleep(0.2)
time.sleep(600)  # alive, no more steps: stalled
"""


class JobAlerts(unittest.TestCase):
    """A job on a GPU it hardly uses, whose loss turns NaN, then stalls:
    gpu_underutilized, training_loss_nan and job_stalled, each once."""

    def test_underused_nan_then_stalled(self):
        home = tempfile.mkdtemp(prefix="vigil-jobalerts-e2e-")
        work = tempfile.mkdtemp(prefix="vigil-jobalerts-work-")
        hook = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
        threading.Thread(target=hook.serve_forever, daemon=True).start()
        with open(os.path.join(home, "config.json"), "w") as f:
            json.dump({"alerts": {"time_scale": 0.02},
                       "notify": {"channels": [{"name": "hook", "type": "webhook",
                                                "url": f"http://127.0.0.1:{hook.server_address[1]}/jobs"}]}},
                      f)
        env = dict(os.environ, VIGIL_HOME=home, VIGIL_NVML_LIBRARY=os.environ["VIGIL_FAKE_NVML"])
        env.pop("VIGIL_URL", None)
        script = os.path.join(work, "train.py")
        with open(script, "w") as f:
            f.write(STALLING_TRAIN)
        job = subprocess.Popen([VIGIL, "run", "--name", "slowpoke", "--", "/usr/bin/python3", script],
                               env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            pid = wait_for(lambda: child_of(job.pid), 10, "the job's process")
            # Its GPU (0) holds its memory and runs at 20 %.
            scenario = os.path.join(work, "job.scenario")
            with open(scenario, "w") as f:
                f.write(f"gpus 2\ncurve all gpu_util 0:20\ncurve all temp 0:50\n"
                        f"process 0 pid {pid} mem_mib 30000 from 0\n")
            env["VIGIL_FAKE_NVML_SCENARIO"] = scenario
            up = subprocess.run([VIGIL, "up", "--listen", f"127.0.0.1:{free_port()}"],
                                capture_output=True, text=True, env=env, timeout=60)
            self.assertEqual(up.returncode, 0, up.stdout + up.stderr)

            def at_hook(alertname):
                return [a for _, a, b in received(alertname, "firing") if b["groupKey"].startswith("hook:")
                        and a["labels"].get("job") == "slowpoke"]
            under = wait_for(lambda: at_hook("gpu_underutilized"), 60, "gpu_underutilized")
            self.assertEqual(under[0]["labels"]["gpu"], "0")
            self.assertEqual(under[0]["labels"]["severity"], "warning")
            nan = wait_for(lambda: at_hook("training_loss_nan"), 60, "training_loss_nan")
            self.assertEqual(nan[0]["labels"]["severity"], "critical")
            # No step for 5 intervals and at least a minute: stalled.
            stalled = wait_for(lambda: at_hook("job_stalled"), 150, "job_stalled")
            self.assertTrue(stalled[0]["labels"]["run"])
            time.sleep(3)
            # A group's message lists every alert of the group that fires, so
            # an alert is in several messages; it must never resolve and fire
            # again (a flap).
            for name in ("gpu_underutilized", "training_loss_nan", "job_stalled"):
                states = [a["status"] for _, a, b in received(name) if a["labels"].get("job") == "slowpoke"
                          and b["groupKey"].startswith("hook:")]
                episodes = [x for i, x in enumerate(states) if i == 0 or states[i - 1] != x]
                self.assertIn(episodes, (["firing"], ["firing", "resolved"]), f"{name}: {states}")
        finally:
            child = child_of(job.pid)
            job.kill()
            job.wait()
            if child:
                try:
                    os.kill(child, 9)
                except OSError:
                    pass
            subprocess.run([VIGIL, "down"], env=env, capture_output=True, timeout=60)
            hook.shutdown()
            shutil.rmtree(home, ignore_errors=True)
            shutil.rmtree(work, ignore_errors=True)


DIVERGING_TRAIN = """import math, random, sys, time
random.seed(7)
# 30 s of a healthy, noisy, falling loss (4 lines a second), then it blows
# up (x1.25 a second) for 15 s, then the run ends normally.
for step in range(1, 181):
    t = step / 4
    loss = 2.0 * math.exp(-t / 60) + 0.5
    if t > 30:
        loss *= 1.25 ** (t - 30)
    loss *= 1 + random.uniform(-0.03, 0.03)
    print(f"step {step} | loss {loss:.4f} | lr 3.00e-04", flush=True)
    time.sleep(0.25)
"""


class DivergingLoss(unittest.TestCase):
    """A run whose loss blows up after 30 s and which then ends: under
    time_scale 0.02 the divergence rule compares the last 6 s (5 min) with
    the 18 s (15 min) before. training_loss_diverging fires (critical), once,
    and nothing else about the run but its end (job_finished)."""

    def test_a_blow_up_is_diverging_and_nothing_else(self):
        home = tempfile.mkdtemp(prefix="vigil-diverge-e2e-")
        work = tempfile.mkdtemp(prefix="vigil-diverge-work-")
        hook = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
        threading.Thread(target=hook.serve_forever, daemon=True).start()
        with open(os.path.join(home, "config.json"), "w") as f:
            json.dump({"alerts": {"time_scale": 0.02},
                       "notify": {"channels": [{"name": "hook", "type": "webhook",
                                                "url": f"http://127.0.0.1:{hook.server_address[1]}/diverge"}]}},
                      f)
        scenario = os.path.join(work, "busy.scenario")
        with open(scenario, "w") as f:
            f.write("gpus 1\ncurve all gpu_util 0:95\ncurve all temp 0:50\ncurve all power_w 0:300\n")
        script = os.path.join(work, "train.py")
        with open(script, "w") as f:
            f.write(DIVERGING_TRAIN)
        env = dict(os.environ, VIGIL_HOME=home, VIGIL_NVML_LIBRARY=os.environ["VIGIL_FAKE_NVML"],
                   VIGIL_FAKE_NVML_SCENARIO=scenario)
        env.pop("VIGIL_URL", None)
        up = subprocess.run([VIGIL, "up", "--listen", f"127.0.0.1:{free_port()}"],
                            capture_output=True, text=True, env=env, timeout=60)
        self.assertEqual(up.returncode, 0, up.stdout + up.stderr)
        job = subprocess.Popen([VIGIL, "run", "--name", "blowup", "--", "/usr/bin/python3", script],
                               env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            def mine(alertname=None, status=None):
                return [a for _, a, b in received(alertname, status) if b["groupKey"].startswith("hook:")
                        and a["labels"].get("job") == "blowup"
                        and b.get("_path", "/diverge") == "/diverge"]
            div = wait_for(lambda: [a for a in mine("training_loss_diverging", "firing")
                                    if a["labels"]["severity"] == "critical"], 90,
                           "training_loss_diverging (critical) at the webhook")
            self.assertIn("blowup", div[0]["annotations"]["summary"])
            self.assertEqual(job.wait(timeout=120), 0)
            wait_for(lambda: mine("job_finished", "firing"), 60, "job_finished")
            time.sleep(3)
            names = {(a["labels"]["alertname"], a["labels"]["severity"]) for a in mine()}
            self.assertLessEqual(names, {("training_loss_diverging", "warning"),
                                         ("training_loss_diverging", "critical"),
                                         ("job_finished", "info")}, names)
            # Never fired, resolved and fired again (a flap).
            for key in names:
                states = [a["status"] for a in mine(key[0]) if a["labels"]["severity"] == key[1]]
                episodes = [x for i, x in enumerate(states) if i == 0 or states[i - 1] != x]
                self.assertIn(episodes, (["firing"], ["firing", "resolved"]), f"{key}: {states}")
        finally:
            if job.poll() is None:
                job.kill()
                job.wait()
            subprocess.run([VIGIL, "down"], env=env, capture_output=True, timeout=60)
            hook.shutdown()
            shutil.rmtree(home, ignore_errors=True)
            shutil.rmtree(work, ignore_errors=True)


class NodeDown(ServerAgentCase, unittest.TestCase):
    """A `vigil agent` killed: node_down at the server's webhook, its other
    alerts muted; back when the agent returns."""
    prefix = "vigil-nodedown-"

    def test_agent_killed(self):
        hook = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
        threading.Thread(target=hook.serve_forever, daemon=True).start()
        server_home = os.path.join(self.root, "server")
        os.makedirs(server_home)
        with open(os.path.join(server_home, "config.json"), "w") as f:
            json.dump({"notify": {"channels": [{"name": "hook", "type": "webhook",
                                                "url": f"http://127.0.0.1:{hook.server_address[1]}/nodes"}]}},
                      f)
        try:
            self.start_server()
            agent_url = f"http://127.0.0.1:{free_port()}"
            agent_args = ["agent", "--home", os.path.join(self.root, "agent"), "--server", self.url,
                          "--listen", agent_url.removeprefix("http://"), "--node", "node-d"]
            self.agent = start_foreground(agent_args, self.env, self.logs, wait_url=agent_url)
            time.sleep(5)  # it reports
            self.agent.kill()
            self.agent.wait()
            killed = time.time()

            def down():
                return [a for t, a, b in received("node_down", "firing")
                        if a["labels"].get("node") == "node-d" and t > killed]
            alerts = wait_for(down, 90, "node_down at the webhook")
            self.assertEqual(alerts[0]["labels"]["severity"], "critical")
            self.agent = start_foreground(agent_args, self.env, self.logs, wait_url=agent_url)
            wait_for(lambda: [a for _, a, _ in received("node_down", "resolved")
                              if a["labels"].get("node") == "node-d"], 90, "node_down resolved")
        finally:
            hook.shutdown()


# The GPU scenarios below share one shape: `vigil up` on the fake NVML
# playing a scenario whose time 0 is (about) when `vigil up` returns, the
# presets' durations scaled by alerts.time_scale, and a webhook channel of
# their own at a path of the shared Receiver. Each asserts, per alert
# (alertname, severity, GPU), how many messages announced it as new and how
# many announced its resolution, exactly: so no other alert, no second
# announcement (a flap, a re-fire) and no missing resolution passes.
HOST_RULES = ("host_memory_near_full", "disk_near_full")


class GpuScenario(unittest.TestCase):
    SCENARIO = ""
    TIME_SCALE = 0.05
    PATH = None  # the webhook path, which tells this class's messages apart
    ALERTS = {}  # more of config.json's "alerts"

    @classmethod
    def setUpClass(cls):
        cls.home = tempfile.mkdtemp(prefix="vigil-scenario-e2e-")
        scenario = os.path.join(cls.home, "gpu.scenario")
        with open(scenario, "w") as f:
            f.write(cls.SCENARIO)
        cls.hook = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
        threading.Thread(target=cls.hook.serve_forever, daemon=True).start()
        hook_url = f"http://127.0.0.1:{cls.hook.server_address[1]}{cls.PATH}"
        with open(os.path.join(cls.home, "config.json"), "w") as f:
            json.dump({"alerts": dict({"time_scale": cls.TIME_SCALE}, **cls.ALERTS),
                       "notify": {"channels": [{"name": "hook", "type": "webhook", "url": hook_url}]}},
                      f)
        cls.env = dict(os.environ, VIGIL_NVML_LIBRARY=os.environ["VIGIL_FAKE_NVML"],
                       VIGIL_FAKE_NVML_SCENARIO=scenario, VIGIL_HOME=cls.home)
        cls.env.pop("VIGIL_URL", None)
        cls.env.pop("VIGIL_FAKE_NVML_SPEED", None)
        # The host's own memory and disks are no part of the scenario.
        cls.ignored = HOST_RULES if host_near_full() else ()
        up = subprocess.run([VIGIL, "up", "--listen", f"127.0.0.1:{free_port()}"],
                            capture_output=True, text=True, env=cls.env, timeout=60)
        cls.t0 = time.time()  # scenario time is at least the time since this
        if up.returncode != 0:
            cls.tearDownClass()
            raise AssertionError(up.stdout + up.stderr)

    @classmethod
    def tearDownClass(cls):
        subprocess.run([VIGIL, "down"], env=cls.env, capture_output=True, timeout=60)
        cls.hook.shutdown()
        cls.hook.server_close()
        shutil.rmtree(cls.home, ignore_errors=True)

    def foreign(self, labels):
        """Whether an alert is no part of the scenario: one on the host's own
        memory or disks when they are full, or one of a job. These scenarios
        run no job, but Vigil finds the jobs of every process on the host on
        its own, and other tests on a shared machine start and kill some."""
        return labels["alertname"] in self.ignored or "job" in labels

    def alerts(self, *args):
        p = subprocess.run([VIGIL, "alerts", "--json", *args], capture_output=True, text=True,
                           env=self.env, timeout=30)
        self.assertEqual(p.returncode, 0, p.stderr)
        return [a for a in json.loads(p.stdout) if not self.foreign(a["labels"])]

    def posts(self):
        """(time, payload) of every message this class's channel received, in order."""
        with Receiver.lock:
            return [(t, b) for t, b in Receiver.bodies if b.get("_path") == self.PATH]

    def notices(self, alertname=None, status=None, gpu=None):
        return [(t, a, b) for t, a, b in received(alertname, status) if b.get("_path") == self.PATH
                and (gpu is None or a["labels"].get("gpu") == gpu)]

    def tally(self):
        """{(alertname, severity, gpu): {"announced": n, "resolved": m}}: n
        messages had the alert firing where its group's previous message did
        not (a group's message lists all its firing alerts, so only the
        first one is news), m had it resolved."""
        out, previous = {}, {}
        for _, body in self.posts():
            firing = set()
            for a in body["alerts"]:
                labels = a["labels"]
                if self.foreign(labels):
                    continue
                entry = out.setdefault((labels["alertname"], labels["severity"], labels.get("gpu")),
                                       {"announced": 0, "resolved": 0})
                if a["status"] == "firing":
                    firing.add(a["fingerprint"])
                    entry["announced"] += a["fingerprint"] not in previous.get(body["groupKey"], ())
                else:
                    entry["resolved"] += 1
            previous[body["groupKey"]] = firing
        return out

    def check(self, expected):
        """The notices, once the last expected one is in and a few group
        intervals have passed: exactly `expected`, and no message that told
        nothing new (a repeat: repeat_interval is far longer than any
        scenario here)."""
        time.sleep(2)
        got = self.tally()
        self.assertEqual({k[0] for k in got}, {k[0] for k in expected}, "the alertnames notified")
        self.assertEqual(got, expected)
        previous = {}
        for _, body in self.posts():
            if all(self.foreign(a["labels"]) for a in body["alerts"]):
                continue
            firing = {a["fingerprint"] for a in body["alerts"] if a["status"] == "firing"}
            news = any(a["status"] == "resolved" for a in body["alerts"]) or \
                firing != previous.get(body["groupKey"])
            self.assertTrue(news, f"a message with nothing new: {body}")
            previous[body["groupKey"]] = firing


class OomRisk(GpuScenario):
    """GPU 0's memory (81559 MiB) climbs from 49 % at 0 s through 90 % at
    ~12 s to 98 % at 20 s, holds, and falls to 37 % at 27 s; GPU 1 stays at
    49 %. time_scale 0.02: gpu_memory_near_full's warning (> 90 % for 1 min)
    fires after 1.2 s, its critical (> 97 % for 30 s) after 0.6 s, and
    gpu_memory_growing's windows are 12 s (10 min) and 4 s (200 s): the
    memory rises in each third of them, with under 300 s to full (its
    critical, for 2 min: 2.4 s)."""
    TIME_SCALE = 0.02
    PATH = "/oom"
    SCENARIO = """
gpus 2
curve all gpu_util 0:95
curve all power_w 0:400
curve all temp 0:60
curve 1 mem_used_mib 0:40000
curve 0 mem_used_mib 0:40000 12:74000 20:80000 26:80000 27:30000
"""

    def test_memory_near_full_warning_then_critical_growing_then_resolved(self):
        growing = wait_for(lambda: self.notices("gpu_memory_growing", "firing", gpu="0"), 60,
                           "gpu_memory_growing at the webhook")
        self.assertEqual(growing[0][1]["labels"]["severity"], "critical")
        self.assertIn("out of memory in ~", growing[0][1]["annotations"]["summary"])
        warning = wait_for(lambda: [x for x in self.notices("gpu_memory_near_full", "firing", gpu="0")
                                    if x[1]["labels"]["severity"] == "warning"], 60,
                           "the near-full warning at the webhook")
        self.assertIn("(over 90%)", warning[0][1]["annotations"]["summary"])
        critical = wait_for(lambda: [x for x in self.notices("gpu_memory_near_full", "firing", gpu="0")
                                     if x[1]["labels"]["severity"] == "critical"], 60,
                            "the near-full critical at the webhook")
        self.assertIn("(over 97%)", critical[0][1]["annotations"]["summary"])
        self.assertLess(warning[0][0], critical[0][0])
        # The critical mutes the warning of the same GPU: listed, inhibited.
        muted = wait_for(lambda: [x for x in self.alerts() if x["rule"] == "gpu_memory_near_full"
                                  and x["severity"] == "warning" and x.get("inhibited")], 30,
                         "the warning inhibited by the critical in vigil alerts")
        self.assertEqual(muted[0]["labels"]["gpu"], "0")

        def resolved():
            return {(a["labels"]["alertname"], a["labels"]["severity"])
                    for _, a, _ in self.notices(status="resolved")} >= {
                        ("gpu_memory_near_full", "critical"), ("gpu_memory_growing", "critical")}
        wait_for(resolved, 60, "both resolutions at the webhook")
        # The warnings were muted by their criticals: growing's before it was
        # ever announced, near-full's after. What a muted alert had announced
        # is forgotten, its resolution too (Alertmanager's inhibition; see
        # src/alert/dispatch.h).
        self.check({
            ("gpu_memory_growing", "critical", "0"): {"announced": 1, "resolved": 1},
            ("gpu_memory_near_full", "warning", "0"): {"announced": 1, "resolved": 0},
            ("gpu_memory_near_full", "critical", "0"): {"announced": 1, "resolved": 1},
        })
        # The list knows the muted warning resolved too.
        wait_for(lambda: not self.alerts(), 20, "no alert pending or firing any more")
        history = {(x["rule"], x["severity"]) for x in self.alerts("--all") if x["state"] == "resolved"}
        self.assertIn(("gpu_memory_near_full", "warning"), history)


class XidThenGpuLost(GpuScenario):
    """GPU 0 has an uncorrectable ECC error at 3 s, reports Xid 79 (fallen
    off the bus) at 6 s and again at 9 s, and from 12 s answers every NVML
    call with GPU_IS_LOST, until a reset brings it back at 22 s. GPU 1 reports
    one Xid 13 (an application's fault) at 6 s and stays well. time_scale
    0.05: gpu_xid looks back 15 s (5 min) and keeps firing 45 s; the ECC
    alert looks back 3 min (1 h)."""
    TIME_SCALE = 0.05
    PATH = "/lost"
    SCENARIO = """
gpus 2
curve all gpu_util 0:95
curve all power_w 0:400
curve all temp 0:60
curve 0 ecc_dbe_volatile 0:0 3:1 step
xid 0 at 6 code 79
xid 0 at 9 code 79
xid 1 at 6 code 13
fail 0 all GPU_IS_LOST at 12 for 10
"""

    def test_1_xid_79_then_lost_mutes_the_gpus_metric_alerts(self):
        ecc = wait_for(lambda: self.notices("gpu_ecc_errors", "firing", gpu="0"), 40,
                       "gpu_ecc_errors at the webhook")
        self.assertEqual(ecc[0][1]["labels"]["severity"], "critical")
        xid = wait_for(lambda: self.notices("gpu_xid", "firing", gpu="0"), 40, "gpu_xid at the webhook")
        self.assertEqual(xid[0][1]["labels"]["severity"], "critical")
        self.assertEqual(xid[0][1]["labels"]["xid"], "79")
        self.assertIn("Xid 79", xid[0][1]["annotations"]["summary"])
        lost = wait_for(lambda: self.notices("gpu_lost", "firing", gpu="0"), 40, "gpu_lost at the webhook")
        self.assertEqual(lost[0][1]["labels"]["severity"], "critical")
        # While the GPU is lost its ECC alert still fires (its look-back holds
        # the error) but is muted; the Xid, which says why, is not.
        muted = wait_for(lambda: [x for x in self.alerts() if x["rule"] == "gpu_ecc_errors"
                                  and x["state"] == "firing" and x.get("inhibited")], 20,
                         "the lost GPU's ECC alert inhibited in vigil alerts")
        self.assertEqual(muted[0]["labels"]["gpu"], "0")
        listed = [x for x in self.alerts() if x["rule"] == "gpu_xid" and x["labels"]["gpu"] == "0"]
        self.assertEqual([(x["state"], x.get("inhibited")) for x in listed], [("firing", None)])

        back = wait_for(lambda: self.notices("gpu_lost", "resolved", gpu="0"), 40,
                        "gpu_lost resolved once the GPU answers again")
        # No message from the loss to its end told of the muted ECC alert.
        bodies = [b for _, b in self.posts()]
        start = next(i for i, b in enumerate(bodies) if b is lost[0][2])
        end = next(i for i, b in enumerate(bodies) if b is back[0][2])
        for b in bodies[start:end]:
            self.assertNotIn("gpu_ecc_errors", [a["labels"]["alertname"] for a in b["alerts"]])
        # Unmuted and still firing, the ECC alert is announced again: what a
        # muted alert had announced is forgotten (src/alert/dispatch.h).
        wait_for(lambda: self.tally().get(("gpu_ecc_errors", "critical", "0"), {}).get("announced") == 2,
                 30, "the ECC alert announced again once the GPU is back")
        expected = {
            ("gpu_ecc_errors", "critical", "0"): {"announced": 2, "resolved": 0},
            ("gpu_xid", "critical", "0"): {"announced": 1, "resolved": 0},
            ("gpu_lost", "critical", "0"): {"announced": 1, "resolved": 1},
        }
        # GPU 1's lone Xid 13 (test_2), a warning.
        expected[("gpu_xid", "warning", "1")] = {"announced": 1, "resolved": 0}
        self.check(expected)
        self.assertFalse([x for x in self.alerts() if x["labels"].get("gpu") == "1"
                          and x["rule"] != "gpu_xid"])

    # A GPU's first Xid of a code: its counter is born at 1, which
    # increase() alone never counted (the rule also counts a series born in
    # its window).
    def test_2_a_single_xid_is_notified(self):
        # Its 15 s look-back ends 21 s into the scenario: it has fired by then or never.
        wait_for(lambda: self.notices("gpu_xid", "firing", gpu="1"),
                 max(2, 25 - (time.time() - self.t0)), "GPU 1's Xid 13 at the webhook")


class IdleAllocatedGpu(GpuScenario):
    """Three H100s: GPU 0 held by a process with 1 GiB that computes nothing
    until 25 s, when it exits and a job uses GPUs 0 and 1; GPU 1 idle with a
    200 MiB process (under gpu_idle_allocated's 256 MiB: a bare context),
    GPU 2 busy throughout. time_scale 0.005: gpu_idle_allocated warns after
    3 s (10 min) and is critical after 18 s (1 h); idle_gpu_cost counts
    GPUs under 5 % over 9 s (30 min) and warns past one such GPU for 18 s
    (1 h), priced at 3.5 EUR per GPU-hour."""
    TIME_SCALE = 0.005
    PATH = "/idle"
    ALERTS = {"price_per_gpu_hour": 3.5, "currency": "EUR"}
    SCENARIO = """
gpus 3
curve all power_w 0:80
curve all temp 0:45
curve 0-1 gpu_util 0:0 25:95 step
curve 2 gpu_util 0:95
process 0 pid 3999001 mem_mib 1024 to 25
process 1 pid 3999002 mem_mib 200
process 2 pid 3999003 mem_mib 30000
"""

    def test_idle_allocated_gpu_and_its_cost(self):
        warning = wait_for(lambda: self.notices("gpu_idle_allocated", "firing", gpu="0"), 40,
                           "gpu_idle_allocated at the webhook")
        self.assertEqual(warning[0][1]["labels"]["severity"], "warning")
        self.assertIn("holds memory but computes nothing", warning[0][1]["annotations"]["summary"])
        cost = wait_for(lambda: self.notices("idle_gpu_cost", "firing"), 60, "idle_gpu_cost at the webhook")
        a = cost[0][1]
        self.assertEqual(a["labels"]["severity"], "warning")
        self.assertEqual(a["labels"]["modelName"], "NVIDIA H100 80GB HBM3")
        self.assertNotIn("gpu", a["labels"])
        # 2 GPUs x 3.5 EUR x 1 h scaled by 0.005 (the 18 s it was held).
        self.assertIn(f"2 × NVIDIA H100 80GB HBM3 idle on {a['labels']['node']} for 18s ≈ 0.035 EUR",
                      a["annotations"]["summary"])
        critical = wait_for(lambda: [x for x in self.notices("gpu_idle_allocated", "firing", gpu="0")
                                     if x[1]["labels"]["severity"] == "critical"], 60,
                            "the critical level of gpu_idle_allocated")
        self.assertIn("for 18s", critical[0][1]["annotations"]["summary"])

        def resolved():
            return {a["labels"]["alertname"] for _, a, _ in self.notices(status="resolved")} >= {
                "gpu_idle_allocated", "idle_gpu_cost"}
        wait_for(resolved, 60, "the resolutions once the GPUs compute")
        self.check({
            # Muted by the critical of the same GPU: forgotten, resolution too.
            ("gpu_idle_allocated", "warning", "0"): {"announced": 1, "resolved": 0},
            ("gpu_idle_allocated", "critical", "0"): {"announced": 1, "resolved": 1},
            ("idle_gpu_cost", "warning", None): {"announced": 1, "resolved": 1},
        })


class FlappingAtThreshold(GpuScenario):
    """Values that hover at a firing threshold, inside the hysteresis band:
    GPU 0's temperature (slowdown 90 C: warns at >= 85, clears under 82)
    87 C from 2 s, 83 C from 8 s, 87 C from 13 s, 83 C from 18 s, then 60 C
    from 23 s; GPU 1's memory likewise 92 % / 86 % (warns over 90 %, clears
    under 85 %), then 49 %. Each 87 C or 92 % stretch outlasts the warning's
    `for` (1 min at 0.05: 3 s), so an alert without hysteresis would resolve
    and fire again at each swing."""
    TIME_SCALE = 0.05
    PATH = "/flap"
    DROP_S = 23
    SCENARIO = """
gpus 2
gpu all temp_slowdown_c 90
curve all gpu_util 0:95
curve all power_w 0:500
curve 1 temp 0:60
curve 0 temp 0:70 2:87 8:83 13:87 18:83 23:60 step
curve 0 mem_used_mib 0:40000
curve 1 mem_used_mib 0:75000 8:70500 13:75000 18:70500 23:40000 step
"""

    def test_one_firing_notice_and_one_resolution(self):
        for rule, gpu in (("gpu_temperature_high", "0"), ("gpu_memory_near_full", "1")):
            got = wait_for(lambda: self.notices(rule, "firing", gpu=gpu), 40, f"{rule} at the webhook")
            self.assertEqual(got[0][1]["labels"]["severity"], "warning")
        for rule, gpu in (("gpu_temperature_high", "0"), ("gpu_memory_near_full", "1")):
            done = wait_for(lambda: self.notices(rule, "resolved", gpu=gpu), 60, f"{rule} resolved")
            # Not before the clear drop (scenario time runs at least as fast
            # as the test's clock, from a little before `vigil up` returned).
            self.assertGreater(done[0][0] - self.t0, self.DROP_S - 3, f"{rule} resolved while hovering")
        self.check({
            ("gpu_temperature_high", "warning", "0"): {"announced": 1, "resolved": 1},
            ("gpu_memory_near_full", "warning", "1"): {"announced": 1, "resolved": 1},
        })
        # One episode each in the history, no flap between.
        history = [(x["rule"], x["labels"].get("gpu")) for x in self.alerts("--all")]
        self.assertEqual(sorted(history), [("gpu_memory_near_full", "1"), ("gpu_temperature_high", "0")])


if __name__ == "__main__":
    unittest.main(verbosity=2)
