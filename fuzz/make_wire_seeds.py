#!/usr/bin/python3
"""Writes wire-format seed inputs for wire_fuzz, built from docs/wire.md alone
(an independent encoder: the C++ decoder must accept what the spec describes)."""
import os
import struct
import sys
import zlib  # noqa: F401  (zstd is not in the stdlib; seeds are uncompressed)


def varint(n):
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def svarint(n):
    return varint((n << 1) ^ (n >> 63) if n < 0 else n << 1)


def string(s):
    b = s.encode()
    return varint(len(b)) + b


def crc32c(data):
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
    return crc ^ 0xFFFFFFFF


def batch(source, seq, series):
    """series: [(labels dict incl __name__, [(t_ms, value)])]"""
    syms, index = [], {}

    def ref(s):
        if s not in index:
            index[s] = len(syms)
            syms.append(s)
        return varint(index[s])

    base = series[0][1][0][0]
    body = varint(1) + ref("node_load1") + bytes([1]) + ref("1m load average.")
    body += varint(len(series))
    for labels, samples in series:
        items = sorted(labels.items())
        body += varint(len(items))
        for k, v in items:
            body += ref(k) + ref(v)
        body += varint(len(samples))
        prev = base
        for t, v in samples:
            body += svarint(t - prev) + struct.pack("<d", v)
            prev = t
    head = varint(1) + string(source) + varint(seq) + svarint(base)
    head += varint(len(syms)) + b"".join(string(s) for s in syms)
    return head + body


def log_batch(source, seq, streams, version=1):
    """streams: [(source_id, labels dict, start, end, counters, [(time_ns, offset, level, flags, line)])]
    counters: (sampled, filtered, truncated) in version 1, (..., lost_bytes) in version 2"""
    syms, index = [], {}

    def ref(s):
        if s not in index:
            index[s] = len(syms)
            syms.append(s)
        return varint(index[s])

    base = next((recs[0][0] for *_, recs in streams if recs), 0)
    body = varint(len(streams))
    for source_id, labels, start, end, counters, recs in streams:
        body += string(source_id)
        items = sorted(labels.items())
        body += varint(len(items))
        for k, v in items:
            body += ref(k) + ref(v)
        assert len(counters) == (3 if version == 1 else 4)
        body += varint(start) + varint(end) + b"".join(varint(c) for c in counters)
        body += varint(len(recs))
        prev_t, prev_off = base, start
        for t, off, level, flags, line in recs:
            body += svarint(t - prev_t) + varint(off - prev_off) + bytes([level, flags]) + string(line)
            prev_t, prev_off = t, off
    head = varint(version) + string(source) + varint(seq) + svarint(base)
    head += varint(len(syms)) + b"".join(string(s) for s in syms)
    return head + body


def frame(payload, kind=1):
    return b"VGW1" + bytes([kind, 0]) + varint(len(payload)) + payload + struct.pack("<I", crc32c(payload))


def main(out):
    os.makedirs(out, exist_ok=True)
    b = batch("node-a", 7, [
        ({"__name__": "node_load1"}, [(1700000000000, 0.25), (1700000001000, 0.5)]),
        ({"__name__": "DCGM_FI_DEV_GPU_UTIL", "gpu": "0", "UUID": "GPU-1"}, [(1700000000000, 97.0)]),
    ])
    with open(os.path.join(out, "batch.bin"), "wb") as f:
        f.write(b)
    with open(os.path.join(out, "frame.bin"), "wb") as f:
        f.write(frame(b))
    logs = log_batch("node-a", 9, [
        ("file:1:2:ab:0", {"job": "train", "source": "/r/train.log"}, 10, 60, (0, 0, 0), [
            (1700000000000000000, 10, 3, 0, "step 1 loss=2.5"),
            (1700000000500000000, 26, 5, 0, "Traceback (most recent call last):\n  File \"t.py\""),
        ]),
        ("file:1:3:cd:1", {"job": "train"}, 0, 0, (5, 1, 0), []),
    ])
    with open(os.path.join(out, "log_batch.bin"), "wb") as f:
        f.write(logs)
    with open(os.path.join(out, "log_frame.bin"), "wb") as f:
        f.write(frame(logs, kind=2))
    # Version 2: every stream header has lost_bytes; the third stream reports
    # 300 bytes lost unread past offset 60, on a stream of its own.
    logs2 = log_batch("node-a", 10, [
        ("file:1:2:ab:0", {"job": "train", "source": "/r/train.log"}, 10, 60, (0, 0, 0, 0), [
            (1700000000000000000, 10, 3, 0, "step 1 loss=2.5"),
            (1700000000500000000, 26, 5, 0, "Traceback (most recent call last):\n  File \"t.py\""),
        ]),
        ("file:1:3:cd:1", {"job": "train"}, 0, 0, (5, 1, 0, 0), []),
        ("file:1:2:ab:0#lost", {"job": "train", "source": "/r/train.log"}, 60, 360, (0, 0, 0, 300), []),
    ], version=2)
    with open(os.path.join(out, "log_frame_v2.bin"), "wb") as f:
        f.write(frame(logs2, kind=2))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "corpus/wire_fuzz"))
