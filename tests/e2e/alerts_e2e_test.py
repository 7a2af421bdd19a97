#!/usr/bin/env python3
"""Alerts end to end, with no rule written: `vigil up` on a fake GPU that
overheats and then cools, a job that crashes and one that finishes, and a
webhook receiver on loopback. Each scenario must bring the right alert at the
webhook once (Alertmanager's payload, version 4), list it in `vigil alerts`,
and send its resolution; a restart while firing must not notify again. A
silence (`vigil silence add job=...`) keeps a crash from the webhook while
`vigil alerts` lists it, silenced; `vigil silence rm` ends it, and the crash,
still firing, is notified then.

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
from e2e_util import ServerAgentCase, free_port, start_foreground, wait_for  # noqa: E402

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
        self.assertEqual(listed[0]["diagnosis"], {})
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
                               "import time; print('loss 1.0'); time.sleep(1.5); print('done')"],
                              env=self.env, capture_output=True, text=True, timeout=60)
        self.assertEqual(done.returncode, 0)
        fin = wait_for(lambda: [x for x in received("job_finished", "firing")
                                if x[1]["labels"].get("job") == "tidy"], 30, "job_finished at the webhook")
        self.assertEqual(fin[0][1]["labels"]["severity"], "info")
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
            raised = [a for a in json.loads(p.stdout) if a["state"] != "pending"]
            if host_near_full():
                raised = [a for a in raised if a["rule"] not in ("host_memory_near_full", "disk_near_full")]
            self.assertEqual(raised, [], "a healthy node raised alerts")
            sent = [a["labels"] for _, a, body in received() if body.get("_quiet")]
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


def child_of(pid):
    """The pid of `pid`'s child (the command under `vigil run`)."""
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    st = f.read()
            except OSError:
                continue
            if int(st[st.rindex(")") + 2:].split()[1]) == pid:
                return int(d)
    return None


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


if __name__ == "__main__":
    unittest.main(verbosity=2)
