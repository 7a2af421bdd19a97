#!/usr/bin/python3
"""End-to-end: the real `vigil` binary as a user runs it.

up (background) -> up again (harmless) -> status -> /metrics (promtool lint,
values against /proc and the fake NVML scenario) -> down; preflight failures;
the no-driver state. Environment (set by CTest): VIGIL_BIN, VIGIL_FAKE_NVML,
VIGIL_SOURCE_DIR, VIGIL_PROMTOOL (optional).
"""
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.parse
import urllib.request

VIGIL = os.environ["VIGIL_BIN"]
FAKE_NVML = os.environ["VIGIL_FAKE_NVML"]
SCENARIO = os.path.join(os.environ["VIGIL_SOURCE_DIR"], "tests/fake_nvml/scenarios/h100x8.scenario")
PROMTOOL = os.environ.get("VIGIL_PROMTOOL") or shutil.which("promtool")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url, timeout=5):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.status, r.read().decode()


def parse_metrics(text):
    """{(name, frozenset(labels)): value} from Prometheus text exposition."""
    out = {}
    line_re = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$')
    label_re = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = line_re.match(line)
        assert m, f"unparsable exposition line: {line!r}"
        labels = frozenset(label_re.findall(m.group(3) or ""))
        out[(m.group(1), labels)] = float(m.group(4))
    return out


def series(metrics, name):
    return {labels: v for (n, labels), v in metrics.items() if n == name}


