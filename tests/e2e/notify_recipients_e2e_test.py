#!/usr/bin/env python3
"""Recipients and the inbox end to end: `vigil up` on a fake GPU that
overheats (an alert nobody owns), with a lab's recipients in config.json:
alice (the Unix user running this test) with a Slack channel and an SMS
channel whose cost cap holds everything back, bob with his Slack channel,
and the team "vision" (lead bob) with its group's Slack channel. alice runs
a job that crashes and one that finishes (`vigil run`).

Each channel must get exactly what its recipients are owed:
- alice's crash (critical): alice's Slack, the team's, bob's (the lead);
  alice's SMS is capped, so it lands in her inbox as held back;
- alice's finished run (info, the run summary): alice's Slack only;
- the hot GPU nobody owns (critical): the team's and bob's, not alice's.
The inbox holds one item per firing, per recipient's view, marked read per
recipient.

Environment (set by CTest): VIGIL_BIN, VIGIL_FAKE_NVML.
"""
import getpass
import http.server
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import unittest
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_util import HOT_GPU_SCENARIO, up_on_fake_gpu, wait_for  # noqa: E402

VIGIL = os.environ["VIGIL_BIN"]
ME = getpass.getuser()


class Receiver(http.server.BaseHTTPRequestHandler):
    got = []  # (path, body)
    lock = threading.Lock()

    def do_POST(self):
        raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        with Receiver.lock:
            Receiver.got.append((self.path.split("?")[0], raw.decode("utf-8", "replace")))
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")  # Slack's answer; the SMS gateway takes anything 2xx

    def log_message(self, *args):
        pass


def texts(path):
    with Receiver.lock:
        return [body for p, body in Receiver.got if p == path]


