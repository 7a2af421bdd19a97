#!/usr/bin/python3
"""End-to-end with a REAL PyTorch training loop (Debian's python3-torch).

The issue's "done means": start a real PyTorch script on a machine running
`vigil up` -- no flag, no `vigil run`, no code change, its output simply
redirected to a file as `nohup python3 train.py > train.log` does -- and a
job appears with its framework and its loss curve, and when it ends, its exit
reason. One run ends normally, one crashes with a real torch error; both are
still listed, with the same verdicts, after Vigil restarts (job history).
Environment (set by CTest): VIGIL_BIN, VIGIL_FAKE_NVML, VIGIL_SOURCE_DIR.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_util import private_instance, wait_for  # noqa: E402

VIGIL = os.environ["VIGIL_BIN"]

# A small regression model trained with a DataLoader (one worker process)
# and tqdm, as researchers write it. It trains until the test drops a `stop`
# file next to it (or for at most 3 minutes), then either finishes or, in
# "crash" mode, feeds the model a batch of the wrong shape: a real
# RuntimeError from torch.
TRAIN = r"""
import os, sys, time
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
from tqdm import tqdm

mode, stop = sys.argv[1], sys.argv[2]
torch.manual_seed(0)
x = torch.randn(512, 8)
y = x[:, :1] * 2.0 - x[:, 1:2] + 0.1 * torch.randn(512, 1)
loader = DataLoader(TensorDataset(x, y), batch_size=32, shuffle=True, num_workers=1,
                    persistent_workers=True)
model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
loss_fn = nn.MSELoss()
print(f"model parameters: {sum(p.numel() for p in model.parameters())}", flush=True)
step, deadline = 0, time.time() + 180
for epoch in range(1, 1000):
    bar = tqdm(loader, desc=f"Epoch {epoch}", mininterval=0)
    for xb, yb in bar:
        opt.zero_grad()
        loss = loss_fn(model(xb), yb)
        loss.backward()
        opt.step()
        step += 1
        bar.set_postfix(loss=loss.item(), lr=opt.param_groups[0]["lr"])
        time.sleep(0.05)
    print(f"epoch {epoch}: step={step} train_loss={loss.item():.4f}", flush=True)
    if os.path.exists(stop) or time.time() > deadline:
        break
if mode == "crash":
    model(torch.randn(4, 7))  # RuntimeError: mat1 and mat2 shapes cannot be multiplied
