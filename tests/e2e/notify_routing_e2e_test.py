#!/usr/bin/env python3
"""Recipients and routes set up from the UI's API, end to end: `vigil up` on
a fake GPU that overheats 20 s after start, with two channels on e2e_util's
FakeBots over TLS (a WeCom group "room", a Slack DM "alice-dm") and one route
(critical -> room). Through the HTTP API, as the browser sends it: a team
whose lead is alice cannot lose her (409), a recipient naming an unknown
channel is refused with the parser's message and changes nothing, another
origin is refused. The GPU's critical alert reaches the room and not
alice-dm; then PUT /api/v1/notify/routes adds a route by severity and GPU
model to alice (language zh), and the alert, still firing, reaches alice-dm
in Chinese, once, without a restart, while the room is not told again. On
the way: config.json stays 0600 with its other sections as they were, the
route's order is kept, deletes that would leave a route or a recipient
without what it names are refused, and the inbox lists the recipients.

Environment (set by CTest): VIGIL_BIN, VIGIL_FAKE_NVML.
"""
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_util import (HOT_GPU_SCENARIO, bot_messages, bot_text, page_call,  # noqa: E402
                      start_fake_bots, up_on_fake_gpu, wait_for)

VIGIL = os.environ["VIGIL_BIN"]
# Cool for 20 s (time to set the recipients up), then at 95 °C: critical.
LATE_HOT_GPU_SCENARIO = HOT_GPU_SCENARIO.replace("curve 0 temp 0:95 25:95 26:60 step",
                                                 "curve 0 temp 0:60 20:60 21:95 step")
assert LATE_HOT_GPU_SCENARIO != HOT_GPU_SCENARIO
OTHER_SECTIONS = {"alerts": {"time_scale": 0.05, "rules": {"gpu_underutilized": {"enabled": False}}},
                  "logs": {"level_floor": "info"}}
ROOM_ROUTE = {"match": {"severity": "critical"}, "channels": ["room"]}
ALICE_ROUTE = {"match": {"severity": "critical", "modelName": "NVIDIA H100 80GB HBM3"},
               "recipients": ["alice"]}
CJK = re.compile("[\u4e00-\u9fff]")


def hot(vendor):
    """The messages of `vendor` about the hot GPU, checked by FakeBots."""
    return [b for b, p in bot_messages(vendor) if not p and "95" in bot_text(vendor, b)]


