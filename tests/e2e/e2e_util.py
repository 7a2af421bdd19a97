"""Helpers shared by the end-to-end tests (imported from their folder)."""
import base64
import hashlib
import hmac
import http.server
import json
import os
import socket
import ssl
import struct
import threading
import time
import urllib.error
import urllib.parse
import urllib.request


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]



def child_of(pid):
    """The pid of `pid`'s child (the command under `vigil run`), or None."""
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    st = f.read()
            except OSError:
                continue
            if int(st[st.rindex(")") + 2:].split()[1]) == pid:
                return int(d)
    return None


def private_instance(home):
    """Port, URL and environment for a `vigil up` of the test's own, in `home`,
    with the fake NVML (VIGIL_FAKE_NVML, VIGIL_SOURCE_DIR) and no VIGIL_URL
    leaking in from the caller."""
    port = free_port()
    scenario = os.path.join(os.environ["VIGIL_SOURCE_DIR"],
                            "tests/fake_nvml/scenarios/h100x8.scenario")
    env = dict(os.environ, VIGIL_NVML_LIBRARY=os.environ["VIGIL_FAKE_NVML"],
               VIGIL_FAKE_NVML_SCENARIO=scenario, VIGIL_HOME=home)
    env.pop("VIGIL_URL", None)
    return port, f"http://127.0.0.1:{port}", env

def start_foreground(args, env, out, wait_url=None):
    """`vigil ARGS --foreground` with its output to `out`; when wait_url is
    given, once its /healthz answers."""
    import subprocess
    import urllib.request
    p = subprocess.Popen([os.environ["VIGIL_BIN"]] + args + ["--foreground"], env=env,
                         stdout=out, stderr=out)
    if wait_url:
        wait_for(lambda: urllib.request.urlopen(wait_url + "/healthz", timeout=2).status == 200,
                 what=f"vigil {args[0]} at {wait_url}")
    return p


def page_call(base, method, path, body=None, origin=None):
    """(status, parsed JSON answer) of `method path` on the server at
    `base`, sent as the UI's page sends it: JSON, the page's Origin (or
    `origin`, a page of another site)."""
    req = urllib.request.Request(base + path, method=method,
                                 data=None if body is None else json.dumps(body).encode())
    req.add_header("Content-Type", "application/json")
    req.add_header("Origin", origin or base)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def wait_for(fn, timeout=60, what="condition"):
    """fn() until it returns something true; OSError counts as not yet (a
    server that is restarting)."""
    deadline = time.time() + timeout
    last = None
    while time.time() < deadline:
        try:
            last = fn()
        except OSError as e:
            last = e
        if last and not isinstance(last, Exception):
            return last
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout}s waiting for {what} (last: {last!r})")


# TensorBoard event files, written from the format's spec (TFRecord framing,
# masked CRC-32C computed here bit by bit, independently of Vigil's code).
def crc32c(data):
    """CRC-32C (Castagnoli), bit by bit: an implementation independent of Vigil's."""
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def masked(data):
    c = crc32c(data)
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def record(data):
    length = struct.pack("<Q", len(data))
    return length + struct.pack("<I", masked(length)) + data + struct.pack("<I", masked(data))


def pb_key(field, wire_type):
    return bytes([field << 3 | wire_type])


def pb_bytes(field, data):
    n, out = len(data), b""
    while n >= 0x80:
        out += bytes([n & 0x7F | 0x80])
        n >>= 7
    return pb_key(field, 2) + out + bytes([n]) + data


def scalar_event(step, tag, value, wall_time=None):
    """tensorflow.Event{wall_time, step (< 128), summary{value{tag, simple_value}}}."""
    value_msg = pb_bytes(1, tag.encode()) + pb_key(2, 5) + struct.pack("<f", value)
    wall = 1764460800.0 + step if wall_time is None else wall_time
    return (pb_key(1, 1) + struct.pack("<d", wall) + pb_key(2, 0) + bytes([step])
            + pb_bytes(5, pb_bytes(1, value_msg)))


def file_version_event(wall_time=1764460800.0):
    """The first Event of every file: wall_time and file_version "brain.Event:2"."""
    return pb_key(1, 1) + struct.pack("<d", wall_time) + pb_bytes(3, b"brain.Event:2")


class ServerAgentCase:
    """A mixin for tests of a `vigil server` and a `vigil agent` as separate
    processes in a temporary root: setUp makes the root, the server's port,
    URL and environment; tearDown kills whatever still runs and removes the
    root. Use with unittest.TestCase: class T(ServerAgentCase, unittest.TestCase)."""
    prefix = "vigil-"

    def setUp(self):
        import tempfile
        self.root = tempfile.mkdtemp(prefix=self.prefix)
        self.port, self.url, self.env = private_instance(os.path.join(self.root, "unused"))
        self.logs = open(os.path.join(self.root, "vigil.out"), "w")
        self.server = self.agent = None

    def tearDown(self):
        import shutil
        for p in (self.agent, self.server):
            if p and p.poll() is None:
                p.kill()
                p.wait()
        self.logs.close()
        shutil.rmtree(self.root, ignore_errors=True)

    def start_server(self):
        self.server = start_foreground(
            ["server", "--home", os.path.join(self.root, "server"),
             "--listen", f"127.0.0.1:{self.port}"], self.env, self.logs, wait_url=self.url)


