#!/usr/bin/env python3
"""Durable delivery end to end (docs/notify.md "Delivery log"): `vigil up`
on a fake GPU that stays hot, its webhook receiver refusing every message
with HTTP 500. The notification is written to the delivery log and retried
(the receiver sees several attempts; /api/v1/notifications shows it pending
with the refusal, the channel failing, and `vigil status` says so). Then
`vigil up` is killed with SIGKILL, the receiver starts accepting, and `vigil
up` starts again on the same home: the pending entry is resumed and the
alert arrives exactly once, and is not sent again.

Loopback only; bounded waits. Environment (set by CTest): VIGIL_BIN,
VIGIL_FAKE_NVML.
"""
import http.server
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
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_util import free_port, start_foreground, wait_for  # noqa: E402

VIGIL = os.environ["VIGIL_BIN"]

# One GPU, hot for good: the critical temperature alert fires and stays.
SCENARIO = """
driver_version 550.54.15
cuda_version 12.4
gpus 1
gpu all model "NVIDIA H100 80GB HBM3"
gpu all temp_slowdown_c 90
curve all gpu_util 0:95
curve all power_w 0:500
curve 0 temp 0:95
"""


class Receiver(http.server.BaseHTTPRequestHandler):
    accept = False
    refused = 0
    accepted = []  # bodies
    lock = threading.Lock()

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
        with Receiver.lock:
            if Receiver.accept:
                Receiver.accepted.append(body)
            else:
                Receiver.refused += 1
            code = 200 if Receiver.accept else 500
        self.send_response(code)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


def hot_alerts():
    """Each accepted gpu_temperature_high alert (fingerprint, status)."""
    with Receiver.lock:
        return [(a["fingerprint"], a["status"]) for b in Receiver.accepted for a in b["alerts"]
                if a["labels"]["alertname"] == "gpu_temperature_high"]


class DeliveryE2E(unittest.TestCase):
    def setUp(self):
        self.home = tempfile.mkdtemp(prefix="vigil-delivery-e2e-")
        scenario = os.path.join(self.home, "hot.scenario")
        with open(scenario, "w") as f:
            f.write(SCENARIO)
        self.hook = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
        threading.Thread(target=self.hook.serve_forever, daemon=True).start()
        hook_url = f"http://127.0.0.1:{self.hook.server_address[1]}/hook"
        # time_scale 0.05: `for` 30 s -> 1.5 s, the log's backoff 1 s..5 min
        # -> 50 ms..15 s.
        with open(os.path.join(self.home, "config.json"), "w") as f:
            json.dump({"alerts": {"time_scale": 0.05},
                       "notify": {"channels": [{"name": "hook", "type": "webhook",
                                                "url": hook_url}]}}, f)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = dict(os.environ, VIGIL_NVML_LIBRARY=os.environ["VIGIL_FAKE_NVML"],
                        VIGIL_FAKE_NVML_SCENARIO=scenario, VIGIL_HOME=self.home)
        self.env.pop("VIGIL_URL", None)
        self.out = open(os.path.join(self.home, "vigil.out"), "w")
        self.vigil = None

    def tearDown(self):
        if self.vigil and self.vigil.poll() is None:
            self.vigil.kill()
            self.vigil.wait()
        self.out.close()
        self.hook.shutdown()
        shutil.rmtree(self.home, ignore_errors=True)

    def start(self):
        self.vigil = start_foreground(["up", "--listen", f"127.0.0.1:{self.port}"], self.env,
                                      self.out, wait_url=self.url)

    def notifications(self, query=""):
        with urllib.request.urlopen(self.url + "/api/v1/notifications" + query, timeout=5) as r:
            return json.loads(r.read())["data"]

    def test_refused_then_killed_then_delivered_once(self):
        self.start()
        # Refused and retried: several attempts of one pending entry.
        wait_for(lambda: Receiver.refused >= 3, 60, "three refused attempts")
        d = wait_for(lambda: (lambda d: d if d["counts"]["pending"] >= 1 and
                              d["entries"][0]["attempts"] >= 2 else None)(
                                  self.notifications("?state=pending")),
                     20, "a pending entry with attempts")
        entry = d["entries"][0]
        self.assertEqual(entry["receiver"], "hook")
        self.assertIn("500", entry["last_answer"])
        self.assertEqual(entry["alerts"][0]["rule"], "gpu_temperature_high")
        self.assertEqual(d["counts"]["delivered"], 0)
        channel = d["channels"][0]
        self.assertEqual((channel["name"], channel["failing"]), ("hook", True))
        status = subprocess.run([VIGIL, "status"], env=self.env, capture_output=True, text=True,
                                timeout=30)
        self.assertIn("channel hook FAILING", status.stdout)

        # SIGKILL: no shutdown path runs. The receiver then accepts.
        self.vigil.send_signal(signal.SIGKILL)
        self.vigil.wait()
        with Receiver.lock:
            Receiver.accept = True
        self.start()
        got = wait_for(hot_alerts, 60, "the alert after the restart")
        time.sleep(5)  # many evaluations, group intervals (1.5 s) and retries
        got = hot_alerts()
        self.assertEqual(len(got), 1, got)
        self.assertEqual(got[0][1], "firing")
        d = self.notifications()
        self.assertEqual(d["counts"]["pending"], 0, d)
        self.assertGreaterEqual(d["counts"]["delivered"], 1)
        self.assertFalse(d["channels"][0]["failing"])
        delivered = [e for e in d["entries"] if e["state"] == "delivered"]
        self.assertEqual(delivered[0]["id"], entry["id"], "the entry written before the kill")
        subprocess.run([VIGIL, "down"], env=self.env, capture_output=True, timeout=60)


if __name__ == "__main__":
    unittest.main(verbosity=2)