class NotifyRoutingE2E(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.home = tempfile.mkdtemp(prefix="vigil-routing-e2e-")
        cls.work = tempfile.mkdtemp(prefix="vigil-routing-work-")
        cls.bots, base, ca = start_fake_bots(cls.work)
        cls.config = os.path.join(cls.home, "config.json")
        channels = [{"name": "room", "type": "wecom", "url": base + "/wecom/room", "ca_file": ca},
                    {"name": "alice-dm", "type": "slack", "url": base + "/slack/alice", "ca_file": ca}]
        with open(cls.config, "w") as f:
            json.dump(dict(OTHER_SECTIONS, notify={"channels": channels, "routes": [ROOM_ROUTE]}), f)
        cls.env, port = up_on_fake_gpu(cls.home, cls.work, LATE_HOT_GPU_SCENARIO)
        cls.url = f"http://127.0.0.1:{port}"

    @classmethod
    def tearDownClass(cls):
        subprocess.run([VIGIL, "down"], env=cls.env, capture_output=True, timeout=60)
        cls.bots.shutdown()
        shutil.rmtree(cls.home, ignore_errors=True)
        shutil.rmtree(cls.work, ignore_errors=True)

    def call(self, method, path, body=None, origin=None):
        """(status, parsed JSON answer), sent as the UI's page sends it."""
        return page_call(self.url, method, path, body, origin)

    def ok(self, method, path, body=None):
        status, answer = self.call(method, path, body)
        self.assertEqual(status, 200, answer)
        return answer["data"]

    def saved(self):
        with open(self.config) as f:
            return json.load(f)

    def set_up_recipients(self):
        self.assertEqual(self.ok("GET", "/api/v1/notify/recipients")["recipients"], [])
        self.assertEqual(self.ok("GET", "/api/v1/notify/routes")["routes"], [ROOM_ROUTE])
        status, answer = self.call("PUT", "/api/v1/notify/recipients/alice", {"channels": ["alice-dm"]},
                                   origin="http://evil.example")
        self.assertEqual(status, 403, answer)
        with open(self.config, "rb") as f:
            before = f.read()
        status, answer = self.call("PUT", "/api/v1/notify/recipients/alice", {"channels": ["nope"]})
        self.assertEqual(status, 400, answer)
        self.assertIn('notify.recipients "alice": unknown channel "nope"', answer["error"])
        with open(self.config, "rb") as f:
            self.assertEqual(f.read(), before)

        alice = {"users": ["alice"], "channels": ["alice-dm"], "language": "zh"}
        self.ok("PUT", "/api/v1/notify/recipients/alice", alice)
        # A team that needs her: she cannot go while she leads it. (The team
        # goes before the GPU heats: as its lead she would hear of every
        # critical nobody owns.)
        self.ok("PUT", "/api/v1/notify/recipients/vision", {"kind": "team", "lead": "alice"})
        status, answer = self.call("DELETE", "/api/v1/notify/recipients/alice")
        self.assertEqual(status, 409, answer)
        self.assertIn('"vision" has "alice" as its lead', answer["error"])
        self.ok("DELETE", "/api/v1/notify/recipients/vision")
        self.assertEqual(self.ok("GET", "/api/v1/notify/recipients")["recipients"],
                         [dict(name="alice", **alice)])
        # The inbox's recipient list follows.
        inbox = self.ok("GET", "/api/v1/inbox")
        self.assertEqual(inbox["recipients"], [{"name": "alice", "kind": "person"}])

    def test_recipients_and_routes_set_up_from_the_ui_work_without_a_restart(self):
        self.set_up_recipients()
        # The GPU overheats: the room hears of it; alice-dm, which no route
        # names yet, does not.
        wait_for(lambda: hot("wecom"), 90, "the hot GPU's alert in the room")
        time.sleep(3)  # more than group_wait: alice-dm would have it by now
        self.assertEqual(hot("slack"), [])
        room = len(hot("wecom"))

        self.ok("PUT", "/api/v1/notify/routes", {"routes": [ROOM_ROUTE, ALICE_ROUTE]})
        self.assertEqual(self.ok("GET", "/api/v1/notify/routes")["routes"], [ROOM_ROUTE, ALICE_ROUTE])
        dm = wait_for(lambda: hot("slack"), 30, "the alert, still firing, at alice-dm through the new route")
        self.assertRegex(bot_text("slack", dm[0]), CJK, "alice's language (zh) reached her channel")
        time.sleep(2)
        self.assertEqual(len(hot("slack")), 1, "once")
        self.assertEqual(len(hot("wecom")), room, "the room, already told, is not told again")

        # What a route or recipient names stays.
        status, answer = self.call("DELETE", "/api/v1/notify/recipients/alice")
        self.assertEqual(status, 409, answer)
        self.assertIn('notify.routes[1] sends alerts to "alice"', answer["error"])
        status, answer = self.call("DELETE", "/api/v1/notify/channels/alice-dm")
        self.assertEqual(status, 409, answer)
        self.assertIn('notify.recipients "alice" receives alerts on "alice-dm"', answer["error"])
        status, answer = self.call("PUT", "/api/v1/notify/routes", {"routes": [{"channels": ["nope"]}]})
        self.assertEqual(status, 400, answer)
        self.assertIn('notify.routes[0]: unknown channel "nope"', answer["error"])

        # config.json: private, the other sections as they were, in order.
        self.assertEqual(stat.S_IMODE(os.stat(self.config).st_mode), 0o600)
        saved = self.saved()
        self.assertEqual({k: v for k, v in saved.items() if k != "notify"}, OTHER_SECTIONS)
        self.assertEqual(list(saved["notify"]), ["channels", "routes", "recipients"])
        self.assertEqual(saved["notify"]["routes"], [ROOM_ROUTE, ALICE_ROUTE])
        self.assertEqual(saved["notify"]["recipients"][0]["name"], "alice")


if __name__ == "__main__":
    unittest.main(verbosity=2)
