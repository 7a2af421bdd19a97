#!/usr/bin/env python3
"""Optional actions end to end (docs/notify.md "Actions"): `vigil up` on a
fake GPU with two actions on job_finished, each a small script that writes a
marker file, with a 5 s confirmation window:
- "mark" (jobs act-*): a finished run's action runs once, after the window,
  with the run's VIGIL_* environment; its notification (here: the inbox's
  copy of the alert) says when it will run and links to #actions&id=N;
- a second run's action cancelled over the API never runs, and cancelling
  it again is refused (409);
- "rehearse" (jobs dry-*, dry_run): logged as a dry run, the script never
  runs.

Environment (set by CTest): VIGIL_BIN, VIGIL_FAKE_NVML.
"""
import getpass
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_util import up_on_fake_gpu, wait_for  # noqa: E402

VIGIL = os.environ["VIGIL_BIN"]
ME = getpass.getuser()

CALM_GPU = """
driver_version 550.54.15
cuda_version 12.4
gpus 1
gpu all model "NVIDIA H100 80GB HBM3"
curve all gpu_util 0:60
curve all power_w 0:300
curve all temp 0:50
"""


def script(path, marker):
    with open(path, "w") as f:
        f.write("#!/bin/sh\n"
                f'echo "$VIGIL_ACTION $VIGIL_ALERT $VIGIL_JOB $VIGIL_RUN $VIGIL_OWNER" >> {marker}\n'
                "echo stopped the instance\n")
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)


class ActionsE2E(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.home = tempfile.mkdtemp(prefix="vigil-actions-e2e-")
        cls.work = tempfile.mkdtemp(prefix="vigil-actions-work-")
        cls.marker = os.path.join(cls.work, "ran")
        cls.dry_marker = os.path.join(cls.work, "dry-ran")
        script(os.path.join(cls.work, "stop.sh"), cls.marker)
        script(os.path.join(cls.work, "dry.sh"), cls.dry_marker)
        actions = [
            {"name": "mark", "on": "job_finished", "match": {"job": "act-*"},
             "command": [os.path.join(cls.work, "stop.sh")], "dry_run": False,
             "confirm_window": "5s", "timeout": "30s"},
            {"name": "rehearse", "on": "job_finished", "match": {"job": "dry-*"},
             "command": [os.path.join(cls.work, "dry.sh"), "--id", "i-123"],
             "confirm_window": "5s"},
        ]
        with open(os.path.join(cls.home, "config.json"), "w") as f:
            json.dump({"alerts": {"time_scale": 0.05}, "notify": {"actions": actions}}, f)
        cls.env, cls.port = up_on_fake_gpu(cls.home, cls.work, CALM_GPU)
        cls.base = f"http://127.0.0.1:{cls.port}"

    @classmethod
    def tearDownClass(cls):
        subprocess.run([VIGIL, "down"], env=cls.env, capture_output=True, timeout=60)
        shutil.rmtree(cls.home, ignore_errors=True)
        shutil.rmtree(cls.work, ignore_errors=True)

    def get(self, path):
        with urllib.request.urlopen(self.base + path, timeout=10) as r:
            return json.load(r)["data"]

    def cancel(self, entry_id, by, content_type="application/json"):
        req = urllib.request.Request(f"{self.base}/api/v1/actions/{entry_id}/cancel", method="POST",
                                     data=json.dumps({"by": by}).encode(),
                                     headers={"Content-Type": content_type})
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                return r.status, json.load(r)
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read() or b"{}")

    def run_job(self, name):
        done = subprocess.run([VIGIL, "run", "--name", name, "--", "/usr/bin/python3", "-c",
                               "import time; print('loss 1.0', flush=True); time.sleep(1.5)"],
                              env=self.env, capture_output=True, text=True, timeout=60)
        self.assertEqual(done.returncode, 0, done.stderr)

    def entry_of(self, job, state=None):
        def find():
            for e in self.get("/api/v1/actions")["actions"]:
                if e["alert"]["labels"].get("job") == job and state in (None, e["state"]):
                    return e
            return None
        return wait_for(find, 60, f"the action of {job}" + (f" {state}" if state else ""))

    def test_runs_once_cancelled_never_dry_run_only_logged(self):
        data = self.get("/api/v1/actions")
        self.assertEqual([a["name"] for a in data["configured"]], ["mark", "rehearse"])
        self.assertEqual(data["actions"], [])

        # A finished run: scheduled, announced, then run once after 5 s.
        self.run_job("act-1")
        e = self.entry_of("act-1")
        self.assertEqual(e["state"], "scheduled")
        self.assertEqual(e["action"], "mark")
        self.assertEqual(e["run_at_ms"] - e["created_ms"], 5000)
        self.assertEqual(e["alert"]["rule"], "job_finished")
        link = f"/#actions&id={e['id']}"

        def announced():
            for i in self.get("/api/v1/inbox")["items"]:
                a = i["alert"]
                if a["rule"] == "job_finished" and a["labels"].get("job") == "act-1":
                    return a if link in a.get("description", "") else None
            return None
        alert = wait_for(announced, 30, "the finished run's alert with the action's line")
        self.assertIn("Action mark will run at ", alert["description"])
        self.assertIn("UTC unless cancelled: http://", alert["description"])
        self.assertIn("操作 mark 将于 ", alert["description_zh"])

        # Meanwhile a second run, whose action is cancelled, and a dry run.
        self.run_job("act-2")
        second = self.entry_of("act-2", "scheduled")
        status, body = self.cancel(second["id"], "bob")
        self.assertEqual(status, 200, body)
        self.assertEqual(body["data"]["state"], "cancelled")
        self.assertEqual(body["data"]["cancelled_by"], "bob")
        self.run_job("dry-1")

        ran = self.entry_of("act-1", "ran")
        self.assertEqual(ran["exit_code"], 0)
        self.assertEqual(ran["output"], "stopped the instance\n")
        with open(self.marker) as f:
            lines = f.read().splitlines()
        self.assertEqual(len(lines), 1, lines)
        self.assertEqual(lines[0], f"mark job_finished act-1 {ran['alert']['labels']['run']} {ME}")

        dry = self.entry_of("dry-1", "dry_run")
        self.assertTrue(dry["dry_run"])
        self.assertEqual(dry["command"][1:], ["--id", "i-123"])
        self.assertTrue(dry["output"].startswith("dry run: would have run "), dry["output"])

        # Well past every window: the cancelled one never ran, nothing ran twice.
        time.sleep(max(0, second["run_at_ms"] / 1000 + 3 - time.time()))
        self.assertEqual(self.entry_of("act-2")["state"], "cancelled")
        with open(self.marker) as f:
            self.assertEqual(len(f.read().splitlines()), 1)
        self.assertFalse(os.path.exists(self.dry_marker), "a dry run runs nothing")

        # Once done, no more cancelling; a page of another origin never may.
        status, body = self.cancel(ran["id"], "alice")
        self.assertEqual(status, 409, body)
        self.assertIn("it is ran", body["error"])
        self.assertEqual(self.cancel(second["id"], "carol")[0], 409)
        self.assertEqual(self.cancel(999999, "alice")[0], 404)
        self.assertEqual(self.cancel(dry["id"], "alice", content_type="text/plain")[0], 415)
        one = self.get(f"/api/v1/actions?id={ran['id']}")["actions"]
        self.assertEqual([x["id"] for x in one], [ran["id"]])


if __name__ == "__main__":
    unittest.main(verbosity=2)
