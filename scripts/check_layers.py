#!/usr/bin/env python3
"""Fails when code crosses the agent/server line of DESIGN.md ("Data flow").

Agent-side folders (discover, collect, ship) and server-side folders (ingest,
store, query, diagnose, alert, notify, api) never use each other; both may use
only the shared layers: core, wire, parse, net. Among the shared layers, each
uses only those below it (core < wire < parse; core < wire < net). Only cli/, the
composition root, sees both sides.

Two things are checked, so the rule holds however a dependency is spelled:
  * every `#include "folder/..."` in src/ (tests next to code included);
  * every CMake link between the project's own libraries (vigil_library,
    vigil_test DEPS and target_link_libraries in src/), by the folder that
    defines each library.

Usage: scripts/check_layers.py [SOURCE_DIR]   (exit 1 and a list when broken)
"""
import os
import re
import sys

SHARED = {
    "core": {"core"},
    "wire": {"core", "wire"},
    "parse": {"core", "wire", "parse"},
    "net": {"core", "wire", "net"},
}
AGENT = {"discover", "collect", "ship"}
SERVER = {"ingest", "store", "query", "diagnose", "alert", "notify", "api"}
COMPOSITION = {"cli"}
# env/ (pure environment model) is shared by design; deploy/ is CLI-side.
SHARED_EXTRA = {"env": {"core", "wire", "parse", "env"}}
DEPLOY = {"deploy": {"core", "net", "wire", "parse", "deploy"}}
RULE_TEXT = ("DESIGN.md: agent side (discover, collect, ship) and server side (ingest, store, "
             "query, diagnose, alert, notify, api) share only core, wire, parse and net")


def side(folder):
    if folder in SHARED or folder in SHARED_EXTRA:
        return "shared"
    if folder in AGENT:
        return "agent"
    if folder in SERVER:
        return "server"
    if folder in COMPOSITION:
        return "composition"
    if folder in DEPLOY:
        return "deploy"
    return None


def allowed(src, dst):
    """Whether code in folder `src` may use folder `dst`."""
    if src == dst:
        return True
    if src in SHARED:
        return dst in SHARED[src]
    if src in SHARED_EXTRA:
        return dst in SHARED_EXTRA[src]
    if src in DEPLOY:
        return dst in DEPLOY[src]
    s, d = side(src), side(dst)
    if d is None:
        return True  # not a folder of ours (e.g. a generated header)
    if s == "composition":
        return True
    if d == "shared":
        return True
    return s == d


def top_folder(path, src_root):
    rel = os.path.relpath(path, src_root)
    return rel.split(os.sep)[0]


INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/[^"]+"')


def check_includes(src_root):
    problems = []
    for dirpath, _, files in os.walk(src_root):
        for name in sorted(files):
            if not name.endswith((".h", ".cc")):
                continue
            path = os.path.join(dirpath, name)
            folder = top_folder(path, src_root)
            with open(path, encoding="utf-8", errors="replace") as f:
                for lineno, line in enumerate(f, 1):
                    m = INCLUDE.match(line)
                    if not m:
                        continue
                    dst = m.group(1)
                    if not allowed(folder, dst):
                        problems.append(
                            f"{os.path.relpath(path, os.path.dirname(src_root))}:{lineno}: "
                            f"{side(folder)}-side {folder}/ includes {line.strip()[9:].strip()} "
                            f"({side(dst)}-side {dst}/)")
    return problems


DEFINE = re.compile(r"\bvigil_library\(\s*(vigil_[a-z0-9_]+)")
ADD_LIB = re.compile(r"\badd_library\(\s*(vigil_[a-z0-9_]+)")
CALL = re.compile(r"\b(vigil_library|vigil_test|target_link_libraries)\(([^)]*)\)", re.S)


def cmake_files(src_root):
    for dirpath, _, files in os.walk(src_root):
        for name in sorted(files):
            if name == "CMakeLists.txt" or name.endswith(".cmake"):
                yield os.path.join(dirpath, name)


def check_links(src_root):
    owner = {}  # library -> folder that defines it
    texts = {}
    for path in cmake_files(src_root):
        with open(path, encoding="utf-8") as f:
            text = re.sub(r"#[^\n]*", "", f.read())
        texts[path] = text
        for m in list(DEFINE.finditer(text)) + list(ADD_LIB.finditer(text)):
            owner[m.group(1)] = top_folder(path, src_root)
    problems = []
    for path, text in texts.items():
        folder = top_folder(path, src_root)
        for m in CALL.finditer(text):
            tokens = m.group(2).split()
            if not tokens:
                continue
            target = tokens[0]
            deps = tokens[tokens.index("DEPS") + 1:] if "DEPS" in tokens else tokens[1:]
            for dep in deps:
                dst = owner.get(dep)
                if dst is None or allowed(folder, dst):
                    continue
                problems.append(
                    f"{os.path.relpath(path, os.path.dirname(src_root))}: {target} "
                    f"({side(folder)}-side {folder}/) links {dep} ({side(dst)}-side {dst}/)")
    return problems


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    src_root = os.path.join(os.path.abspath(root), "src")
    unknown = sorted(
        d for d in os.listdir(src_root)
        if os.path.isdir(os.path.join(src_root, d)) and side(d) is None)
    problems = check_includes(src_root) + check_links(src_root)
    problems += [f"src/{d}/: a folder the layering rule does not know; add it to "
                 f"scripts/check_layers.py with its side" for d in unknown]
    if problems:
        print(f"layering: {len(problems)} crossing(s) of the agent/server line ({RULE_TEXT}):")
        for p in problems:
            print("  " + p)
        return 1
    print("layering: no include or link crosses the agent/server line")
    return 0


if __name__ == "__main__":
    sys.exit(main())
