#!/usr/bin/python3
"""End-to-end: a job pushes its metrics with the Prometheus Python client's
push_to_gateway (Debian's python3-prometheus-client, the real peer), or as
OTLP/HTTP JSON (the spec's encoding; Debian has no OpenTelemetry SDK), to
`vigil up`, and they come back through the query API with the job's labels.
Environment (set by CTest): VIGIL_BIN, VIGIL_FAKE_NVML, VIGIL_SOURCE_DIR.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
import urllib.parse
import urllib.request

from prometheus_client import CollectorRegistry, Counter, Gauge, delete_from_gateway, push_to_gateway

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_util import private_instance, wait_for  # noqa: E402

VIGIL = os.environ["VIGIL_BIN"]


class PushE2E(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.home = tempfile.mkdtemp(prefix="vigil-push-e2e-")
        cls.port, cls.url, cls.env = private_instance(cls.home)
        up = subprocess.run([VIGIL, "up", "--listen", f"127.0.0.1:{cls.port}", "--no-logs"],
                            capture_output=True, text=True, env=cls.env, timeout=60)
        assert up.returncode == 0, up.stdout + up.stderr

    @classmethod
    def tearDownClass(cls):
        subprocess.run([VIGIL, "down"], env=cls.env, capture_output=True, timeout=60)
        shutil.rmtree(cls.home, ignore_errors=True)

    def query(self, q):
        qs = urllib.parse.urlencode({"query": q})
        with urllib.request.urlopen(f"{self.url}/api/v1/query?{qs}", timeout=10) as r:
            return json.loads(r.read())["data"]["result"]

    def test_push_to_gateway_lands_as_series(self):
        registry = CollectorRegistry()
        loss = Gauge("train_loss", "Training loss.", ["phase"], registry=registry)
        tokens = Counter("train_tokens", "Tokens seen.", registry=registry)
        loss.labels(phase="train").set(0.125)
        tokens.inc(4096)
        push_to_gateway(f"127.0.0.1:{self.port}", job="finetune", registry=registry,
                        grouping_key={"rank": "0"})
        res = wait_for(lambda: self.query('train_loss{job="finetune"}'), 10, "the pushed loss")
        self.assertEqual(res[0]["metric"]["rank"], "0")
        self.assertEqual(res[0]["metric"]["phase"], "train")
        self.assertIn("node", res[0]["metric"])
        self.assertEqual(float(res[0]["value"][1]), 0.125)
        total = self.query('train_tokens_total{job="finetune"}')
        self.assertEqual(float(total[0]["value"][1]), 4096)
        # The client's end-of-job cleanup ends the group's series at once
        # (staleness markers), and their history stays.
        delete_from_gateway(f"127.0.0.1:{self.port}", job="finetune", grouping_key={"rank": "0"})
        self.assertEqual(self.query('train_loss{job="finetune"}'), [])
        kept = self.query('last_over_time(train_loss{job="finetune"}[5m])')
        self.assertEqual(float(kept[0]["value"][1]), 0.125)

    def test_otlp_json_lands_as_series(self):
        body = {"resourceMetrics": [{
            "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "otel-train"}}]},
            "scopeMetrics": [{"metrics": [
                {"name": "gpu.loss", "gauge": {"dataPoints": [
                    {"asDouble": 0.75, "timeUnixNano": "0",
                     "attributes": [{"key": "rank", "value": {"intValue": "1"}}]}]}},
                {"name": "steps", "sum": {"aggregationTemporality": 2, "isMonotonic": True,
                                          "dataPoints": [{"asInt": "42", "timeUnixNano": "0"}]}}]}]}]}
        req = urllib.request.Request(f"{self.url}/v1/metrics", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"}, method="POST")
        with urllib.request.urlopen(req, timeout=10) as r:
            self.assertEqual(r.status, 200)
            self.assertEqual(json.loads(r.read() or b"{}").get("partialSuccess"), None)
        res = wait_for(lambda: self.query('gpu_loss{job="otel-train"}'), 10, "the OTLP gauge")
        self.assertEqual(res[0]["metric"]["rank"], "1")
        self.assertEqual(float(res[0]["value"][1]), 0.75)
        self.assertEqual(float(self.query('steps_total{job="otel-train"}')[0]["value"][1]), 42)

    def test_a_bad_push_is_refused_with_a_reason(self):
        req = urllib.request.Request(f"{self.url}/metrics/job/x", data=b"bad line {\n", method="PUT")
        with self.assertRaises(urllib.error.HTTPError) as cm:
            urllib.request.urlopen(req, timeout=10)
        self.assertEqual(cm.exception.code, 400)
        self.assertIn("line 1", cm.exception.read().decode())


if __name__ == "__main__":
    unittest.main()
