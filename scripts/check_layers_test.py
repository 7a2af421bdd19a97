#!/usr/bin/python3
"""The layering check finds what it must (scripts/check_layers.py): it is run
on small trees made here, one crossing at a time, and on a clean one."""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

CHECK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "check_layers.py")


def tree(files):
    root = tempfile.mkdtemp(prefix="vigil-layers-")
    for path, text in files.items():
        full = os.path.join(root, "src", path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as f:
            f.write(text)
    return root


def check(files):
    root = tree(files)
    try:
        p = subprocess.run([sys.executable, CHECK, root], capture_output=True, text=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return p.returncode, p.stdout


CLEAN = {
    "core/status.h": "#pragma once\n",
    "wire/frame.h": '#include "core/status.h"\n',
    "parse/logs/level.h": '#include "wire/frame.h"\n',
    "net/http_server.h": '#include "core/status.h"\n#include "wire/frame.h"\n',
    "collect/logs/tailer.h": '#include "parse/logs/level.h"\n#include "net/http_server.h"\n',
    "ingest/ingester.h": '#include "parse/logs/level.h"\n#include "store/tsdb/db.h"\n',
    "store/tsdb/db.h": '#include "wire/frame.h"\n',
    "cli/main.cc": '#include "collect/logs/tailer.h"\n#include "ingest/ingester.h"\n',
    "ingest/CMakeLists.txt": "vigil_library(vigil_ingest SOURCES a.cc DEPS vigil_core vigil_tsdb)\n",
    "store/tsdb/CMakeLists.txt": "vigil_library(vigil_tsdb SOURCES a.cc DEPS vigil_core)\n",
    "collect/jobs/CMakeLists.txt": "vigil_library(vigil_jobs SOURCES a.cc DEPS vigil_core)\n",
    "core/CMakeLists.txt": "vigil_library(vigil_core SOURCES a.cc)\n",
}


class CheckLayers(unittest.TestCase):
    def test_a_clean_tree_passes(self):
        rc, out = check(CLEAN)
        self.assertEqual(rc, 0, out)

    def test_server_including_agent_fails(self):
        rc, out = check(dict(CLEAN, **{"ingest/job_store.h": '#include "collect/jobs/x.h"\n'}))
        self.assertEqual(rc, 1)
        self.assertIn("src/ingest/job_store.h:1: server-side ingest/ includes", out)

    def test_agent_including_server_fails(self):
        rc, out = check(dict(CLEAN, **{"ship/t.h": '#include "api/routes.h"\n'}))
        self.assertEqual(rc, 1)
        self.assertIn("agent-side ship/", out)

    def test_a_shared_layer_using_a_side_or_a_higher_layer_fails(self):
        rc, out = check(dict(CLEAN, **{"wire/x.h": '#include "parse/logs/level.h"\n'}))
        self.assertEqual(rc, 1)
        rc, out = check(dict(CLEAN, **{"parse/y.h": '#include "store/tsdb/db.h"\n'}))
        self.assertEqual(rc, 1)

    def test_a_cmake_link_across_the_line_fails(self):
        bad = "vigil_library(vigil_ingest SOURCES a.cc DEPS vigil_core vigil_jobs)\n"
        rc, out = check(dict(CLEAN, **{"ingest/CMakeLists.txt": bad}))
        self.assertEqual(rc, 1)
        self.assertIn("vigil_ingest (server-side ingest/) links vigil_jobs (agent-side collect/)", out)

    def test_an_unknown_folder_must_be_placed(self):
        rc, out = check(dict(CLEAN, **{"mystery/a.h": "#pragma once\n"}))
        self.assertEqual(rc, 1)
        self.assertIn("src/mystery/", out)


if __name__ == "__main__":
    unittest.main()