class RecipientsE2E(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.home = tempfile.mkdtemp(prefix="vigil-rcpt-e2e-")
        cls.work = tempfile.mkdtemp(prefix="vigil-rcpt-work-")
        cls.receiver = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
        threading.Thread(target=cls.receiver.serve_forever, daemon=True).start()
        base = f"http://127.0.0.1:{cls.receiver.server_address[1]}"
        slack = lambda name: {"name": name, "type": "slack", "url": f"{base}/{name}"}  # noqa: E731
        channels = [
            slack("alice-slack"), slack("bob-slack"), slack("vision-slack"),
            {"name": "alice-sms", "type": "sms", "url": base + "/alice-sms", "body": '{"text": "{{message}}"}',
             "to": ["+8613800000009"], "cost_per_message": 0.05, "max_cost_per_day": 0.01},
        ]
        recipients = [
            {"name": "alice", "users": [ME], "team": "vision", "channels": ["alice-slack", "alice-sms"]},
            {"name": "bob", "users": ["bob-is-not-here"], "team": "vision", "channels": ["bob-slack"]},
            {"name": "vision", "kind": "team", "lead": "bob", "channels": ["vision-slack"]},
        ]
        with open(os.path.join(cls.home, "config.json"), "w") as f:
            json.dump({"alerts": {"time_scale": 0.05},
                       "notify": {"channels": channels, "recipients": recipients}}, f)
        cls.env, cls.port = up_on_fake_gpu(cls.home, cls.work, HOT_GPU_SCENARIO)
        cls.base = f"http://127.0.0.1:{cls.port}"

    @classmethod
    def tearDownClass(cls):
        subprocess.run([VIGIL, "down"], env=cls.env, capture_output=True, timeout=60)
        cls.receiver.shutdown()
        shutil.rmtree(cls.home, ignore_errors=True)
        shutil.rmtree(cls.work, ignore_errors=True)

    def inbox(self, **params):
        q = "&".join(f"{k}={v}" for k, v in params.items())
        with urllib.request.urlopen(f"{self.base}/api/v1/inbox?{q}", timeout=10) as r:
            return json.load(r)["data"]

    def run_job(self, name, code):
        return subprocess.run([VIGIL, "run", "--name", name, "--", "/usr/bin/python3", "-c", code],
                              env=self.env, capture_output=True, text=True, timeout=60)

    def test_each_recipient_gets_their_own_and_the_inbox_holds_it(self):
        # The traceback is printed a few seconds before the exit, as a
        # launcher reports its worker's, so its lines (read, then held a
        # second by the multiline stage) are stored before the end is known:
        # group_wait, 1.5 s at this time_scale, would not wait for later ones.
        crash = self.run_job("crashy", "import sys, time, traceback\nprint('step 1 loss 2.5', flush=True)\n"
                             "try:\n raise RuntimeError('CUDA error: an illegal memory access was encountered')\n"
                             "except RuntimeError:\n traceback.print_exc(); sys.stderr.flush(); time.sleep(3)\n"
                             "sys.exit(1)")
        self.assertNotEqual(crash.returncode, 0)
        done = self.run_job("tidy", "import time; print('loss 1.0', flush=True); time.sleep(2); print('done')")
        self.assertEqual(done.returncode, 0, done.stderr)

        has = lambda path, word: [t for t in texts(path) if word in t]  # noqa: E731
        wait_for(lambda: has("/alice-slack", "crashy"), 60, "alice's crash at her Slack")
        wait_for(lambda: has("/alice-slack", "tidy"), 60, "alice's finished run at her Slack")
        wait_for(lambda: has("/vision-slack", "°C") and has("/bob-slack", "°C"), 90,
                 "the hot GPU nobody owns at the team's and the lead's Slack")
        wait_for(lambda: has("/vision-slack", "crashy") and has("/bob-slack", "crashy"), 30,
                 "alice's crash at her team's Slack and at its lead's")

        # The crash's message quotes its log: the exception, as code.
        exception = "RuntimeError: CUDA error: an illegal memory access was encountered"
        crash_msg = has("/alice-slack", "crashy")[0]
        self.assertIn("Log:", crash_msg)
        self.assertIn("`" + exception + "`", crash_msg)

        # Nothing anyone is not owed.
        self.assertEqual(has("/alice-slack", "°C"), [], "the hot GPU is not alice's")
        self.assertEqual(has("/vision-slack", "tidy") + has("/bob-slack", "tidy"), [],
                         "a finished run's summary is its owner's alone")
        self.assertEqual(texts("/alice-sms"), [], "the cost cap holds every SMS back")

        # The inbox: alice's view has her crash, her finished run and the
        # held-back SMS, not the GPU; the team's has the crash and the GPU.
        def kinds(view):
            return sorted((i["kind"], i["alert"]["rule"]) for i in view["items"])
        alice = wait_for(lambda: (lambda v: v if ("held_back", "job_crashed") in kinds(v) else None)(
            self.inbox(recipient="alice")), 30, "the held-back SMS in alice's inbox")
        self.assertIn(("firing", "job_crashed"), kinds(alice))
        self.assertIn(("firing", "job_finished"), kinds(alice))
        self.assertNotIn("gpu_temperature_high", [r for _, r in kinds(alice)])
        held = [i for i in alice["items"] if i["kind"] == "held_back"][0]
        self.assertTrue(held["note"].startswith("alice-sms: "), held["note"])
        self.assertIn("cap", held["note"])
        crashed = [i for i in alice["items"] if i["kind"] == "firing" and i["alert"]["rule"] == "job_crashed"][0]
        self.assertEqual(crashed["alert"]["owner"], ME)
        self.assertIn(exception, crashed["alert"]["log_excerpt"])
        self.assertIn("Traceback (most recent call last):", crashed["alert"]["log_excerpt"])
        self.assertEqual(crashed["recipients"], ["alice", "vision", "bob"])
        vision = self.inbox(recipient="vision")
        self.assertIn(("firing", "gpu_temperature_high"), kinds(vision))
        self.assertIn(("firing", "job_crashed"), kinds(vision))
        self.assertNotIn(("firing", "job_finished"), kinds(vision))
        self.assertEqual([r["name"] for r in vision["recipients"]], ["alice", "bob", "vision"])

        # Read marks are alice's own.
        req = urllib.request.Request(f"{self.base}/api/v1/inbox/read", method="POST",
                                     data=json.dumps({"recipient": "alice"}).encode(),
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as r:
            self.assertGreaterEqual(json.load(r)["data"]["changed"], 3)
        self.assertEqual(self.inbox(recipient="alice", unread=1)["items"], [])
        self.assertGreater(self.inbox(recipient="vision")["counts"]["unread"], 0)


if __name__ == "__main__":
    unittest.main(verbosity=2)
