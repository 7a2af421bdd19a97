#!/usr/bin/python3
"""Notification latency to each local receiver, per channel family (issue 15).

`vigil up` on a fake GPU (tests/fake_nvml), with four channels, each pointing
at a real receiver on loopback:

  * webhook: an Alertmanager webhook receiver (http.server, plain HTTP: the
    webhook channel takes http:// URLs);
  * feishu:  e2e_util's FakeBots over HTTPS (a CA made here, trusted through
    the channel's `ca_file`), the signature checked as Feishu does;
  * email:   a real SMTP server (python3-aiosmtpd) with STARTTLS and AUTH
    required, as tests/e2e/notify_email_sms_e2e_test.py;
  * sms:     a fake SMS gateway (the same HTTPS server, path /sms), no daily cap.

Then SAMPLES `vigil run` jobs crash, one after the other (each waits until
every receiver has the previous one's message, then a random 0-1 s pause, so
the crashes fall at random phases of the engine's and the tracker's ticks).
Each job has its own name, so each crash is its own notification group
(group_by node + job). Per crash and per channel:

  (a) firing -> receipt: the job_crashed alert's `fired_at_ms` (its record,
      the webhook's `startsAt`) to the receiver's clock when the message has
      arrived (its HTTP body read; SMTP: the end of DATA);
  (b) exit -> receipt: the job's last statement before it raises (a Python
      traceback, exit 1) to the same receipt.

Also, per crash, where the time goes: the exit as `vigil run` recorded it,
the alert's fired time, each delivery-log entry's creation (the end of
group_wait) and the receipts; printed as medians.

Usage:
  /usr/bin/python3 bench/notify_latency.py --vigil build/src/cli/vigil \
      --fake-nvml build/tests/fake_nvml/libnvidia-ml-fake.so [--samples 80] [--json OUT]

Loopback only; a temporary home and work directory, removed at the end;
`vigil down` (then SIGKILL of the pid it ran as, if it still runs).
"""
import argparse
import datetime
import email
import email.policy
import json
import os
import random
import shutil
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import http.server
import io
import logging

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "e2e"))
from e2e_util import FakeBots, bot_text, make_ca_and_cert  # noqa: E402

from aiosmtpd.controller import Controller  # noqa: E402  (python3-aiosmtpd)
from aiosmtpd.smtp import AuthResult, LoginPassword  # noqa: E402

logging.getLogger("mail.log").setLevel(logging.ERROR)  # aiosmtpd 1.4's login_data warning per AUTH

FEISHU_SECRET = "bench-feishu-secret"
SMTP_USER, SMTP_PASSWORD = "vigil", "bench-Passw0rd"
CHANNELS = ("webhook", "feishu", "email", "sms")

# One calm GPU: busy, cool, nothing of its own to alert on, so the crashes'
# messages are the only traffic (anything else is counted and reported).
SCENARIO = """
driver_version 550.54.15
cuda_version 12.4
gpus 1
gpu all model "NVIDIA H100 80GB HBM3"
curve all gpu_util 0:95
curve all power_w 0:500
curve all temp 0:60
"""

# The job: a loss line, a short run, then an uncaught error (exit 1). The
# time of its last statement goes to a file beside it.
CRASHER = """import sys, time
print("step 1: loss 2.0", flush=True)
time.sleep(float(sys.argv[1]))
with open(sys.argv[2], "w") as f:
    f.write(repr(time.time()))
raise RuntimeError("CUDA error: an illegal memory access was encountered")
"""


# A job that keeps training beside the crashes (--neighbours).
NEIGHBOUR = """import time
step = 0
while True:
    step += 1
    print(f"step {step}: loss {2.0 / step ** 0.1:.4f}", flush=True)
    time.sleep(0.5)
"""


class JobsProbe:
    """Polls /api/v1/jobs: when the server first listed each job as crashed
    (its snapshot ingested), to tell the tracker's and shipper's share from
    the engine's. Costs Vigil a request every 50 ms: off by default."""
    def __init__(self, url):
        self.url, self.seen, self.stopping = url, {}, False
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        while not self.stopping:
            try:
                jobs = get_json(self.url + "/api/v1/jobs")["data"]["jobs"]
                t = time.time()
                for j in jobs:
                    if j.get("state") == "crashed":
                        self.seen.setdefault(j["name"], t)
            except (OSError, ValueError, KeyError):
                pass
            time.sleep(0.05)

    def stop(self):
        self.stopping = True
        self.thread.join(5)