print("done", flush=True)
"""


def torch_available():
    return subprocess.run(["/usr/bin/python3", "-c", "import torch, tqdm"],
                          capture_output=True).returncode == 0


class TorchE2E(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # make test installs python3-torch (scripts/deps.sh test): missing it is
        # an install bug, not a reason to pass.
        assert torch_available(), "python3-torch and python3-tqdm are needed: scripts/deps.sh test"
        cls.home = tempfile.mkdtemp(prefix="vigil-torch-e2e-")
        cls.work = tempfile.mkdtemp(prefix="vigil-torch-work-")
        cls.port, cls.url, cls.env = private_instance(cls.home)
        cls.procs = []
        cls.up()

    @classmethod
    def up(cls):
        p = subprocess.run([VIGIL, "up", "--listen", f"127.0.0.1:{cls.port}"],
                           capture_output=True, text=True, env=cls.env, timeout=60)
        assert p.returncode == 0, p.stdout + p.stderr

    @classmethod
    def down(cls):
        subprocess.run([VIGIL, "down"], env=cls.env, capture_output=True, timeout=60)

    @classmethod
    def tearDownClass(cls):
        for p in cls.procs:
            if p.poll() is None:
                p.kill()
            p.wait()
        cls.down()
        shutil.rmtree(cls.home, ignore_errors=True)
        shutil.rmtree(cls.work, ignore_errors=True)

    def start(self, name, mode):
        """python3 NAME.py > NAME.log 2>&1, as a researcher starts it."""
        script = os.path.join(self.work, name + ".py")
        with open(script, "w") as f:
            f.write(TRAIN)
        stop = os.path.join(self.work, name + ".stop")
        log = open(os.path.join(self.work, name + ".log"), "wb")
        env = {k: v for k, v in os.environ.items() if not k.startswith("VIGIL")}
        p = subprocess.Popen(["/usr/bin/python3", script, mode, stop], stdout=log,
                             stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=self.work,
                             env=env)
        log.close()
        self.procs.append(p)
        return p, stop

    def jobs(self):
        with urllib.request.urlopen(f"{self.url}/api/v1/jobs", timeout=10) as r:
            return {j["name"]: j for j in json.loads(r.read())["data"]["jobs"]}

    def query(self, q):
        qs = urllib.parse.urlencode({"query": q})
        with urllib.request.urlopen(f"{self.url}/api/v1/query?{qs}", timeout=10) as r:
            return json.loads(r.read())["data"]["result"]

    def test_a_real_pytorch_run_from_start_to_its_end(self):
        good, good_stop = self.start("train_regression", "finish")
        bad, bad_stop = self.start("train_broken", "crash")

        # Both appear as running PyTorch jobs, named after their scripts, with
        # their DataLoader worker (started with the first epoch) as a helper.
        def running():
            jobs = self.jobs()
            names = ("train_regression", "train_broken")
            ok = all(jobs.get(n, {}).get("state") == "running" and
                     "helper" in [p["role"] for p in jobs[n]["processes"]] for n in names)
            return jobs if ok else None
        jobs = wait_for(running, 90, "both PyTorch runs to show as running jobs")
        for name in ("train_regression", "train_broken"):
            self.assertEqual(jobs[name]["framework"], "pytorch", jobs[name])
            self.assertEqual(jobs[name]["kind"], "training", jobs[name])
            pids = [p["pid"] for p in jobs[name]["processes"]]
            self.assertIn(good.pid if name == "train_regression" else bad.pid, pids)
        # The DataLoader workers are part of their jobs, not jobs of their own.
        self.assertFalse([n for n in jobs if n not in ("train_regression", "train_broken") and
                          n.startswith("train_")], list(jobs))

        # Its loss curve, read from tqdm's postfix and the epoch lines.
        sel = 'training_loss{job="train_regression"}[10m]'
        series = wait_for(lambda: [s for s in self.query(sel) if len(s["values"]) >= 20], 60,
                          "20 loss values of train_regression")
        values = [float(v) for _, v in series[0]["values"]]
        self.assertTrue(all(0 <= v < 100 for v in values), values[:20])

        # The end: one finishes, one crashes.
        for stop in (good_stop, bad_stop):
            open(stop, "w").close()
        self.assertEqual(good.wait(timeout=120), 0)
        self.assertEqual(bad.wait(timeout=120), 1)

        # With the kernel's process events (docs/jobs.md "Short-lived jobs")
        # the agent sees the exit status: status 0 is `completed`; where the
        # connector is refused (its log says so), nothing explains the end.
        with open(os.path.join(self.home, "logs", "vigil.log")) as f:
            polling = "polling /proc" in f.read()
        finished = "exited" if polling else "completed"

        # The end is known at once (the exit event); the traceback's lines
        # reach the store a moment later, and then decide the reason.
        def ended():
            jobs = self.jobs()
            done = jobs.get("train_regression", {}).get("state") == finished and \
                jobs.get("train_broken", {}).get("state") == "crashed" and \
                jobs["train_broken"].get("reason") == "traceback"
            return jobs if done else None
        jobs = wait_for(ended, 60, f"the finished run to be {finished} and the broken one crashed")
        broken = jobs["train_broken"]
        self.assertEqual(broken["reason"], "traceback", broken)
        self.assertIn("shapes cannot be multiplied", broken["reason_text"])
        tracebacks = [e for e in broken["events"] if e["event"] == "traceback"]
        self.assertEqual(tracebacks[-1]["details"]["exception"], "RuntimeError", broken["events"])
        self.assertIsNotNone(broken["end_time_ms"])
        if finished == "completed":
            self.assertEqual(jobs["train_regression"]["exit_code"], 0)
            self.assertEqual(broken["exit_code"], 1)
        else:
            self.assertIn("no error", jobs["train_regression"]["reason_text"])

        # Vigil restarts: the ended runs are still listed, with their verdicts.
        self.down()
        self.up()
        jobs = wait_for(lambda: (lambda j: j if "train_broken" in j else None)(self.jobs()), 30,
                        "the job history after a restart")
        self.assertEqual(jobs["train_broken"]["state"], "crashed", jobs["train_broken"])
        self.assertEqual(jobs["train_broken"]["framework"], "pytorch")
        self.assertEqual(jobs["train_regression"]["state"], finished)
        self.assertTrue(os.path.exists(os.path.join(self.home, "data", "jobs.json")))


if __name__ == "__main__":
    unittest.main()
