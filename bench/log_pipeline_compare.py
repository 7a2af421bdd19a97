#!/usr/bin/env python3
"""End-to-end log pipeline benchmark: tail -> parse -> ship -> store.

Three systems on the same genlog file, runs alternating, medians reported
(bench/RESULTS.md "Logs"):
  vigil    the real binary, `vigil up --foreground`: discovery, tailer, parsing,
           in-process ship, log store with a WAL fsync per batch. Its per-source
           rate limit (10,000 lines/s) samples a burst away, so it is done when
           stored + sampled + filtered lines reach N.
  logpipe  bench/logpipe_bench: the same path in one process, rate limit off,
           every line stored, training metrics read from every line into
           training_* series (as `vigil up` does).
  logonly  logpipe_bench with TRAINING_METRICS=0: the log path alone, the same
           work as rsyslog's (read, parse, store) plus indexing.
  rsyslog  imfile (inotify) -> omfile, tuned for throughput.

  bench/log_pipeline_compare.py --vigil build-bench/src/cli/vigil --input FILE \
      [--runs 3] [--work bench/out/logs/pipe] [--perf] [--systems vigil,logpipe,rsyslog]
      [--base-vigil OLD/vigil --base-logpipe OLD/logpipe_bench]

With --base-vigil / --base-logpipe, the systems vigil-base, logpipe-base and
logonly-base (the same runs with those binaries) join the rotation, so a
change is measured before and after in one run, under the same load.

Each run, for each system:
  1. A fresh directory. The log file starts with the input's first line; a
     process holds it open for writing as its stdout (`sh -c 'exec >>F; sleep'`),
     which is how Vigil's discovery finds a training job's log.
  2. Start the system; wait until that first line is delivered (Vigil: its
     source in /api/v1/logs/sources counts 1 line; rsyslog: 1 line in the output).
  3. Read the process's CPU time (utime + stime from /proc/PID/stat) and the
     clock, append the other N-1 lines to the file as fast as possible (one
     burst: the whole backlog lands at once), and poll every 0.1 s until all
     N lines are stored (Vigil: the source's `lines`; rsyslog: newlines in the
     output file). Read CPU and the clock again; peak RSS is VmHWM.
Vigil runs in its own PID namespace (unshare --pid --mount-proc) so its
discovery sees only the writer, not other people's logs on a shared machine.
"""
import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import time
import urllib.parse
import urllib.request

CLK_TCK = os.sysconf("SC_CLK_TCK")


def log(msg):
    print("[%s] %s" % (time.strftime("%H:%M:%S", time.gmtime()), msg), file=sys.stderr, flush=True)


def cpu_secs(pid):
    with open("/proc/%d/stat" % pid) as f:
        rest = f.read().rsplit(")", 1)[1].split()
    return (int(rest[11]) + int(rest[12])) / CLK_TCK  # utime, stime (fields 14, 15)


def status_kib(pid, key):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def wait_for(pred, timeout, what):
    deadline = time.time() + timeout
    while time.time() < deadline:
        v = pred()
        if v:
            return v
        time.sleep(0.1)
    raise RuntimeError("timed out waiting for " + what)


def append_rest(src, dst):
    """Appends all but the first line of src to dst, in 1 MiB writes."""
    with open(src, "rb") as fin, open(dst, "ab") as fout:
        fin.readline()
        while True:
            b = fin.read(1 << 20)
            if not b:
                break
            fout.write(b)


def start_holder(path):
    # The writer a discovery looks for: stdout redirected to the log file.
    return subprocess.Popen(["sh", "-c", 'exec >>"$0"; exec sleep 3600', path])