class Received:
    """Every message any receiver got: (channel, receipt time, job name or
    None, firing?, raw description)."""
    lock = threading.Lock()
    got = []

    @classmethod
    def add(cls, channel, t, text, firing, extra=None):
        with cls.lock:
            cls.got.append({"channel": channel, "t": t, "text": text, "firing": firing,
                            "extra": extra})

    @classmethod
    def find(cls, channel, job):
        with cls.lock:
            for m in cls.got:
                if m["channel"] == channel and m["firing"] and job in m["text"]:
                    return m
        return None


class Webhook(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        t = time.time()
        body = json.loads(raw)
        jobs = [a["labels"].get("job", "") + "|" + a["labels"].get("alertname", "")
                for a in body.get("alerts", []) if a.get("status") == "firing"]
        starts = {a["labels"].get("job", ""): a["startsAt"] for a in body.get("alerts", [])}
        Received.add("webhook", t, " ".join(f"<{j}>" for j in jobs), body.get("status") == "firing",
                     starts)
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *a):
        pass


class Bots(FakeBots):
    """FakeBots (Feishu's checks) plus the SMS gateway at /sms, with the
    receipt time of each message."""
    serial = threading.Lock()  # Vigil sends one at a time; this keeps FakeBots.got paired

    def do_POST(self):
        raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        t = time.time()  # the whole message has arrived
        # FakeBots reads the body again from a copy, checks it and answers.
        self.rfile = io.BytesIO(raw)
        self.headers.replace_header("Content-Length", str(len(raw)))
        with Bots.serial:
            with FakeBots.lock:
                n = len(FakeBots.got)
            super().do_POST()
            with FakeBots.lock:
                mine = FakeBots.got[n:]
        for v, body, problems in mine:
            if v == "feishu":
                text = bot_text("feishu", body)
                firing = text.startswith("【告警") or text.startswith("[FIRING")
                Received.add("feishu", t, text, firing, problems)
            elif v == "sms":
                Received.add("sms", t, body.get("text", ""), body.get("level") != "resolved",
                             body.get("level"))
            else:
                Received.add(v, t, json.dumps(body, ensure_ascii=False), False, None)


class Mailbox:
    async def handle_DATA(self, server, session, envelope):
        t = time.time()
        msg = email.message_from_bytes(envelope.content, policy=email.policy.default)
        part = msg.get_body(preferencelist=("plain",))
        text = msg["Subject"] + "\n" + (part.get_content() if part is not None else "")
        tls = server.transport.get_extra_info("ssl_object") is not None
        Received.add("email", t, text, msg["Subject"].startswith("[FIRING"),
                     {"tls": tls, "auth": bool(session.authenticated)})
        return "250 OK"


def authenticator(server, session, envelope, mechanism, auth_data):
    ok = (isinstance(auth_data, LoginPassword) and auth_data.login == SMTP_USER.encode()
          and auth_data.password == SMTP_PASSWORD.encode())
    return AuthResult(success=ok, handled=False)


