#!/usr/bin/env python3
"""The email and SMS channels end to end, on loopback only.

Email: a real SMTP server (Debian's python3-aiosmtpd) with a certificate from
a CA made for the test (trusted through the channel's `ca_file`), once with
STARTTLS required and once with implicit TLS (port 465 style, `smtps://`),
both requiring AUTH over TLS. Each mail is parsed back with Python's email
package: the headers (Date, From, To, Subject decoded from RFC 2047,
Message-ID, MIME-Version, List-Unsubscribe, Auto-Submitted), the
multipart/alternative structure and both parts' text.

SMS: a fake gateway (http.server) that checks the templated URL, headers and
JSON body of each request. `vigil up` on a fake GPU that overheats and then
cools sends the alert to two numbers capped at one message a day each: the
firing alert reaches both, the resolution is held back by the cap (never
sent, logged as capped); and `vigil notify test` of a channel whose cost cap
is below one message's cost exits 1 with "capped".

Environment (set by CTest): VIGIL_BIN, VIGIL_FAKE_NVML.
"""
import email
import email.policy
import email.utils
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

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_util import HOT_GPU_SCENARIO, free_port, make_ca_and_cert, up_on_fake_gpu, wait_for  # noqa: E402

VIGIL = os.environ["VIGIL_BIN"]
USER, PASSWORD = "vigil", "s3cret-Passw0rd"


class Mailbox:
    """What the SMTP servers received: (port, envelope sender, recipients,
    parsed message)."""
    def __init__(self):
        self.lock = threading.Lock()
        self.mails = []

    async def handle_DATA(self, server, session, envelope):
        msg = email.message_from_bytes(envelope.content, policy=email.policy.default)
        with self.lock:
            tls = server.transport.get_extra_info("ssl_object") is not None
            self.mails.append((session.authenticated and tls, envelope.mail_from,
                               envelope.rcpt_tos, msg, envelope.content))
        return "250 OK"

    def find(self, text):
        with self.lock:
            return [m for m in self.mails if text in m[3]["Subject"] or text in body_of(m[3], "plain")]


def authenticator(server, session, envelope, mechanism, auth_data):
    ok = (isinstance(auth_data, LoginPassword) and auth_data.login == USER.encode()
          and auth_data.password == PASSWORD.encode())
    return AuthResult(success=ok, handled=False)


def body_of(msg, subtype):
    part = msg.get_body(preferencelist=(subtype,))
    return part.get_content() if part is not None else ""


class Gateway(http.server.BaseHTTPRequestHandler):
    got = []  # (path, query, headers, body)
    lock = threading.Lock()

    def handle_one(self):
        raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        url = urllib.parse.urlparse(self.path)
        with Gateway.lock:
            Gateway.got.append((url.path, urllib.parse.parse_qs(url.query), dict(self.headers),
                                json.loads(raw) if raw else None))
        data = b'{"status": "queued"}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_POST = handle_one

    def log_message(self, *args):
        pass


def read(path):
    with open(path, errors="replace") as f:
        return f.read()


def sms_requests(path):
    with Gateway.lock:
        return [g for g in Gateway.got if g[0] == path]