class VigilE2E(unittest.TestCase):
    def setUp(self):
        self.home = tempfile.mkdtemp(prefix="vigil-e2e-")
        self.port = free_port()
        self.env = dict(os.environ, VIGIL_NVML_LIBRARY=FAKE_NVML,
                        VIGIL_FAKE_NVML_SCENARIO=SCENARIO)
        self.env.pop("VIGIL_HOME", None)
        self.env.pop("VIGIL_URL", None)

    def tearDown(self):
        self.vigil("down", check=False)
        shutil.rmtree(self.home, ignore_errors=True)

    def vigil(self, *args, check=True, env=None, listen=True):
        cmd = [VIGIL, *args]
        if args and args[0] in ("up", "down", "status"):
            cmd += ["--home", self.home]
        if args and args[0] == "up" and listen:
            cmd += ["--listen", f"127.0.0.1:{self.port}"]
        p = subprocess.run(cmd, capture_output=True, text=True, env=env or self.env, timeout=90)
        if check and p.returncode != 0:
            self.fail(f"{cmd} exited {p.returncode}\nstdout:\n{p.stdout}\nstderr:\n{p.stderr}")
        return p

    def wait_for(self, predicate, timeout=30, what="condition"):
        deadline = time.time() + timeout
        while time.time() < deadline:
            try:
                result = predicate()
                if result:
                    return result
            except (OSError, ValueError, KeyError):
                pass
            time.sleep(0.25)
        self.fail(f"timed out waiting for {what}")

    def test_up_status_metrics_down(self):
        url = f"http://127.0.0.1:{self.port}"
        p = self.vigil("up")
        self.assertIn("Preflight checks:", p.stdout)
        self.assertIn(f"port 127.0.0.1:{self.port} is free", p.stdout)
        self.assertIn("NVIDIA driver found", p.stdout)
        self.assertIn(f"Vigil is running at {url}", p.stdout)
        self.assertIn(os.path.join(self.home, "data"), p.stdout)

        again = self.vigil("up")
        self.assertIn("already running", again.stdout)

        def gpu_metrics_present():
            _, body = get(url + "/metrics")
            return len(series(parse_metrics(body), "DCGM_FI_DEV_GPU_UTIL")) == 8
        self.wait_for(gpu_metrics_present, what="8 GPUs on /metrics")

        st = self.vigil("status").stdout
        self.assertIn("8 detected", st)
        self.assertIn("NVIDIA H100", st)
        self.assertRegex(st, r"Data:\s+\S+")
        self.assertRegex(st, r"Collector: system\s+ok")
        self.assertRegex(st, r"Collector: gpu\s+ok")
        status = json.loads(self.vigil("status", "--json").stdout)
        self.assertEqual(status["gpu"]["state"], "ok")
        self.assertGreater(status["data_bytes"], 0)

        _, body = get(url + "/metrics")
        m = parse_metrics(body)
        # System values agree with the kernel's own numbers.
        with open("/proc/meminfo") as f:
            memtotal = int(re.search(r"MemTotal:\s+(\d+) kB", f.read()).group(1)) * 1024
        mem = series(m, "node_memory_MemTotal_bytes")
        self.assertEqual(list(mem.values()), [memtotal])
        cpus = {dict(l)["cpu"] for l in series(m, "node_cpu_seconds_total")}
        self.assertEqual(len(cpus), os.cpu_count())
        # Every series carries the node label; GPU series carry dcgm-exporter's labels.
        for (name, labels) in m:
            if not name.startswith(("vigil_tsdb", "vigil_ingest", "vigil_logstore", "vigil_training")):
                self.assertIn("node", dict(labels), name)
        for labels in series(m, "DCGM_FI_DEV_GPU_UTIL"):
            self.assertTrue({"gpu", "UUID", "modelName", "Hostname"} <= set(dict(labels)))
        self.assertEqual(set(series(m, "vigil_gpu_driver_responsive").values()), {1.0})

        if PROMTOOL:
            lint = subprocess.run([PROMTOOL, "check", "metrics"], input=body,
                                  capture_output=True, text=True)
            findings = [l for l in (lint.stdout + lint.stderr).splitlines() if l.strip()]
            # The only findings allowed are those that the names Vigil must keep
            # draw: node_exporter's metric names (node_memory_MemTotal_bytes, ...),
            # dcgm-exporter's (counters without _total) and dcgm-exporter's
            # label names UUID, modelName and Hostname, which every GPU series
            # carries so that PromQL can join them.
            def allowed(f):
                return (f.startswith(("node_", "DCGM_FI_")) or
                        f.endswith("label names should be written in 'snake_case' not 'camelCase'"))
            unexpected = [f for f in findings if not allowed(f)]
            self.assertEqual(unexpected, [], "\n".join(findings))

        down = self.vigil("down")
        self.assertIn("Vigil stopped", down.stdout)
        gone = self.vigil("status", check=False)
        self.assertEqual(gone.returncode, 3)
        self.assertIn("not running", gone.stdout)

    def test_recorded_grafana_dashboard_queries_answer(self):
        """Queries from the NVIDIA DCGM and Node Exporter Full dashboards, sent
        the way Grafana sends them (range queries over the last minutes)."""
        self.vigil("up")
        url = f"http://127.0.0.1:{self.port}"
        self.wait_for(lambda: len(series(parse_metrics(get(url + "/metrics")[1]),
                                         "DCGM_FI_DEV_GPU_UTIL")) == 8, what="GPU metrics")
        time.sleep(3)  # a few samples, so rate() and irate() have two points
        path = os.path.join(os.environ["VIGIL_SOURCE_DIR"], "tests/e2e/data/grafana_queries.txt")
        with open(path) as f:
            queries = [l.strip() for l in f if l.strip() and not l.startswith("#")]
        self.assertGreater(len(queries), 20)
        end = time.time()
        for q in queries:
            params = urllib.parse.urlencode({"query": q, "start": end - 300, "end": end, "step": 15})
            status, body = get(f"{url}/api/v1/query_range?{params}")
            reply = json.loads(body)
            self.assertEqual(reply["status"], "success", f"{q}: {body[:300]}")
            self.assertEqual(reply["data"]["resultType"], "matrix", q)
            self.assertTrue(reply["data"]["result"], f"{q}: no data")

    def test_port_in_use_fails_preflight_and_starts_nothing(self):
        with socket.socket() as s:
            s.bind(("127.0.0.1", self.port))
            s.listen(1)
            p = self.vigil("up", check=False)
        self.assertEqual(p.returncode, 1)
        self.assertIn("FAIL", p.stdout)
        self.assertIn("already in use", p.stdout)
        self.assertIn("--listen", p.stdout)
        self.assertEqual(self.vigil("status", check=False).returncode, 3)

    def test_no_driver_is_a_normal_state(self):
        env = dict(self.env, VIGIL_NVML_LIBRARY="/nonexistent/libnvidia-ml.so.1")
        p = self.vigil("up", env=env)
        self.assertIn("no NVIDIA driver found", p.stdout)
        url = f"http://127.0.0.1:{self.port}"

        def driver_state_reported():
            s = json.loads(get(url + "/api/v1/status")[1])
            return s["gpu"].get("state") == "no_driver"
        self.wait_for(driver_state_reported, what="no_driver state")
        st = self.vigil("status").stdout
        self.assertIn("no NVIDIA driver found", st)
        _, body = get(url + "/metrics")
        self.assertEqual(series(parse_metrics(body), "DCGM_FI_DEV_GPU_UTIL"), {})
        self.assertTrue(series(parse_metrics(body), "node_load1"))

    def test_demo_runs_on_its_embedded_fake_gpus(self):
        """`vigil demo` needs no GPU and no files beside the binary."""
        env = dict(os.environ)
        env.pop("VIGIL_NVML_LIBRARY", None)
        env.pop("VIGIL_FAKE_NVML_SCENARIO", None)
        url = f"http://127.0.0.1:{self.port}"
        p = subprocess.Popen([VIGIL, "demo", "--home", self.home, "--listen", f"127.0.0.1:{self.port}"],
                             env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            def eight_h100s():
                s = json.loads(get(url + "/api/v1/status")[1])
                return s["gpu"].get("state") == "ok" and len(s["gpu"]["gpus"]) == 8
            self.wait_for(eight_h100s, what="the demo's 8 GPUs")
            _, page = get(url + "/")
            self.assertIn("<html", page.lower())
            _, body = get(url + "/api/v1/query?query=count(DCGM_FI_DEV_GPU_UTIL)")
            self.assertEqual(json.loads(body)["data"]["result"][0]["value"][1], "8")

            # The Jobs page's data: the demo's job, running on all eight GPUs,
            # with its loss curve and an event from its log.
            def demo_job():
                jobs = json.loads(get(url + "/api/v1/jobs")[1])["data"]["jobs"]
                mine = [j for j in jobs if j["name"] == "train" and j["state"] == "running" and
                        any("__demo-train" in q["cmdline"] for q in j["processes"])]
                return mine[0] if mine and len(mine[0]["gpus"]) == 8 and mine[0]["events"] else None
            job = self.wait_for(demo_job, timeout=60, what="the demo's job with its GPUs and events")
            self.assertEqual(sorted(g["gpu"] for g in job["gpus"]), [str(i) for i in range(8)])
            self.assertIn("loss_overflow", [e["event"] for e in job["events"]])
            _, body = get(url + '/api/v1/query?query=count(training_loss{job="train"})')
            self.assertEqual(json.loads(body)["data"]["result"][0]["value"][1], "1")
            trainer = job["processes"][0]["pid"]
        finally:
            p.terminate()
            out, _ = p.communicate(timeout=30)
        self.assertEqual(p.returncode, 0, out)
        # The demo's job ends with the demo.
        self.wait_for(lambda: not os.path.exists(f"/proc/{trainer}"), timeout=10,
                      what="the demo's job to stop with it")
        self.assertIn("8 simulated NVIDIA H100 GPUs", out)
        self.assertIn(f"Vigil is running at {url}", out)

    def test_version(self):
        p = subprocess.run([VIGIL, "version"], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0)
        self.assertRegex(p.stdout, r"^vigil \d+\.\d+\.\d+")


if __name__ == "__main__":
    unittest.main(verbosity=2)
