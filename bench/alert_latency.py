#!/usr/bin/python3
"""Alert latency, Vigil beside Prometheus + Alertmanager, in one run.

Scenario: a fake GPU (tests/fake_nvml) jumps from 60 C to 95 C, past its
90 C slowdown threshold. The critical level of gpu_temperature_high fires
after `for: 30s`. We measure, for each stack, the time from the condition
becoming true after `for` (the first stored sample at >= 90 C, plus 30 s) to
the webhook receiving the alert:

  * Vigil: `vigil up` with a webhook channel, all defaults (evaluation every
    1 s, group_wait 1 s);
  * Prometheus 2.42 + Alertmanager 0.25 (Debian packages) at their defaults
    (scrape and evaluation every 1 m, group_wait 30 s), scraping Vigil's
    /metrics, with Vigil's own rule file (`vigil rules export`), Alertmanager
    posting to the same receiver.

Then the crash of a job: the time from its process exiting to the
`job_crashed` webhook, under `vigil run` and for a job Vigil finds by itself.

Usage: bench/alert_latency.py --vigil build/src/cli/vigil --fake-nvml PATH.so [--runs 3]
Loopback only; every process it starts is stopped at the end.
"""
import argparse
import http.server
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import tempfile
import threading
import time
import urllib.parse
import urllib.request

HOT_AT = 20  # scenario second at which GPU 0 heats up
SCENARIO = f"""
driver_version 550.54.15
cuda_version 12.4
gpus 2
gpu all model "NVIDIA H100 80GB HBM3"
gpu all temp_slowdown_c 90
curve all gpu_util 0:95
curve all power_w 0:500
curve 1 temp 0:60
curve 0 temp 0:60 {HOT_AT - 1}:60 {HOT_AT}:95 step
"""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Receiver(http.server.BaseHTTPRequestHandler):
    got = []
    lock = threading.Lock()

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
        with Receiver.lock:
            Receiver.got.append((time.time(), self.path, body))
        self.send_response(200)
        self.end_headers()

    def log_message(self, *a):
        pass


def first(path, alertname, severity=None, job=None, after=0.0):
    with Receiver.lock:
        for t, p, body in Receiver.got:
            if p != path or t < after:
                continue
            for a in body.get("alerts", []):
                lab = a["labels"]
                if a["status"] == "firing" and lab.get("alertname") == alertname and \
                        (severity is None or lab.get("severity") == severity) and \
                        (job is None or lab.get("job") == job):
                    return t
    return None


def wait(fn, timeout, what):
    end = time.time() + timeout
    while time.time() < end:
        v = fn()
        if v:
            return v
        time.sleep(0.05)
    raise SystemExit(f"timed out waiting for {what}")


def get_json(url):
    with urllib.request.urlopen(url, timeout=10) as r:
        return json.loads(r.read())


def first_hot_sample(vigil_url, since):
    """Unix seconds of the first stored sample of GPU 0 at >= 90 C."""
    q = urllib.parse.urlencode({"query": 'DCGM_FI_DEV_GPU_TEMP{gpu="0"} >= 90',
                                "start": since, "end": time.time(), "step": 0.2})
    r = get_json(f"{vigil_url}/api/v1/query_range?{q}")
    ts = [float(v[0]) for s in r["data"]["result"] for v in s["values"]]
    return min(ts) if ts else None


