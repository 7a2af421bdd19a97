#!/usr/bin/env python3
"""The IM bot channels end to end, over real TLS: `vigil up` on a fake GPU
that overheats and then cools, with a Feishu, a DingTalk, a WeCom and a Slack
channel pointing at one HTTPS receiver on loopback (a certificate from a CA
made for the test, trusted through each channel's `ca_file`): e2e_util's
FakeBots, which checks each message as its vendor would: the signature recomputed here with
Python's hmac (Feishu: HMAC-SHA256 keyed by timestamp + "\\n" + secret over
an empty message; DingTalk: HMAC-SHA256 of timestamp + "\\n" + secret keyed
by the secret, in the query), a fresh timestamp, the size limits, the
required fields; a message that fails a check is answered with the vendor's
error (Feishu 19021 "sign match fail"), so Vigil counts it as not delivered.

Each channel must receive the critical temperature alert once, in its
language (zh for the Chinese vendors, en for Slack), then its resolution.

Environment (set by CTest): VIGIL_BIN, VIGIL_FAKE_NVML.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_util import (HOT_GPU_SCENARIO, FakeBots, bot_messages, bot_text,  # noqa: E402
                      start_fake_bots, up_on_fake_gpu, wait_for)

VIGIL = os.environ["VIGIL_BIN"]
FEISHU_SECRET = "feishu-test-secret"
DING_SECRET = "SECdingtalk-test"


class ImBotsE2E(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.home = tempfile.mkdtemp(prefix="vigil-im-e2e-")
        cls.work = tempfile.mkdtemp(prefix="vigil-im-work-")
        FakeBots.feishu_secret, FakeBots.ding_secret = FEISHU_SECRET, DING_SECRET
        cls.server, base, ca = start_fake_bots(cls.work)
        channels = [
            {"name": "lark", "type": "feishu", "url": base + "/feishu", "secret": FEISHU_SECRET, "ca_file": ca},
            {"name": "ding", "type": "dingtalk", "url": base + "/dingtalk?access_token=tok",
             "secret": DING_SECRET, "at_mobiles": ["13800000000"], "ca_file": ca},
            {"name": "wx", "type": "wecom", "url": base + "/wecom?key=k", "ca_file": ca},
            {"name": "sl", "type": "slack", "url": base + "/slack", "ca_file": ca},
            # A wrong secret: the receiver refuses as Feishu does; the others are unaffected.
            {"name": "badlark", "type": "feishu", "url": base + "/feishu", "secret": "wrong", "ca_file": ca},
        ]
        with open(os.path.join(cls.home, "config.json"), "w") as f:
            json.dump({"alerts": {"time_scale": 0.05}, "notify": {"channels": channels}}, f)
        cls.env, cls.port = up_on_fake_gpu(cls.home, cls.work, HOT_GPU_SCENARIO)

    @classmethod
    def tearDownClass(cls):
        subprocess.run([VIGIL, "down"], env=cls.env, capture_output=True, timeout=60)
        cls.server.shutdown()
        shutil.rmtree(cls.home, ignore_errors=True)
        shutil.rmtree(cls.work, ignore_errors=True)

    def test_each_bot_gets_the_alert_then_its_resolution(self):
        vendors = ("feishu", "dingtalk", "wecom", "slack")
        for v in vendors:
            wait_for(lambda v=v: [b for b, _ in bot_messages(v) if "95" in bot_text(v, b)], 60,
                     f"the overheating GPU at the {v} bot")
        for v in ("dingtalk", "wecom", "slack"):
            for body, problems in bot_messages(v):
                self.assertEqual(problems, [], f"{v} refused a message: {problems}")
        good = [b for b, p in bot_messages("feishu") if not p]
        self.assertTrue(good, "the rightly signed Feishu channel's messages pass")
        # Languages: the Chinese vendors' bots speak Chinese by default.
        self.assertIn("温度 95 °C", bot_text("feishu", good[0]))
        self.assertIn("温度 95 °C", bot_text("dingtalk", bot_messages("dingtalk")[0][0]))
        self.assertIn("温度 95 °C", bot_text("wecom", bot_messages("wecom")[0][0]))
        self.assertIn("at 95 °C", bot_text("slack", bot_messages("slack")[0][0]))
        # The critical alert mentions DingTalk's configured mobile.
        ding = [b for b, _ in bot_messages("dingtalk") if "critical" in b["markdown"]["title"]]
        self.assertTrue(ding)
        self.assertEqual(ding[0]["at"]["atMobiles"], ["13800000000"])
        self.assertEqual(good[0]["card"]["header"]["template"], "red")
        # Then it cools: each bot hears of the resolution.
        for v in vendors:
            wait_for(lambda v=v: [b for b, _ in bot_messages(v)
                                  if "RESOLVED" in bot_text(v, b) or "已恢复" in bot_text(v, b)],
                     90, f"the resolution at the {v} bot")
        # Once per change: no channel got more than firing (+ critical) and the resolution.
        for v in ("dingtalk", "wecom", "slack"):
            self.assertLessEqual(len(bot_messages(v)), 4, [bot_text(v, b) for b, _ in bot_messages(v)])

    def test_notify_test_says_whether_a_channel_works(self):
        ok = subprocess.run([VIGIL, "notify", "test", "ding"], capture_output=True, text=True,
                            env=self.env, timeout=60)
        self.assertEqual(ok.returncode, 0, ok.stderr)
        self.assertIn("ding (dingtalk): delivered", ok.stdout)
        self.assertTrue([b for b, _ in bot_messages("dingtalk") if "测试通知" in bot_text("dingtalk", b)])
        bad = subprocess.run([VIGIL, "notify", "test", "badlark"], capture_output=True, text=True,
                             env=self.env, timeout=60)
        self.assertEqual(bad.returncode, 1)
        self.assertIn("not delivered", bad.stderr)
        self.assertIn("sign match fail", bad.stderr)
        self.assertNotIn("wrong", bad.stderr, "the secret is never printed")
        none = subprocess.run([VIGIL, "notify", "test", "nope"], capture_output=True, text=True,
                              env=self.env, timeout=60)
        self.assertEqual(none.returncode, 2)


if __name__ == "__main__":
    unittest.main(verbosity=2)