class EmailSmsE2E(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.home = tempfile.mkdtemp(prefix="vigil-mail-e2e-")
        cls.work = tempfile.mkdtemp(prefix="vigil-mail-work-")
        ca, cert, key = make_ca_and_cert(cls.work)
        tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        tls.load_cert_chain(cert, key)
        cls.mailbox = Mailbox()
        common = dict(hostname="127.0.0.1", authenticator=authenticator, auth_required=True,
                      ready_timeout=10)
        cls.starttls = Controller(cls.mailbox, port=free_port(), tls_context=tls,
                                  require_starttls=True, auth_require_tls=True, **common)
        # aiosmtpd's auth_require_tls knows only TLS begun by STARTTLS; on the
        # implicit-TLS server every byte is TLS already (checked per mail).
        cls.implicit = Controller(cls.mailbox, port=free_port(), ssl_context=tls,
                                  auth_require_tls=False, **common)
        cls.starttls.start()
        cls.implicit.start()
        cls.gateway = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Gateway)
        threading.Thread(target=cls.gateway.serve_forever, daemon=True).start()
        gw = f"http://127.0.0.1:{cls.gateway.server_address[1]}"
        sms_body = '{"to": "{{to}}", "text": "{{message}}", "level": "{{severity}}", "rule": "{{alertname}}"}'
        mail = {"type": "email", "username": USER, "password": PASSWORD, "ca_file": ca,
                "from": "Vigil 告警 <vigil@lab.example>", "to": ["alice@lab.example", "Bob <bob@lab.example>"]}
        channels = [
            dict(mail, name="mail", smtp=f"127.0.0.1:{cls.starttls.port}", starttls=True),
            dict(mail, name="mail-zh", smtp=f"smtps://127.0.0.1:{cls.implicit.port}", language="zh"),
            dict(mail, name="mail-badpw", smtp=f"127.0.0.1:{cls.starttls.port}", password="wrong-Pa55"),
            {"name": "sms", "type": "sms", "url": gw + "/sms?to={{to}}&sig=k%20ey", "body": sms_body,
             "headers": {"Authorization": "Bearer SMS-TOKEN"}, "to": ["+8613800000001", "+8613800000002"],
             "max_per_day": 1, "timezone": "Asia/Shanghai"},
            {"name": "sms-costly", "type": "sms", "url": gw + "/costly", "body": sms_body,
             "to": ["+8613800000003"], "cost_per_message": 0.05, "max_cost_per_day": 0.01},
        ]
        routes = [{"match": {"alertname": "gpu_temperature_high"}, "channels": ["mail", "sms"]}]
        with open(os.path.join(cls.home, "config.json"), "w") as f:
            json.dump({"alerts": {"time_scale": 0.05}, "notify": {"channels": channels, "routes": routes}}, f)
        cls.env, cls.port = up_on_fake_gpu(cls.home, cls.work, HOT_GPU_SCENARIO)

    @classmethod
    def tearDownClass(cls):
        subprocess.run([VIGIL, "down"], env=cls.env, capture_output=True, timeout=60)
        cls.starttls.stop()
        cls.implicit.stop()
        cls.gateway.shutdown()
        shutil.rmtree(cls.home, ignore_errors=True)
        shutil.rmtree(cls.work, ignore_errors=True)

    def notify_test(self, channel):
        return subprocess.run([VIGIL, "notify", "test", channel], capture_output=True, text=True,
                              env=self.env, timeout=60)

    def check_mail(self, mail, subject, lang):
        authenticated, mail_from, rcpt, msg, raw = mail
        self.assertTrue(authenticated, "AUTH over TLS before MAIL")
        self.assertEqual(mail_from, "vigil@lab.example")
        self.assertEqual(sorted(rcpt), ["alice@lab.example", "bob@lab.example"])
        self.assertEqual(msg["Subject"], subject)
        self.assertEqual(msg["From"].addresses[0].display_name, "Vigil 告警")
        self.assertEqual([a.addr_spec for a in msg["To"].addresses], ["alice@lab.example", "bob@lab.example"])
        sent = email.utils.parsedate_to_datetime(msg["Date"])
        self.assertLess(abs(time.time() - sent.timestamp()), 600)
        self.assertRegex(msg["Message-ID"], r"^<[0-9]+\.[0-9a-f]+@lab\.example>$")
        self.assertEqual(msg["MIME-Version"], "1.0")
        self.assertEqual(msg["List-Unsubscribe"], "<http://127.0.0.1:9300/#settings&tab=notifications>")
        self.assertEqual(msg["Auto-Submitted"], "auto-generated")
        self.assertEqual(msg.get_content_type(), "multipart/alternative")
        parts = list(msg.iter_parts())
        self.assertEqual([p.get_content_type() for p in parts], ["text/plain", "text/html"])
        self.assertEqual([p.get_content_charset() for p in parts], ["utf-8", "utf-8"])
        self.assertNotIn(b"X-Priority", raw)
        self.assertTrue(all(b < 0x80 for b in raw), "7-bit on the wire")
        text, html = body_of(msg, "plain"), body_of(msg, "html")
        summary = "测试通知" if lang == "zh" else "Test notification from Vigil"
        self.assertIn(summary, text)
        self.assertIn(summary, html)
        self.assertIn("http://127.0.0.1:9300/#settings&tab=notifications", text)
        self.assertIn('href="http://127.0.0.1:9300/#settings&amp;tab=notifications"', html)
        self.assertTrue(html.rstrip().endswith("</html>"))

    def test_email_over_starttls_and_implicit_tls(self):
        ok = self.notify_test("mail")
        self.assertEqual(ok.returncode, 0, ok.stderr)
        self.assertIn("mail (email): delivered", ok.stdout)
        self.check_mail(self.mailbox.find("Test notification")[-1], "[FIRING info] 1 alert on vigil", "en")
        zh = self.notify_test("mail-zh")
        self.assertEqual(zh.returncode, 0, zh.stderr)
        self.check_mail(self.mailbox.find("测试通知")[-1], "【告警 info】vigil 上 1 条告警", "zh")

    def test_a_wrong_password_is_refused_and_never_printed(self):
        bad = self.notify_test("mail-badpw")
        self.assertEqual(bad.returncode, 1, bad.stdout + bad.stderr)
        self.assertIn("not delivered", bad.stderr)
        self.assertIn("smtp://127.0.0.1:", bad.stderr)
        self.assertNotIn("wrong-Pa55", bad.stderr + bad.stdout)
        self.assertNotIn(PASSWORD, bad.stderr + bad.stdout)

    def test_sms_cost_cap_holds_back_and_says_so(self):
        capped = self.notify_test("sms-costly")
        self.assertEqual(capped.returncode, 1, capped.stdout + capped.stderr)
        self.assertIn("capped", capped.stderr)
        self.assertEqual(sms_requests("/costly"), [], "a capped message is never sent")

    def test_the_alert_reaches_mail_and_sms_and_the_cap_holds_back_the_next(self):
        wait_for(lambda: self.mailbox.find("95 °C"), 90, "the overheating GPU by mail")
        wait_for(lambda: len(sms_requests("/sms")) >= 2, 60, "the alert by SMS to both numbers")
        for path, query, headers, body in sms_requests("/sms"):
            self.assertEqual(query["sig"], ["k ey"])
            self.assertEqual(query["to"], [body["to"]], "{{to}} URL-encoded in the URL, JSON in the body")
            self.assertEqual(headers.get("Authorization"), "Bearer SMS-TOKEN")
            self.assertIn(body["level"], ("warning", "critical"))
            self.assertEqual(body["rule"], "gpu_temperature_high")
            self.assertIn("95 °C", body["text"])
            self.assertLessEqual(len(body["text"]), 300)
        self.assertEqual(sorted(b["to"] for *_, b in sms_requests("/sms")), ["+8613800000001", "+8613800000002"])
        # It cools: the resolution reaches the mailbox, and the SMS cap (one a
        # day) holds it back from both numbers, which the log says.
        wait_for(lambda: self.mailbox.find("RESOLVED"), 120, "the resolution by mail")
        log = os.path.join(self.home, "logs", "vigil.log")
        wait_for(lambda: "capped: held back from 2 of 2" in read(log), 60,
                 "the capped resolution in the log")
        self.assertEqual(len(sms_requests("/sms")), 2, "nothing past the cap was sent")
        self.assertNotIn(PASSWORD, read(log))


if __name__ == "__main__":
    unittest.main(verbosity=2)
