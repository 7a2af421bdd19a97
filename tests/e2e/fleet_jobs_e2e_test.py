#!/usr/bin/python3
"""End-to-end: a node's jobs, found by its `vigil agent`, listed by the central
`vigil server` with their verdicts, and still listed after the agent dies and
the server restarts.
Environment (set by CTest): VIGIL_BIN, VIGIL_FAKE_NVML, VIGIL_SOURCE_DIR.
"""
import json
import os
import subprocess
import sys
import unittest
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_util import ServerAgentCase, free_port, start_foreground, wait_for  # noqa: E402

VIGIL = os.environ["VIGIL_BIN"]

CRASH = r"""
import time
for step in range(1, 4):
    print({'loss': round(3.0 / step, 3), 'epoch': step}, flush=True)
    time.sleep(0.2)
raise RuntimeError("fleet run lost its way")
"""


class FleetJobsE2E(ServerAgentCase, unittest.TestCase):
    prefix = "vigil-fleet-jobs-"

    def jobs(self, **params):
        qs = urllib.parse.urlencode(params)
        with urllib.request.urlopen(f"{self.url}/api/v1/jobs?{qs}", timeout=10) as r:
            return {j["name"]: j for j in json.loads(r.read())["data"]["jobs"]}

    def test_the_server_lists_an_agents_jobs(self):
        self.start_server()
        agent_home = os.path.join(self.root, "agent")
        self.agent = start_foreground(
            ["agent", "--home", agent_home, "--server", self.url,
             "--listen", f"127.0.0.1:{free_port()}", "--node", "node-f"], self.env, self.logs)
        script = os.path.join(self.root, "crash.py")
        with open(script, "w") as f:
            f.write(CRASH)
        run_env = dict(self.env, VIGIL_HOME=agent_home)
        p = subprocess.run([VIGIL, "run", "--name", "fleet-crash", "--", "/usr/bin/python3",
                            script], env=run_env, capture_output=True, timeout=60)
        self.assertEqual(p.returncode, 1, p.stderr)

        # Crashed by its exit status at once; then, with the traceback the
        # agent ships in its logs, crashed by the traceback.
        def crashed():
            job = self.jobs(node="node-f").get("fleet-crash")
            return job if job and job["state"] == "crashed" and job["reason"] == "traceback" else None
        job = wait_for(crashed, 60, "the agent's job on the server, crashed by its traceback")
        self.assertEqual(job["node"], "node-f")
        self.assertEqual(job["exit_code"], 1)
        self.assertIn("fleet run lost its way", job["reason_text"])
        self.assertNotIn("fleet-crash", self.jobs(node="another-node"))

        # The agent dies; the server restarts: the node's jobs are still there.
        self.agent.kill()
        self.agent.wait()
        self.server.terminate()
        self.server.wait(timeout=60)
        self.start_server()
        job = wait_for(lambda: self.jobs().get("fleet-crash"), 30, "the job after a restart")
        self.assertEqual(job["state"], "crashed", job)
        self.assertEqual(job["node"], "node-f")


if __name__ == "__main__":
    unittest.main()
