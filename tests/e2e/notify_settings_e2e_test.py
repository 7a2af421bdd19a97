#!/usr/bin/env python3
"""Setting up a channel from the UI's API, end to end: `vigil up` with no
channel, on a fake GPU that overheats 20 s after start. Through the HTTP API
(as the browser sends it: JSON, this server's Origin) the test adds a Feishu
bot with a signing secret that points at e2e_util's FakeBots over TLS; sends
the test notification (delivered, signed rightly: FakeBots recomputes the
signature with Python's hmac); then the GPU's alert arrives through the new
channel, without a restart. On the way: GET never shows the secret nor the
hook's path, config.json is 0600 with its other sections as they were, a bad
body is refused with the parser's message and changes nothing, an edit that
leaves the secret out keeps it, a wrong secret is the receiver's refusal,
`vigil notify test` reads the same file, and a page of another origin is
refused.

Environment (set by CTest): VIGIL_BIN, VIGIL_FAKE_NVML.
"""
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import unittest
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_util import (HOT_GPU_SCENARIO, FakeBots, bot_messages, bot_text,  # noqa: E402
                      page_call, start_fake_bots, up_on_fake_gpu, wait_for)

VIGIL = os.environ["VIGIL_BIN"]
SECRET = "settings-e2e-secret"
# Cool for 20 s (time to set the channel up), then at 95 °C: critical (it
# slows down at 90 °C) for the rest of the test.
LATE_HOT_GPU_SCENARIO = HOT_GPU_SCENARIO.replace("curve 0 temp 0:95 25:95 26:60 step",
                                                 "curve 0 temp 0:60 20:60 21:95 step")
assert LATE_HOT_GPU_SCENARIO != HOT_GPU_SCENARIO
OTHER_SECTIONS = {"alerts": {"time_scale": 0.05, "rules": {"gpu_underutilized": {"enabled": False}}},
                  "logs": {"level_floor": "info"}}


class NotifySettingsE2E(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.home = tempfile.mkdtemp(prefix="vigil-settings-e2e-")
        cls.work = tempfile.mkdtemp(prefix="vigil-settings-work-")
        FakeBots.feishu_secret = SECRET
        cls.bots, cls.base, cls.ca = start_fake_bots(cls.work)
        cls.config = os.path.join(cls.home, "config.json")
        with open(cls.config, "w") as f:
            json.dump(OTHER_SECTIONS, f)
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

    def channel(self, extra=None):
        c = {"type": "feishu", "url": self.base + "/feishu/hook-TOKENPATH", "secret": SECRET,
             "ca_file": self.ca}
        c.update(extra or {})
        return c

    def test_a_channel_set_up_from_the_ui_works_without_a_restart(self):
        status, answer = self.call("GET", "/api/v1/notify/channels")
        self.assertEqual(status, 200, answer)
        self.assertEqual(answer["data"]["channels"], [])
        self.assertEqual(answer["data"]["path"], self.config)

        # Another origin's page may not add one.
        status, answer = self.call("PUT", "/api/v1/notify/channels/lark", self.channel(),
                                   origin="http://evil.example")
        self.assertEqual(status, 403, answer)
        # A bad body: the parser's message, the file untouched.
        with open(self.config, "rb") as f:
            before = f.read()
        status, answer = self.call("PUT", "/api/v1/notify/channels/lark",
                                   self.channel({"url": "ftp://x"}))
        self.assertEqual(status, 400, answer)
        self.assertIn("notify.channels[0].url must be the bot's https:// webhook URL", answer["error"])
        with open(self.config, "rb") as f:
            self.assertEqual(f.read(), before)

        status, answer = self.call("PUT", "/api/v1/notify/channels/lark", self.channel())
        self.assertEqual(status, 200, answer)

        # The view: the secret set, never shown; the hook's path cut.
        with urllib.request.urlopen(self.url + "/api/v1/notify/channels", timeout=10) as r:
            raw = r.read().decode()
        self.assertNotIn(SECRET, raw)
        self.assertNotIn("TOKENPATH", raw)
        lark = json.loads(raw)["data"]["channels"][0]
        self.assertEqual(lark["name"], "lark")
        self.assertEqual(lark["type"], "feishu")
        self.assertTrue(lark["secret_set"])
        self.assertEqual(lark["url"], self.base + "/...")
        # config.json: private, the other sections as they were.
        self.assertEqual(stat.S_IMODE(os.stat(self.config).st_mode), 0o600)
        with open(self.config) as f:
            saved = json.load(f)
        self.assertEqual({k: v for k, v in saved.items() if k != "notify"}, OTHER_SECTIONS)
        self.assertEqual(saved["notify"]["channels"][0]["secret"], SECRET)

        # The test notification: delivered, signed rightly.
        status, answer = self.call("POST", "/api/v1/notify/test", {"channel": "lark"})
        self.assertEqual(status, 200, answer)
        self.assertTrue(answer["data"]["delivered"], answer)
        tests = [(b, p) for b, p in bot_messages("feishu") if "测试通知" in bot_text("feishu", b)]
        self.assertEqual(len(tests), 1)
        self.assertEqual(tests[0][1], [], "FakeBots found the message wrongly signed")
        # An unsaved variant with a wrong secret: the receiver's refusal.
        status, answer = self.call("POST", "/api/v1/notify/test",
                                   {"channel_config": self.channel({"name": "lark2", "secret": "wrong"})})
        self.assertEqual(status, 200, answer)
        self.assertFalse(answer["data"]["delivered"])
        self.assertIn("sign match fail", answer["data"]["answer"])
        self.assertNotIn("TOKENPATH", answer["data"]["answer"])

        # The GPU overheats: its alert comes through the new channel.
        alert = wait_for(lambda: [b for b, p in bot_messages("feishu")
                                  if not p and "95" in bot_text("feishu", b)], 90,
                         "the overheating GPU's alert through the channel added from the UI")
        self.assertEqual(alert[0]["card"]["header"]["template"], "red")

        # An edit that leaves the secret out (the URL as GET shows it) keeps
        # it: the English test message is still signed rightly.
        status, answer = self.call("PUT", "/api/v1/notify/channels/lark",
                                   {"type": "feishu", "url": lark["url"], "language": "en",
                                    "ca_file": self.ca})
        self.assertEqual(status, 200, answer)
        status, answer = self.call("POST", "/api/v1/notify/test", {"channel": "lark"})
        self.assertTrue(answer["data"]["delivered"], answer)
        english = [p for b, p in bot_messages("feishu")
                   if "Test notification from Vigil" in bot_text("feishu", b)]
        self.assertEqual(english, [[]])
        # The CLI reads the same file.
        cli = subprocess.run([VIGIL, "notify", "test", "lark"], capture_output=True, text=True,
                             env=self.env, timeout=60)
        self.assertEqual(cli.returncode, 0, cli.stderr)
        self.assertIn("lark (feishu): delivered", cli.stdout)

        status, answer = self.call("DELETE", "/api/v1/notify/channels/lark")
        self.assertEqual(status, 200, answer)
        status, answer = self.call("GET", "/api/v1/notify/channels")
        self.assertEqual(answer["data"]["channels"], [])
        status, answer = self.call("DELETE", "/api/v1/notify/channels/lark")
        self.assertEqual(status, 404, answer)


if __name__ == "__main__":
    unittest.main(verbosity=2)