def make_ca_and_cert(d):
    """A CA and a server certificate for 127.0.0.1 signed by it (openssl CLI)."""
    import subprocess
    def run(*args):
        subprocess.run(["openssl", *args], check=True, capture_output=True, cwd=d)
    run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=vigil test CA",
        "-keyout", "ca.key", "-out", "ca.pem")
    with open(os.path.join(d, "ext.cnf"), "w") as f:
        f.write("subjectAltName=IP:127.0.0.1\n")
    run("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1", "-keyout", "srv.key",
        "-out", "srv.csr")
    run("x509", "-req", "-in", "srv.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
        "-days", "2", "-extfile", "ext.cnf", "-out", "srv.pem")
    return os.path.join(d, "ca.pem"), os.path.join(d, "srv.pem"), os.path.join(d, "srv.key")


def up_on_fake_gpu(home, work, scenario):
    """`vigil up` in the background on a fake GPU driven by `scenario` (the
    text of a fake NVML scenario), with data and config.json under `home`;
    returns its environment (for `vigil notify`, `vigil down`) and its port."""
    import subprocess
    path = os.path.join(work, "gpu.scenario")
    with open(path, "w") as f:
        f.write(scenario)
    port = free_port()
    env = dict(os.environ, VIGIL_NVML_LIBRARY=os.environ["VIGIL_FAKE_NVML"],
               VIGIL_FAKE_NVML_SCENARIO=path, VIGIL_HOME=home)
    env.pop("VIGIL_URL", None)
    up = subprocess.run([os.environ["VIGIL_BIN"], "up", "--listen", f"127.0.0.1:{port}"],
                        capture_output=True, text=True, env=env, timeout=60)
    assert up.returncode == 0, up.stdout + up.stderr
    return env, port


# One GPU at 95 °C for 25 s (critical: it slows down at 90 °C), then at 60 °C:
# an alert that fires, then resolves (the notification tests).
HOT_GPU_SCENARIO = """
driver_version 550.54.15
cuda_version 12.4
gpus 1
gpu all model "NVIDIA H100 80GB HBM3"
gpu all temp_slowdown_c 90
curve all gpu_util 0:95
curve all power_w 0:500
curve 0 temp 0:95 25:95 26:60 step
"""


class FakeBots(http.server.BaseHTTPRequestHandler):
    """The IM bots' webhooks (Feishu, DingTalk, WeCom, Slack at /feishu,
    /dingtalk, /wecom, /slack), each message checked as its vendor would: the
    signature recomputed with Python's hmac (Feishu: HMAC-SHA256 keyed by
    timestamp + "\\n" + secret over an empty message; DingTalk: HMAC-SHA256
    of timestamp + "\\n" + secret keyed by the secret, in the query), a fresh
    timestamp, the size limits, the required fields; a message that fails a
    check is answered with the vendor's error (Feishu 19021 "sign match
    fail"). Set feishu_secret and ding_secret first; start_fake_bots()."""
    feishu_secret = ""
    ding_secret = ""
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
        vendor = url.path.strip("/").split("/")[0]  # /feishu/<hook token>
        body = json.loads(raw)
        problems = []
        now = time.time()
        if vendor == "feishu":
            ts = body.get("timestamp", "")
            want = base64.b64encode(hmac.new(f"{ts}\n{FakeBots.feishu_secret}".encode(), b"",
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
            want = base64.b64encode(hmac.new(FakeBots.ding_secret.encode(), f"{ts}\n{FakeBots.ding_secret}".encode(),
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
        with FakeBots.lock:
            FakeBots.got.append((vendor, body, problems))
        if vendor == "slack":
            return self.answer("ok" if not problems else "invalid_payload")
        if vendor == "feishu":
            return self.answer({"code": 19021 if problems else 0, "msg": "; ".join(problems) or "success"})
        return self.answer({"errcode": 310000 if problems else 0, "errmsg": "; ".join(problems) or "ok"})

    def log_message(self, *args):
        pass


def bot_messages(vendor):
    with FakeBots.lock:
        return [(b, p) for v, b, p in FakeBots.got if v == vendor]


def bot_text(vendor, body):
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


def start_fake_bots(work):
    """FakeBots over HTTPS on loopback, with a certificate of a CA made in
    `work`: returns the server, its base URL and the CA's file (a channel's
    `ca_file`)."""
    ca, cert, key = make_ca_and_cert(work)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), FakeBots)
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(cert, key)
    server.socket = tls.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"https://127.0.0.1:{server.server_address[1]}", ca
