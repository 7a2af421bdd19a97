#!/usr/bin/python3
"""End-to-end: a `vigil agent`'s metrics survive its server's outage.

A `vigil server` and a `vigil agent` (fake NVML, 8 GPUs) run as separate
processes. The server is killed for 20 s and started again. Meanwhile the
agent keeps collecting into its outbox, which `vigil status` and the agent's
/metrics show; when the server is back the outbox drains, and the server holds
the GPU series for the outage seconds, each second once (the exact, simulated
10-minute version is tests/integration/outbox_outage_test.cc).
Environment (set by CTest): VIGIL_BIN, VIGIL_FAKE_NVML, VIGIL_SOURCE_DIR.
"""
import json
import os
import subprocess
import sys
import time
import unittest
import urllib.error
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_util import ServerAgentCase, free_port, start_foreground, wait_for  # noqa: E402

VIGIL = os.environ["VIGIL_BIN"]
OUTAGE_S = 20


def get_json(url):
    with urllib.request.urlopen(url, timeout=10) as r:
        return json.loads(r.read())


class AgentOutageE2E(ServerAgentCase, unittest.TestCase):
    prefix = "vigil-agent-outage-"

    def setUp(self):
        super().setUp()
        self.agent_home = os.path.join(self.root, "agent")
        self.agent_url = f"http://127.0.0.1:{free_port()}"

    def outbox(self):
        status = get_json(self.agent_url + "/api/v1/status")
        self.assertEqual(status["role"], "agent")
        return {o["name"]: o for o in status["outboxes"]}["metrics"]

    def samples(self, start, end):
        """The raw samples of one GPU series the server holds in [start, end]."""
        query = 'DCGM_FI_DEV_GPU_UTIL{node="node-o",gpu="0"}[%ds]' % (int(end - start) + 1)
        qs = urllib.parse.urlencode({"query": query, "time": f"{end:.3f}"})
        r = get_json(f"{self.url}/api/v1/query?{qs}")
        result = r["data"]["result"]
        return [float(t) for t, _ in result[0]["values"]] if result else []

    def test_metrics_queued_during_an_outage_arrive_once(self):
        self.start_server()
        self.agent = start_foreground(
            ["agent", "--home", self.agent_home, "--server", self.url, "--listen",
             self.agent_url.removeprefix("http://"), "--node", "node-o"], self.env, self.logs,
            wait_url=self.agent_url)
        wait_for(lambda: self.samples(time.time() - 30, time.time()), 30,
                 "the agent's GPU metrics on the server")

        self.server.kill()
        self.server.wait()
        down_at = time.time()
        wait_for(lambda: self.outbox()["queued_frames"] >= 5, 30, "frames queued in the outbox")
        time.sleep(max(0.0, OUTAGE_S - (time.time() - down_at)))
        queued = self.outbox()
        self.assertGreaterEqual(queued["queued_frames"], OUTAGE_S - 5, queued)
        self.assertEqual(queued["dropped_frames"], 0, queued)
        self.assertGreater(queued["send_failures"], 0, queued)
        status = subprocess.run([VIGIL, "status", "--home", self.agent_home], env=self.env,
                                capture_output=True, text=True, timeout=30)
        self.assertEqual(status.returncode, 0, status.stderr)
        self.assertIn("agent is running", status.stdout)
        self.assertIn("Outbox:    metrics", status.stdout)
        self.assertIn("the server is not taking them", status.stdout)
        with urllib.request.urlopen(self.agent_url + "/metrics", timeout=10) as r:
            text = r.read().decode()
        self.assertIn('vigil_outbox_queued_frames{outbox="metrics"}', text)
        # Jobs are listed by the server; the agent says which.
        with self.assertRaises(urllib.error.HTTPError) as jobs:
            urllib.request.urlopen(self.agent_url + "/api/v1/jobs", timeout=10)
        self.assertEqual(jobs.exception.code, 404)
        self.assertIn(self.url, jobs.exception.read().decode())

        self.start_server()
        up_at = time.time()
        wait_for(lambda: self.outbox()["queued_frames"] == 0, 60, "the outbox drained")
        got = self.samples(down_at - 5, up_at + 5)
        self.assertEqual(len(got), len(set(got)), "a sample stored twice")
        self.assertEqual(got, sorted(got))
        # Passes land on whole seconds; a pass that overran on a loaded machine
        # skips a tick, so allow a few missing, never a hole the outage made.
        outage = [t for t in got if down_at + 1 <= t <= up_at - 1]
        self.assertGreaterEqual(len(outage), int(up_at - down_at) - 4, got)
        gaps = [b - a for a, b in zip(got, got[1:])]
        self.assertLessEqual(max(gaps), 3.0, got)


if __name__ == "__main__":
    unittest.main()
