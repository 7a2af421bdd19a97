#!/usr/bin/python3
"""Footprint of `vigil up` beside node_exporter and Netdata, in one run.

Each agent collects every second and is scraped every second (Vigil's
/metrics, node_exporter's /metrics, Netdata's /api/v1/allmetrics), for the
same window. Every second we sample each process tree's RSS and CPU time
from /proc; we report the median RSS and the CPU used over the window as a
percentage of one core.

Vigil runs on the fake NVML with 8 H100s (tests/fake_nvml/scenarios/h100x8.scenario)
and stores everything it collects (collect + store + serve); node_exporter
only collects and serves; Netdata collects, stores in its own database and serves.

With --jobs N, N small training jobs run under `vigil run` (each prints a
step, loss, lr and grad norm line a second), so Vigil follows N logs, N jobs
and their training series, and evaluates its alert presets on them; the jobs
themselves are not counted.

Usage: bench/footprint.py --vigil build/src/cli/vigil --fake-nvml PATH.so [--seconds 60] [--jobs 20]
Loopback only; every process it starts is stopped at the end.
"""
import argparse
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

CLK_TCK = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def tree_pids(root):
    """root and all its descendants (Netdata forks plugins)."""
    children = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                st = f.read()
            ppid = int(st[st.rindex(")") + 2:].split()[1])
            children.setdefault(ppid, []).append(int(d))
        except (OSError, ValueError):
            pass
    out, todo = [], [root]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(children.get(p, []))
    return out


def usage(root):
    """(rss_bytes, cpu_seconds) summed over the process tree."""
    rss = cpu = 0
    for p in tree_pids(root):
        try:
            with open(f"/proc/{p}/stat") as f:
                st = f.read()
            fields = st[st.rindex(")") + 2:].split()
            cpu += (int(fields[11]) + int(fields[12])) / CLK_TCK
            rss += int(fields[21]) * PAGE
        except (OSError, ValueError, IndexError):
            pass
    return rss, cpu


def wait_http(url, timeout=30):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            urllib.request.urlopen(url, timeout=1).read()
            return True
        except Exception:
            time.sleep(0.2)
    return False


def scrape(url):
    try:
        return len(urllib.request.urlopen(url, timeout=2).read())
    except Exception:
        return 0