def stop(proc, pid=None):
    try:
        os.kill(pid or proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


# ------------------------------------------------------------------ Vigil
def vigil_lines(port, path):
    try:
        with urllib.request.urlopen("http://127.0.0.1:%d/api/v1/logs/sources" % port, timeout=5) as r:
            data = json.load(r)
    except OSError:
        return None
    stored = accounted = 0
    srcs = data.get("data", [])
    for s in srcs:
        if s.get("labels", {}).get("source") == path:
            stored += int(s.get("lines", 0))
            accounted += int(s.get("lines", 0)) + int(s.get("sampled_lines", 0)) + \
                int(s.get("filtered_lines", 0))
    return stored, accounted, len(srcs)


def run_vigil(args, run_dir, n_lines, perf_out=None):
    os.makedirs(run_dir)
    path = os.path.join(run_dir, "train.log")
    with open(args.input, "rb") as fin, open(path, "wb") as fout:
        fout.write(fin.readline())
    port = free_port()
    env = dict(os.environ, VIGIL_NVML_LIBRARY="/nonexistent")
    # Rate limit off (config.json), so the binary stores every line of the burst
    # as rsyslog does.
    os.makedirs(os.path.join(run_dir, "home"))
    with open(os.path.join(run_dir, "home", "config.json"), "w") as f:
        json.dump({"logs": {"lines_per_second": 0}}, f)
    # The holder and Vigil share a fresh PID namespace: discovery sees the holder only.
    script = ('sh -c \'exec >>"$0" 2>/dev/null; exec sleep 3600\' "$1" & exec "$2" up --foreground '
              '--home "$3" --listen "127.0.0.1:$4"')
    vlog = open(os.path.join(run_dir, "vigil.out"), "wb")
    proc = subprocess.Popen(["unshare", "--pid", "--fork", "--kill-child", "--mount-proc", "bash", "-c", script,
                             "bash", path, os.path.abspath(args.vigil),
                             os.path.join(run_dir, "home"), str(port)],
                            env=env, stdout=vlog, stderr=subprocess.STDOUT)
    try:
        def vigil_pid():
            out = subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True, text=True).stdout
            for p in out.split():
                try:
                    with open("/proc/%s/comm" % p) as f:
                        if f.read().strip() == "vigil":
                            return int(p)
                except OSError:
                    pass
            return None
        pid = wait_for(vigil_pid, 30, "the vigil process")
        wait_for(lambda: (vigil_lines(port, path) or (0, 0, 0))[1] >= 1, 60, "vigil to store line 1")
        perf = None
        if perf_out:
            perf = subprocess.Popen(["perf", "record", "-F", "999", "-g", "-p", str(pid), "-o", perf_out],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(0.5)
        rss0 = status_kib(pid, "VmRSS")
        c0, t0 = cpu_secs(pid), time.time()
        append_rest(args.input, path)
        t_written = time.time()
        # The binary's rate limit samples a burst away: done when every line is
        # stored, sampled or filtered (all counted in /api/v1/logs/sources).
        wait_for(lambda: (vigil_lines(port, path) or (0, 0, 0))[1] >= n_lines, args.timeout,
                 "vigil to account for %d lines" % n_lines)
        t1, c1 = time.time(), cpu_secs(pid)
        if perf:
            perf.send_signal(signal.SIGINT)
            perf.wait()
        got, accounted, nsrc = vigil_lines(port, path)
        hwm, rss = status_kib(pid, "VmHWM"), status_kib(pid, "VmRSS")
        stop(proc, pid)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        vlog.close()
    if accounted != n_lines:
        raise RuntimeError("vigil accounted for %d lines, expected %d" % (accounted, n_lines))
    return {"wall_s": t1 - t0, "cpu_s": c1 - c0, "hwm_kib": hwm, "rss_kib": rss,
            "write_s": t_written - t0, "sources": nsrc, "stored": got, "rss_before_kib": rss0}


# ------------------------------------------- Vigil's log path, rate limit off
def run_pipe(args, run_dir, n_lines, perf_out=None, env=None):
    os.makedirs(run_dir)
    path = os.path.join(run_dir, "train.log")
    with open(args.input, "rb") as fin, open(path, "wb") as fout:
        fout.write(fin.readline())
    holder = start_holder(path)
    state = os.path.join(run_dir, "state")
    out = open(os.path.join(run_dir, "logpipe.out"), "wb")
    proc = subprocess.Popen([args.logpipe, path, state], stdout=out, stderr=subprocess.STDOUT,
                            env=dict(os.environ, **(env or {})))
    progress = os.path.join(state, "progress")

    def stored():
        try:
            with open(progress) as f:
                return int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            return 0
    try:
        wait_for(lambda: stored() >= 1, 60, "logpipe_bench to store line 1")
        pid = proc.pid
        rss0 = status_kib(pid, "VmRSS")
        perf = None
        if perf_out:
            perf = subprocess.Popen(["perf", "record", "-F", "999", "-g", "-p", str(pid), "-o", perf_out],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(0.5)
        c0, t0 = cpu_secs(pid), time.time()
        append_rest(args.input, path)
        t_written = time.time()
        wait_for(lambda: stored() >= n_lines, args.timeout, "logpipe_bench to store %d lines" % n_lines)
        t1, c1 = time.time(), cpu_secs(pid)
        if perf:
            perf.send_signal(signal.SIGINT)
            perf.wait()
        hwm, rss = status_kib(pid, "VmHWM"), status_kib(pid, "VmRSS")
        got = stored()
        stop(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        holder.kill()
        holder.wait()
        out.close()
    if got != n_lines:
        raise RuntimeError("logpipe_bench stored %d lines, expected %d" % (got, n_lines))
    return {"wall_s": t1 - t0, "cpu_s": c1 - c0, "hwm_kib": hwm, "rss_kib": rss,
            "write_s": t_written - t0, "rss_before_kib": rss0}


# ---------------------------------------------------------------- rsyslog
RSYSLOG_CONF = """
global(workDirectory="{work}" maxMessageSize="64k"
       parser.escapeControlCharactersOnReceive="off")
module(load="imfile" mode="inotify")
template(name="raw" type="string" string="%msg%\\n")
input(type="imfile" file="{inp}" tag="train" ruleset="out" freshStartTail="off")
ruleset(name="out" queue.type="LinkedList" queue.size="500000"
        queue.dequeueBatchSize="4096" queue.workerThreads="1") {{
  action(type="omfile" file="{out}" template="raw" asyncWriting="on"
         ioBufferSize="4m" flushOnTXEnd="off" flushInterval="1")
}}
"""


class NewlineCounter:
    """Counts newlines of a growing file, reading only what is new."""

    def __init__(self, path):
        self.path, self.pos, self.count = path, 0, 0

    def poll(self):
        try:
            with open(self.path, "rb") as f:
                f.seek(self.pos)
                while True:
                    b = f.read(1 << 22)
                    if not b:
                        break
                    self.count += b.count(b"\n")
                    self.pos += len(b)
        except FileNotFoundError:
            pass
        return self.count


def run_rsyslog(args, run_dir, n_lines):
    os.makedirs(os.path.join(run_dir, "work"))
    inp = os.path.join(run_dir, "train.log")
    out = os.path.join(run_dir, "out.log")
    with open(args.input, "rb") as fin, open(inp, "wb") as fout:
        fout.write(fin.readline())
    conf = os.path.join(run_dir, "rsyslog.conf")
    with open(conf, "w") as f:
        f.write(RSYSLOG_CONF.format(work=os.path.join(run_dir, "work"), inp=inp, out=out))
    holder = start_holder(inp)  # same writer setup as for Vigil (rsyslog does not need it)
    rlog = open(os.path.join(run_dir, "rsyslogd.out"), "wb")
    proc = subprocess.Popen(["rsyslogd", "-n", "-f", conf, "-i", os.path.join(run_dir, "rsyslogd.pid")],
                            stdout=rlog, stderr=subprocess.STDOUT)
    try:
        counter = NewlineCounter(out)
        wait_for(lambda: counter.poll() >= 1, 60, "rsyslog to write line 1")
        pid = proc.pid
        rss0 = status_kib(pid, "VmRSS")
        c0, t0 = cpu_secs(pid), time.time()
        append_rest(args.input, inp)
        t_written = time.time()
        wait_for(lambda: counter.poll() >= n_lines, args.timeout, "rsyslog to write %d lines" % n_lines)
        t1, c1 = time.time(), cpu_secs(pid)
        hwm, rss = status_kib(pid, "VmHWM"), status_kib(pid, "VmRSS")
        stop(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        holder.kill()
        holder.wait()
        rlog.close()
    got = NewlineCounter(out).poll()
    if got != n_lines:
        raise RuntimeError("rsyslog wrote %d lines, expected %d" % (got, n_lines))
    return {"wall_s": t1 - t0, "cpu_s": c1 - c0, "hwm_kib": hwm, "rss_kib": rss,
            "write_s": t_written - t0, "out_bytes": os.path.getsize(out), "rss_before_kib": rss0}


def perf_report(perf_data, out_txt):
    rep = subprocess.run(["perf", "report", "-i", perf_data, "--no-children", "--percent-limit", "0.7",
                          "--sort", "dso,symbol", "--stdio", "-g", "none"],
                         capture_output=True, text=True).stdout
    with open(out_txt, "w") as f:
        f.write(rep)
    log("perf report: %s" % out_txt)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vigil", required=True, help="the vigil binary")
    ap.add_argument("--logpipe", help="bench/logpipe_bench (default: beside --vigil's build)")
    ap.add_argument("--input", required=True, help="genlog output (N lines)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--work", default="bench/out/logs/pipe")
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--perf", action="store_true", help="one extra run of each Vigil variant under perf record")
    ap.add_argument("--systems", default="vigil,logpipe,logonly,rsyslog")
    ap.add_argument("--clean", action="store_true",
                    help="delete each run's directory (log copy, store) once measured: saves disk")
    ap.add_argument("--base-vigil", help="a baseline vigil binary: adds vigil-base to --systems")
    ap.add_argument("--base-logpipe", help="a baseline logpipe_bench: adds logpipe-base, logonly-base")
    args = ap.parse_args()
    args.work = os.path.abspath(args.work)  # paths go to Vigil, which wants them absolute
    args.input = os.path.abspath(args.input)
    if not args.logpipe:
        args.logpipe = os.path.join(os.path.dirname(os.path.abspath(args.vigil)), "../../bench/logpipe_bench")
    systems = args.systems.split(",")
    def run_logonly(args, run_dir, n_lines, perf_out=None):
        return run_pipe(args, run_dir, n_lines, perf_out, env={"TRAINING_METRICS": "0"})
    runners = {"vigil": run_vigil, "logpipe": run_pipe, "logonly": run_logonly, "rsyslog": run_rsyslog}

    def with_binaries(runner, vigil, logpipe):
        def run(args, run_dir, n_lines, perf_out=None):
            return runner(argparse.Namespace(**dict(vars(args), vigil=vigil, logpipe=logpipe)), run_dir,
                          n_lines, perf_out)
        return run
    # Each baseline system runs right after its counterpart.
    for name, binary in (("vigil", args.base_vigil), ("logpipe", args.base_logpipe),
                         ("logonly", args.base_logpipe)):
        if binary and name in systems:
            runners[name + "-base"] = with_binaries(runners[name], os.path.abspath(args.base_vigil or args.vigil),
                                                    os.path.abspath(args.base_logpipe or args.logpipe))
            systems.insert(systems.index(name) + 1, name + "-base")

    subprocess.run(["rm", "-rf", args.work], check=True)
    os.makedirs(args.work)
    with open(args.input, "rb") as f:
        n_lines = sum(b.count(b"\n") for b in iter(lambda: f.read(1 << 22), b""))
    in_bytes = os.path.getsize(args.input)
    load0 = " ".join(open("/proc/loadavg").read().split()[:3])
    log("input %s: %d lines, %d bytes; load %s" % (args.input, n_lines, in_bytes, load0))
    results = {name: [] for name in systems}
    for i in range(1, args.runs + 1):
        for name in systems:
            run_dir = os.path.join(args.work, "%s.%d" % (name, i))
            r = runners[name](args, run_dir, n_lines)
            log("%s run %d: %s" % (name, i, json.dumps(r)))
            results[name].append(r)
            if args.clean:
                subprocess.run(["rm", "-rf", run_dir], check=True)
    if args.perf:
        for name in ("vigil", "logpipe", "logonly"):
            if name not in systems:
                continue
            perf_data = os.path.join(args.work, name + ".perf.data")
            r = runners[name](args, os.path.join(args.work, name + ".perf"), n_lines, perf_out=perf_data)
            log("%s under perf (not in the medians): %s" % (name, json.dumps(r)))
            perf_report(perf_data, os.path.join(args.work, name + ".perf.txt"))

    with open(os.path.join(args.work, "results.json"), "w") as f:
        json.dump(results, f, indent=1)
    print("\ninput: %s (%d lines, %d bytes), %d runs each, alternating; load before %s, after %s" % (
        args.input, n_lines, in_bytes, args.runs, load0, " ".join(open("/proc/loadavg").read().split()[:3])))
    print("| system | lines stored | wall s | lines/s (wall) | CPU s | lines per CPU-s | CPU-s per M lines | RSS before MiB | peak RSS MiB (runs) |")
    print("|---|---|---|---|---|---|---|---|---|")
    med = {}
    for name, rs in results.items():
        wall = statistics.median(r["wall_s"] for r in rs)
        cpu = statistics.median(r["cpu_s"] for r in rs)
        hwm = statistics.median(r["hwm_kib"] for r in rs) / 1024
        stored = statistics.median(r.get("stored", n_lines) for r in rs)
        med[name] = n_lines / cpu
        rss0 = statistics.median(r["rss_before_kib"] for r in rs) / 1024
        print("| %s | %d | %.2f | %.0f | %.2f | %.0f | %.2f | %.1f | %.1f (%s) |" % (
            name, stored, wall, n_lines / wall, cpu, n_lines / cpu, cpu / n_lines * 1e6, rss0, hwm,
            ", ".join("%.1f" % (r["hwm_kib"] / 1024) for r in rs)))
    for name in ("vigil", "logpipe", "logonly", "vigil-base", "logpipe-base", "logonly-base"):
        if name in med and "rsyslog" in med:
            print("%s / rsyslog, lines per CPU-second (medians): %.2fx" % (name, med[name] / med["rsyslog"]))


if __name__ == "__main__":
    main()