def alive(pid):
    """Running, not a zombie (a daemon's parent here may be a PID 1 that
    does not reap: `vigil down` stopped it, its entry stays)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get_json(url):
    with urllib.request.urlopen(url, timeout=10) as r:
        return json.loads(r.read())


def wait(fn, timeout, what):
    end = time.time() + timeout
    while time.time() < end:
        try:
            v = fn()
        except OSError:
            v = None
        if v:
            return v
        time.sleep(0.02)
    raise SystemExit(f"timed out after {timeout} s waiting for {what}")


def rfc3339_ms(s):
    return datetime.datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp() * 1000


def pct(v, p):
    """The p-th percentile, nearest rank (p99 of 80 samples: the 80th value)."""
    s = sorted(v)
    k = max(0, min(len(s) - 1, int(-(-p * len(s) // 100)) - 1))
    return s[k]


def stats(v):
    return {"n": len(v), "median": statistics.median(v), "p90": pct(v, 90), "p99": pct(v, 99),
            "max": max(v), "min": min(v)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vigil", required=True)
    ap.add_argument("--fake-nvml", required=True)
    ap.add_argument("--samples", type=int, default=100, help="crashes measured")
    ap.add_argument("--warmup", type=int, default=2, help="crashes before them, not counted")
    ap.add_argument("--run-seconds", type=float, default=1.0, help="how long each job runs")
    ap.add_argument("--group-wait", help="notify.group_wait (default: Vigil's, 1s)")
    ap.add_argument("--neighbours", type=int, default=0,
                    help="`vigil run` jobs that keep running (a loss line every 0.5 s) beside the crashes")
    ap.add_argument("--probe-jobs", action="store_true",
                    help="poll /api/v1/jobs every 50 ms: when the server first lists each job as crashed")
    ap.add_argument("--json", help="write every sample here")
    ap.add_argument("--seed", type=int, default=15)
    args = ap.parse_args()
    vigil = os.path.abspath(args.vigil)
    fake_nvml = os.path.abspath(args.fake_nvml)
    rng = random.Random(args.seed)

    work = tempfile.mkdtemp(prefix="bench-notify-")
    home = os.path.join(work, "home")
    os.makedirs(home)
    servers, env, vigil_pid, neighbours, probe = [], None, None, [], None
    try:
        ca, cert, key = make_ca_and_cert(work)
        # Webhook receiver, plain HTTP.
        hook = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Webhook)
        threading.Thread(target=hook.serve_forever, daemon=True).start()
        servers.append(hook.shutdown)
        # Feishu bot and SMS gateway, HTTPS.
        FakeBots.feishu_secret = FEISHU_SECRET
        bots = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Bots)
        tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        tls.load_cert_chain(cert, key)
        bots.socket = tls.wrap_socket(bots.socket, server_side=True)
        threading.Thread(target=bots.serve_forever, daemon=True).start()
        servers.append(bots.shutdown)
        bots_url = f"https://127.0.0.1:{bots.server_address[1]}"
        # SMTP with STARTTLS and AUTH required.
        smtp_tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        smtp_tls.load_cert_chain(cert, key)
        smtp = Controller(Mailbox(), hostname="127.0.0.1", port=free_port(), tls_context=smtp_tls,
                          require_starttls=True, auth_require_tls=True, auth_required=True,
                          authenticator=authenticator, ready_timeout=10)
        smtp.start()
        servers.append(smtp.stop)

        channels = [
            {"name": "hook", "type": "webhook", "url": f"http://127.0.0.1:{hook.server_address[1]}/"},
            {"name": "lark", "type": "feishu", "url": bots_url + "/feishu/hook-token",
             "secret": FEISHU_SECRET, "ca_file": ca},
            {"name": "mail", "type": "email", "smtp": f"127.0.0.1:{smtp.port}", "starttls": True,
             "username": SMTP_USER, "password": SMTP_PASSWORD, "ca_file": ca,
             "from": "Vigil <vigil@bench.example>", "to": ["oncall@bench.example"]},
            {"name": "phone", "type": "sms", "url": bots_url + "/sms?to={{to}}",
             "body": '{"to": "{{to}}", "text": "{{message}}", "level": "{{severity}}"}',
             "to": ["+8613800000000"], "max_per_day": 0, "ca_file": ca},
        ]
        with open(os.path.join(home, "config.json"), "w") as f:
            notify = {"channels": channels}
            if args.group_wait:
                notify["group_wait"] = args.group_wait
            json.dump({"notify": notify}, f)
        scenario = os.path.join(work, "calm.scenario")
        with open(scenario, "w") as f:
            f.write(SCENARIO)
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        env = dict(os.environ, VIGIL_HOME=home, VIGIL_NVML_LIBRARY=fake_nvml,
                   VIGIL_FAKE_NVML_SCENARIO=scenario)
        env.pop("VIGIL_URL", None)
        up = subprocess.run([vigil, "up", "--listen", f"127.0.0.1:{port}"], env=env,
                            capture_output=True, text=True, timeout=60)
        if up.returncode != 0:
            raise SystemExit("vigil up failed: " + up.stdout + up.stderr)
        st = wait(lambda: get_json(url + "/api/v1/status"), 30, "vigil up")
        vigil_pid = st.get("pid")
        time.sleep(3)  # its first passes (collection, jobs, the engine's first evaluation)

        jobdir = os.path.join(work, "job")
        os.makedirs(jobdir)
        script = os.path.join(jobdir, "train.py")
        with open(script, "w") as f:
            f.write(CRASHER)
        # Jobs that keep running beside the crashes (a busy node), if asked.
        for k in range(args.neighbours):
            neighbours.append(subprocess.Popen(
                [vigil, "run", "--name", f"neighbour{k}", "--", "/usr/bin/python3", "-c", NEIGHBOUR],
                env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=jobdir))
        if neighbours:
            time.sleep(8)  # found, and their first job reports
        probe = JobsProbe(url) if args.probe_jobs else None
        samples = []
        total = args.warmup + args.samples
        t_bench0 = time.time()
        for i in range(total):
            name = f"nlat{i:03d}z"  # distinct: a group of its own; no name is a prefix of another
            stamp = os.path.join(work, name + ".exit")
            with open(os.path.join(work, name + ".log"), "w") as log:
                r = subprocess.run([vigil, "run", "--name", name, "--", "/usr/bin/python3", script,
                                    str(args.run_seconds), stamp],
                                   env=env, stdout=log, stderr=subprocess.STDOUT, cwd=jobdir)
            t_run_returned = time.time()
            if r.returncode == 0:
                raise SystemExit(f"{name}: the job did not fail")
            with open(stamp) as f:
                t_exit = float(f.read())
            got = {}
            for ch in CHANNELS:
                got[ch] = wait(lambda ch=ch: Received.find(ch, name), 60, f"{name} at {ch}")
            samples.append({"job": name, "warmup": i < args.warmup, "t_exit": t_exit,
                            "t_run_returned": t_run_returned,
                            "t_recv": {ch: got[ch]["t"] for ch in CHANNELS},
                            "starts_at": got["webhook"]["extra"].get(name),
                            "seen_crashed": probe.seen.get(name) if probe else None})
            time.sleep(rng.uniform(0.0, 1.0))
            sys.stderr.write(f"\r{i + 1}/{total}")
        sys.stderr.write("\n")
        t_bench1 = time.time()

        with open(os.path.join(home, "logs", "vigil.log"), errors="replace") as f:
            polled = [l.strip() for l in f if "process events" in l]
        proc_events = ("/proc poll (" + polled[0] + ")") if polled else "the kernel's connector"
        # The alerts' records (fired time), the jobs (exit as `vigil run`
        # recorded it) and the delivery log (each entry's creation).
        records = get_json(url + "/api/v1/alerts/records?all=1")
        records = records.get("data", records) if isinstance(records, dict) else records
        fired = {}
        for a in records:
            if a.get("rule") == "job_crashed":
                fired[a["labels"].get("job")] = a.get("fired_at_ms") or a.get("active_at_ms")
        jobs = get_json(url + "/api/v1/jobs")["data"]["jobs"]
        ended = {j["name"]: j.get("end_time_ms") for j in jobs}
        notes = get_json(url + "/api/v1/notifications?limit=1000")["data"]
        created = {}  # (job, receiver) -> the entry's creation, ms
        # The entries name alert ids; map them to jobs through the records.
        id_job = {a["id"]: a["labels"].get("job") for a in records if a.get("rule") == "job_crashed"}
        for e in notes["entries"]:
            for a in e.get("alerts", []):
                j = id_job.get(a.get("id"))
                if j:
                    created[(j, e["receiver"])] = rfc3339_ms(e["created_at"])
        receiver_of = {"webhook": "hook", "feishu": "lark", "email": "mail", "sms": "phone"}
        for s in samples:
            s["fired_ms"] = fired.get(s["job"])
            s["end_time_ms"] = ended.get(s["job"])
            s["created_ms"] = {ch: created.get((s["job"], receiver_of[ch])) for ch in CHANNELS}
            if s["starts_at"] and s["fired_ms"] and abs(rfc3339_ms(s["starts_at"]) - s["fired_ms"]) > 1:
                print(f"note: {s['job']}: startsAt {s['starts_at']} != fired_at_ms {s['fired_ms']}")

        measured = [s for s in samples if not s["warmup"] and s["fired_ms"]]
        lost = [s["job"] for s in samples if not s["warmup"] and not s["fired_ms"]]
        if lost:
            print(f"note: no job_crashed record for {lost}")
        print(f"process exits seen through {proc_events}")
        print(f"\n{len(measured)} crashes in {t_bench1 - t_bench0:.0f} s; load before/after: "
              f"{LOAD0} / {open('/proc/loadavg').read().split()[:3]}")
        print("\n| channel | (a) firing -> receipt: median | p90 | p99 | max "
              "| (b) job exit -> receipt: median | p90 | p99 | max |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        out_stats = {}
        for ch in CHANNELS:
            a = [s["t_recv"][ch] - s["fired_ms"] / 1000 for s in measured]
            b = [s["t_recv"][ch] - s["t_exit"] for s in measured]
            sa, sb = stats(a), stats(b)
            out_stats[ch] = {"firing_to_receipt": sa, "exit_to_receipt": sb}
            print(f"| {ch} | {sa['median']:.3f} | {sa['p90']:.3f} | {sa['p99']:.3f} | {sa['max']:.3f} "
                  f"| {sb['median']:.3f} | {sb['p90']:.3f} | {sb['p99']:.3f} | {sb['max']:.3f} |")

        def med(v):
            v = [x for x in v if x is not None]
            return (f"{statistics.median(v):.3f} (p99 {pct(v, 99):.3f}, max {max(v):.3f})"
                    if v else "n/a")
        print("\nWhere the time goes (s, median over the crashes):")
        print("  job's last statement -> `vigil run` returned:      ",
              med([s["t_run_returned"] - s["t_exit"] for s in measured]))
        print("  job's last statement -> its end as the job tracker has it (end_time_ms):",
              med([s["end_time_ms"] / 1000 - s["t_exit"] if s["end_time_ms"] else None
                   for s in measured]))
        if args.probe_jobs:
            print("  job's last statement -> server lists it crashed (probe):",
                  med([s["seen_crashed"] - s["t_exit"] if s["seen_crashed"] else None
                       for s in measured]))
        print("  job's last statement -> alert fired (fired_at_ms): ",
              med([s["fired_ms"] / 1000 - s["t_exit"] for s in measured]))
        for ch in CHANNELS:
            print(f"  fired -> {ch:7} entry written (group_wait):     ",
                  med([s["created_ms"][ch] / 1000 - s["fired_ms"] / 1000 if s["created_ms"][ch]
                       else None for s in measured]))
        for ch in CHANNELS:
            print(f"  {ch:7} entry written -> received (delivery):     ",
                  med([s["t_recv"][ch] - s["created_ms"][ch] / 1000 if s["created_ms"][ch]
                       else None for s in measured]))
        # The delivery thread sends one entry at a time: each channel's own
        # share is its receipt less the previous receipt of the same crash.
        for ch in CHANNELS:
            own = []
            for s in measured:
                prev = [s["t_recv"][c] for c in CHANNELS if s["t_recv"][c] < s["t_recv"][ch]]
                if prev or s["created_ms"][ch]:
                    own.append(s["t_recv"][ch] - (max(prev) if prev else s["created_ms"][ch] / 1000))
            print(f"  {ch:7} own share (after the previous receipt, or the entry): ", med(own))
        order = {}
        for s in measured:
            o = "<".join(sorted(CHANNELS, key=lambda ch: s["t_recv"][ch]))
            order[o] = order.get(o, 0) + 1
        print("  order of receipt (count):", order)
        for s in samples:
            if s["warmup"]:
                print(f"  warm-up {s['job']}: exit -> receipt " + ", ".join(
                    f"{ch} {s['t_recv'][ch] - s['t_exit']:.3f}" for ch in CHANNELS))
        with Received.lock:
            others = [m for m in Received.got if not any(s["job"] in m["text"] for s in samples)]
            resolved = [m for m in Received.got if not m["firing"]]
            bad_sign = [m for m in Received.got if m["channel"] == "feishu" and m["extra"]]
            mails = [m for m in Received.got if m["channel"] == "email"]
        print(f"  other messages: {len(others)} not about the crashes, {len(resolved)} resolved/non-firing, "
              f"{len(bad_sign)} Feishu messages refused; email over STARTTLS+AUTH: "
              f"{sum(1 for m in mails if m['extra']['tls'] and m['extra']['auth'])}/{len(mails)}")
        for m in others[:10]:
            print(f"    {m['channel']} at +{m['t'] - t_bench0:.1f} s: {m['text'][:120]!r}")
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"samples": samples, "stats": out_stats,
                           "cpu": CPU, "load_before": LOAD0}, f, indent=1)
    finally:
        if probe:
            probe.stop()
        for p in neighbours:
            p.terminate()
            p.wait(10)
        if env is not None:
            subprocess.run([vigil, "down"], env=env, capture_output=True, timeout=60)
            end = time.time() + 10
            while vigil_pid and alive(int(vigil_pid)) and time.time() < end:
                time.sleep(0.1)
            if vigil_pid and alive(int(vigil_pid)):
                os.kill(int(vigil_pid), 9)
                print(f"note: vigil (pid {vigil_pid}) outlived `vigil down`: killed")
        for stop in reversed(servers):
            stop()
        shutil.rmtree(work, ignore_errors=True)


def cpu_model():
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        for line in out.splitlines():
            if line.startswith("Model name:"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown"


CPU = cpu_model()
LOAD0 = open("/proc/loadavg").read().split()[:3]

if __name__ == "__main__":
    print("command: /usr/bin/python3 " + " ".join(sys.argv))
    print(f"CPU: {CPU}, {os.cpu_count()} cores; load average {' '.join(LOAD0)}")
    print("channels: webhook (plain HTTP), Feishu signed (HTTPS), email (SMTP, STARTTLS + AUTH), "
          "SMS gateway (HTTPS), all on 127.0.0.1")
    main()
