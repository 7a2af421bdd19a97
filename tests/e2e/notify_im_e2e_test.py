#!/usr/bin/env python3
"""The IM bot channels end to end, over real TLS: `vigil up` on a fake GPU
that overheats and then cools, with a Feishu, a DingTalk, a WeCom and a Slack
channel pointing at one HTTPS receiver on loopback (a certificate from a CA
made for the test, trusted through each channel's `ca_file`). The receiver
checks each message as its vendor would: the signature recomputed here with
Python's hmac (Feishu: HMAC-SHA256 keyed by timestamp + "\\n" + secret over
an empty message; DingTalk: HMAC-SHA256 of timestamp + "\\n" + secret keyed
by the secret, in the query), a fresh timestamp, the size limits, the
required fields; a message that fails a check is answered with the vendor's
error (Feishu 19021 "sign match fail"), so Vigil counts it as not delivered.

Each channel must receive the critical temperature alert once, in its
language (zh for the Chinese vendors, en for Slack), then its resolution.

Environment (set by CTest): VIGIL_BIN, VIGIL_FAKE_NVML.
"""
import base64
import hashlib
import hmac
import http.server
import json
import os
import shutil
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_util import HOT_GPU_SCENARIO, make_ca_and_cert, up_on_fake_gpu, wait_for  # noqa: E402

VIGIL = os.environ["VIGIL_BIN"]
FEISHU_SECRET = "feishu-test-secret"
DING_SECRET = "SECdingtalk-test"


class Bots(http.server.BaseHTTPRequestHandler):
    got = []  # (vendor, parsed body, problems)
    lock = threading.Lock()

    def answer(self, body):
        data = json.dumps(body).encode() if not isinstance(body, str) else body.encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        url = urllib.parse.urlparse(self.path)
        vendor = url.path.strip("/")
        body = json.loads(raw)
        problems = []
        now = time.time()
        if vendor == "feishu":
            ts = body.get("timestamp", "")
            want = base64.b64encode(hmac.new(f"{ts}\n{FEISHU_SECRET}".encode(), b"",
                                             hashlib.sha256).digest()).decode()
            if body.get("sign") != want:
                problems.append("feishu: sign match fail")
            if abs(now - int(ts or 0)) > 3600:
                problems.append("feishu: stale timestamp")
            if len(raw) > 20 * 1024:
                problems.append("feishu: body over 20 KB")
            if body.get("msg_type") != "interactive" or "header" not in body.get("card", {}):
                problems.append("feishu: not an interactive card")
        elif vendor == "dingtalk":
            q = urllib.parse.parse_qs(url.query)
            ts = q.get("timestamp", [""])[0]
            want = base64.b64encode(hmac.new(DING_SECRET.encode(), f"{ts}\n{DING_SECRET}".encode(),
                                             hashlib.sha256).digest()).decode()
            if q.get("sign", [""])[0] != want or q.get("access_token") != ["tok"]:
                problems.append("dingtalk: sign not match")
            if abs(now * 1000 - int(ts or 0)) > 3600 * 1000:
                problems.append("dingtalk: stale timestamp")
            if body.get("msgtype") != "markdown" or not body["markdown"].get("title"):
                problems.append("dingtalk: not markdown")
        elif vendor == "wecom":
            content = body.get("markdown", {}).get("content", "")
            if body.get("msgtype") != "markdown" or len(content.encode()) > 4096:
                problems.append("wecom: content over 4096 bytes or not markdown")
        elif vendor == "slack":
            if not body.get("text") or not isinstance(body.get("blocks"), list) or len(body["blocks"]) > 50:
                problems.append("slack: no text fallback or bad blocks")
        with Bots.lock:
            Bots.got.append((vendor, body, problems))
        if vendor == "slack":
            return self.answer("ok" if not problems else "invalid_payload")
        if vendor == "feishu":
            return self.answer({"code": 19021 if problems else 0, "msg": "; ".join(problems) or "success"})
        return self.answer({"errcode": 310000 if problems else 0, "errmsg": "; ".join(problems) or "ok"})

    def log_message(self, *args):
        pass


def messages(vendor):
    with Bots.lock:
        return [(b, p) for v, b, p in Bots.got if v == vendor]


def text_of(vendor, body):
    """The message's visible text."""
    if vendor == "feishu":
        card = body["card"]
        return card["header"]["title"]["content"] + "\n" + "\n".join(
            e["text"]["content"] for e in card["elements"] if e.get("tag") == "div")
    if vendor == "dingtalk":
        return body["markdown"]["text"]
    if vendor == "wecom":
        return body["markdown"]["content"]
    return body["text"]


class ImBotsE2E(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.home = tempfile.mkdtemp(prefix="vigil-im-e2e-")
        cls.work = tempfile.mkdtemp(prefix="vigil-im-work-")
        ca, cert, key = make_ca_and_cert(cls.work)
        cls.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Bots)
        tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        tls.load_cert_chain(cert, key)
        cls.server.socket = tls.wrap_socket(cls.server.socket, server_side=True)
        threading.Thread(target=cls.server.serve_forever, daemon=True).start()
        base = f"https://127.0.0.1:{cls.server.server_address[1]}"
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
            wait_for(lambda v=v: [b for b, _ in messages(v) if "95" in text_of(v, b)], 60,
                     f"the overheating GPU at the {v} bot")
        for v in ("dingtalk", "wecom", "slack"):
            for body, problems in messages(v):
                self.assertEqual(problems, [], f"{v} refused a message: {problems}")
        good = [b for b, p in messages("feishu") if not p]
        self.assertTrue(good, "the rightly signed Feishu channel's messages pass")
        # Languages: the Chinese vendors' bots speak Chinese by default.
        self.assertIn("温度 95 °C", text_of("feishu", good[0]))
        self.assertIn("温度 95 °C", text_of("dingtalk", messages("dingtalk")[0][0]))
        self.assertIn("温度 95 °C", text_of("wecom", messages("wecom")[0][0]))
        self.assertIn("at 95 °C", text_of("slack", messages("slack")[0][0]))
        # The critical alert mentions DingTalk's configured mobile.
        ding = [b for b, _ in messages("dingtalk") if "critical" in b["markdown"]["title"]]
        self.assertTrue(ding)
        self.assertEqual(ding[0]["at"]["atMobiles"], ["13800000000"])
        self.assertEqual(good[0]["card"]["header"]["template"], "red")
        # Then it cools: each bot hears of the resolution.
        for v in vendors:
            wait_for(lambda v=v: [b for b, _ in messages(v)
                                  if "RESOLVED" in text_of(v, b) or "已恢复" in text_of(v, b)],
                     90, f"the resolution at the {v} bot")
        # Once per change: no channel got more than firing (+ critical) and the resolution.
        for v in ("dingtalk", "wecom", "slack"):
            self.assertLessEqual(len(messages(v)), 4, [text_of(v, b) for b, _ in messages(v)])

    def test_notify_test_says_whether_a_channel_works(self):
        ok = subprocess.run([VIGIL, "notify", "test", "ding"], capture_output=True, text=True,
                            env=self.env, timeout=60)
        self.assertEqual(ok.returncode, 0, ok.stderr)
        self.assertIn("ding (dingtalk): delivered", ok.stdout)
        self.assertTrue([b for b, _ in messages("dingtalk") if "测试通知" in text_of("dingtalk", b)])
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