def start_vigil(args, tmp):
    port = free_port()
    env = dict(os.environ, VIGIL_NVML_LIBRARY=args.fake_nvml,
               VIGIL_FAKE_NVML_SCENARIO=args.scenario)
    p = subprocess.Popen([args.vigil, "up", "--foreground", "--home", f"{tmp}/vigil",
                          "--listen", f"127.0.0.1:{port}"], env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return p, f"http://127.0.0.1:{port}/metrics"


JOB = """import math, random, sys, time
random.seed(int(sys.argv[1]))
step = 0
while True:
    step += 1
    loss = 2.5 * math.exp(-step / 300) + 0.5 + random.uniform(-0.03, 0.03)
    print(f"step {step} | loss {loss:.4f} | lr 3.00e-04 | grad_norm {0.8 + random.uniform(-0.1, 0.1):.3f}",
          flush=True)
    time.sleep(1)
"""


def start_jobs(args, tmp):
    script = f"{tmp}/train.py"
    with open(script, "w") as f:
        f.write(JOB)
    env = dict(os.environ, VIGIL_HOME=f"{tmp}/vigil")
    env.pop("VIGIL_URL", None)
    return [subprocess.Popen([args.vigil, "run", "--name", f"train{i:02d}", "--", "/usr/bin/python3",
                              script, str(i)], env=env, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, start_new_session=True)
            for i in range(args.jobs)]


def start_node_exporter(tmp):
    port = free_port()
    p = subprocess.Popen(["/usr/bin/prometheus-node-exporter",
                          f"--web.listen-address=127.0.0.1:{port}"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return p, f"http://127.0.0.1:{port}/metrics"


def start_netdata(tmp):
    if not shutil.which("netdata"):
        return None, None
    port = free_port()
    d = f"{tmp}/netdata"
    for sub in ("cache", "lib", "log", "run"):
        os.makedirs(f"{d}/{sub}", exist_ok=True)
    conf = f"""[global]
    run as user = root
    update every = 1
[directories]
    cache = {d}/cache
    lib = {d}/lib
    log = {d}/log
    run = {d}/run
[logs]
    debug log = none
    error log = {d}/log/error.log
    access log = none
[web]
    bind to = 127.0.0.1:{port}
[ml]
    enabled = no
[cloud]
    enabled = no
"""
    with open(f"{d}/netdata.conf", "w") as f:
        f.write(conf)
    p = subprocess.Popen(["netdata", "-D", "-c", f"{d}/netdata.conf"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         start_new_session=True)
    return p, f"http://127.0.0.1:{port}/api/v1/allmetrics?format=prometheus"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vigil", required=True)
    ap.add_argument("--fake-nvml", required=True)
    ap.add_argument("--scenario", default="tests/fake_nvml/scenarios/h100x8.scenario")
    ap.add_argument("--seconds", type=int, default=60)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--json", help="write results here too")
    ap.add_argument("--jobs", type=int, default=0,
                    help="training jobs under `vigil run` beside Vigil (each prints a loss line a second)")
    args = ap.parse_args()
    args.vigil = os.path.abspath(args.vigil)
    args.fake_nvml = os.path.abspath(args.fake_nvml)
    args.scenario = os.path.abspath(args.scenario)

    tmp = tempfile.mkdtemp(prefix="vigil-footprint-")
    agents = {}
    try:
        for name, starter in (("vigil", lambda: start_vigil(args, tmp)),
                              ("node_exporter", lambda: start_node_exporter(tmp)),
                              ("netdata", lambda: start_netdata(tmp))):
            p, url = starter()
            if p is None:
                print(f"{name}: not installed, skipped", file=sys.stderr)
                continue
            if not wait_http(url, 60):
                print(f"{name}: did not come up at {url}", file=sys.stderr)
                p.kill()
                continue
            agents[name] = {"proc": p, "url": url, "rss": [], "scrape_bytes": 0}
        jobs = start_jobs(args, tmp) if args.jobs else []
        time.sleep(args.warmup)
        start = {n: usage(a["proc"].pid)[1] for n, a in agents.items()}
        t0 = time.time()
        for i in range(args.seconds):
            for n, a in agents.items():
                a["scrape_bytes"] = scrape(a["url"])
                a["rss"].append(usage(a["proc"].pid)[0])
            time.sleep(max(0, t0 + i + 1 - time.time()))
        elapsed = time.time() - t0
        results = {}
        for n, a in agents.items():
            cpu = usage(a["proc"].pid)[1] - start[n]
            results[n] = {
                "median_rss_mib": round(statistics.median(a["rss"]) / 2**20, 1),
                "cpu_percent_of_one_core": round(100 * cpu / elapsed, 2),
                "scrape_bytes": a["scrape_bytes"],
            }
        print(f"footprint over {args.seconds} s after {args.warmup} s warm-up "
              f"(collect every 1 s, scraped every 1 s, {args.jobs} jobs beside Vigil)")
        print(f"{'agent':<14} {'median RSS MiB':>15} {'CPU % of a core':>16} {'scrape bytes':>13}")
        for n, r in results.items():
            print(f"{n:<14} {r['median_rss_mib']:>15} {r['cpu_percent_of_one_core']:>16} "
                  f"{r['scrape_bytes']:>13}")
        if args.json:
            with open(args.json, "w") as f:
                json.dump(results, f, indent=2)
    finally:
        for j in locals().get("jobs", []):
            try:
                os.killpg(j.pid, signal.SIGKILL)
            except OSError:
                pass
        for a in agents.values():
            p = a["proc"]
            try:
                os.killpg(p.pid, signal.SIGTERM) if p.pid == os.getpgid(p.pid) else p.terminate()
            except OSError:
                pass
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