def start_vigil(args, home, port, hook_url, scenario):
    os.makedirs(home, exist_ok=True)
    with open(os.path.join(home, "config.json"), "w") as f:
        json.dump({"notify": {"channels": [{"name": "hook", "type": "webhook", "url": hook_url}]}}, f)
    env = dict(os.environ, VIGIL_HOME=home, VIGIL_NVML_LIBRARY=args.fake_nvml,
               VIGIL_FAKE_NVML_SCENARIO=scenario)
    env.pop("VIGIL_URL", None)
    p = subprocess.Popen([args.vigil, "up", "--foreground", "--listen", f"127.0.0.1:{port}"],
                         env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    wait(lambda: _up(url), 30, "vigil up")
    return p, env, url


def _up(url):
    try:
        return get_json(url + "/api/v1/status")
    except OSError:
        return None


def stop(p):
    if p.poll() is None:
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(20)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def vigil_run(args, hook, scenario, work):
    """Latency of gpu_temperature_high (critical) through Vigil alone."""
    home = tempfile.mkdtemp(prefix="bench-alert-vigil-", dir=work)
    port = free_port()
    t0 = time.time()
    p, env, url = start_vigil(args, home, port, hook + "/vigil", scenario)
    try:
        t_recv = wait(lambda: first("/vigil", "gpu_temperature_high", "critical", after=t0),
                      HOT_AT + 90, "Vigil's webhook")
        hot = first_hot_sample(url, t0)
        return t_recv - (hot + 30)
    finally:
        stop(p)


def prometheus_run(args, hook, scenario, work):
    """The same through Prometheus + Alertmanager scraping Vigil's /metrics."""
    home = tempfile.mkdtemp(prefix="bench-alert-prom-", dir=work)
    port, prom_port, am_port = free_port(), free_port(), free_port()
    # Vigil only as the exporter here: no channel of its own.
    vigil_home = os.path.join(home, "vigil")
    os.makedirs(vigil_home)
    env = dict(os.environ, VIGIL_HOME=vigil_home, VIGIL_NVML_LIBRARY=args.fake_nvml,
               VIGIL_FAKE_NVML_SCENARIO=scenario)
    env.pop("VIGIL_URL", None)
    rules = subprocess.run([args.vigil, "rules", "export", "--home", vigil_home],
                           capture_output=True, text=True, env=env, check=True).stdout
    # Only the temperature rule, so the other presets' ALERTS do not matter.
    with open(os.path.join(home, "rules.yml"), "w") as f:
        f.write(rules)
    with open(os.path.join(home, "prometheus.yml"), "w") as f:
        f.write(f"""global: {{}}
rule_files: [rules.yml]
alerting:
  alertmanagers: [{{static_configs: [{{targets: ['127.0.0.1:{am_port}']}}]}}]
scrape_configs:
  - job_name: vigil
    static_configs: [{{targets: ['127.0.0.1:{port}']}}]
""")
    with open(os.path.join(home, "alertmanager.yml"), "w") as f:
        f.write(f"""route: {{receiver: hook}}
receivers:
  - name: hook
    webhook_configs: [{{url: '{hook}/prom'}}]
""")
    # The rule file's group says `interval: 1s` (Vigil's default): strip it
    # so Prometheus evaluates at its own default (1m), as a user's would.
    with open(os.path.join(home, "rules.yml")) as f:
        text = f.read().replace("    interval: 1s\n", "")
    with open(os.path.join(home, "rules.yml"), "w") as f:
        f.write(text)
    t0 = time.time()
    vigil = subprocess.Popen([args.vigil, "up", "--foreground", "--listen", f"127.0.0.1:{port}"],
                             env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    am = subprocess.Popen(["prometheus-alertmanager", f"--config.file={home}/alertmanager.yml",
                           f"--storage.path={home}/am", f"--web.listen-address=127.0.0.1:{am_port}",
                           "--cluster.listen-address="],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    prom = subprocess.Popen(["prometheus", f"--config.file={home}/prometheus.yml",
                             f"--storage.tsdb.path={home}/prom",
                             f"--web.listen-address=127.0.0.1:{prom_port}"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=home)
    try:
        url = f"http://127.0.0.1:{port}"
        wait(lambda: _up(url), 30, "vigil up")
        t_recv = wait(lambda: first("/prom", "gpu_temperature_high", "critical", after=t0),
                      HOT_AT + 400, "Alertmanager's webhook")
        hot = first_hot_sample(url, t0)
        return t_recv - (hot + 30)
    finally:
        for p in (prom, am, vigil):
            stop(p)


CRASHER = """import sys, time
print("step 1: loss 2.0", flush=True)
time.sleep(float(sys.argv[1]))
raise RuntimeError("CUDA error: an illegal memory access was encountered")
"""


def crash_runs(args, hook, scenario, work, runs):
    """Exit of a crashing job -> job_crashed at the webhook."""
    home = tempfile.mkdtemp(prefix="bench-alert-crash-", dir=work)
    port = free_port()
    p, env, url = start_vigil(args, home, port, hook + "/crash", scenario)
    d = os.path.join(work, "nanogpt_crash")
    os.makedirs(d, exist_ok=True)
    script = os.path.join(d, "train.py")
    with open(script, "w") as f:
        f.write(CRASHER)
    out = {"vigil run": [], "found by itself": []}
    try:
        time.sleep(3)
        for i in range(runs):
            for kind in out:
                name = f"crash{i}{'r' if kind == 'vigil run' else 'p'}"
                if kind == "vigil run":
                    cmd = [args.vigil, "run", "--name", name, "--", "/usr/bin/python3", script, "3"]
                else:
                    # A training script Vigil finds on its own (nanoGPT-style
                    # layout), named by its file.
                    d2 = os.path.join(work, f"nanogpt_{name}")
                    os.makedirs(d2, exist_ok=True)
                    s2 = os.path.join(d2, f"{name}.py")
                    shutil.copy(script, s2)
                    cmd = ["/usr/bin/python3", s2, "3", "config/train_tiny.py"]
                with open(os.path.join(work, name + ".log"), "w") as log:
                    r = subprocess.run(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, cwd=d)
                t_exit = time.time()
                assert r.returncode != 0
                t_recv = wait(lambda: first("/crash", "job_crashed", job=name), 60,
                              f"job_crashed for {name}")
                out[kind].append(t_recv - t_exit)
    finally:
        stop(p)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vigil", required=True)
    ap.add_argument("--fake-nvml", required=True)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--skip-prometheus", action="store_true")
    args = ap.parse_args()
    args.vigil = os.path.abspath(args.vigil)
    args.fake_nvml = os.path.abspath(args.fake_nvml)
    work = tempfile.mkdtemp(prefix="bench-alert-")
    scenario = os.path.join(work, "hot.scenario")
    with open(scenario, "w") as f:
        f.write(SCENARIO)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    hook = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        rows = {"Vigil (defaults)": [], "Prometheus 2.42 + Alertmanager 0.25 (defaults)": []}
        for _ in range(args.runs):
            rows["Vigil (defaults)"].append(vigil_run(args, hook, scenario, work))
            if not args.skip_prometheus:
                rows["Prometheus 2.42 + Alertmanager 0.25 (defaults)"].append(
                    prometheus_run(args, hook, scenario, work))
        crash = crash_runs(args, hook, scenario, work, args.runs)
        print("| from | to the webhook | runs | median s | min s | max s |")
        print("|---|---|---:|---:|---:|---:|")
        for name, v in rows.items():
            if v:
                print(f"| gpu_temperature_high true after `for` | {name} | {len(v)} | "
                      f"{statistics.median(v):.2f} | {min(v):.2f} | {max(v):.2f} |")
        for kind, v in crash.items():
            print(f"| job exit | job_crashed, {kind} | {len(v)} | {statistics.median(v):.2f} | "
                  f"{min(v):.2f} | {max(v):.2f} |")
    finally:
        server.shutdown()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
