#!/usr/bin/python3
"""The corpus check (real_corpus_check.py) on small corpora with one fault each."""
import os
import subprocess
import sys
import tempfile
import unittest
import zlib

CHECK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "real_corpus_check.py")


def url_for(split):
    """A source URL whose CRC-32 puts it in `split`."""
    for i in range(100):
        url = f"https://example.org/issue/{i}"
        if (zlib.crc32(url.encode()) % 2 == 1) == (split == "heldout"):
            return url
    raise AssertionError("no URL")


class CorpusCheck(unittest.TestCase):
    def corpus(self, files, round1=()):
        d = tempfile.mkdtemp()
        for split in ("dev", "heldout"):
            os.makedirs(os.path.join(d, split))
        with open(os.path.join(d, "round1.txt"), "w") as f:
            f.write("# round 1\n" + "".join(n + "\n" for n in round1))
        for path, text in files.items():
            with open(os.path.join(d, path), "w") as f:
                f.write(text)
        return d

    def run_check(self, d):
        p = subprocess.run([sys.executable, CHECK, "--corpus", d], capture_output=True, text=True)
        return p.returncode, p.stdout

    def excerpt(self, split, name, body, gold, url=None):
        url = url or url_for(split)
        return {f"{split}/{name}.log": f"#vigil source: {url}\n#vigil family: x\n{body}",
                f"{split}/{name}.gold.jsonl": gold}

    def test_a_good_corpus_passes(self):
        d = self.corpus({**self.excerpt("dev", "a", "step 1 loss: 2.5\n",
                                        '{"line": 1, "metric": "loss", "value": 2.5}\n'),
                         **self.excerpt("heldout", "b", "Traceback (most recent call last):\n",
                                        '{"event": "traceback"}\n')})
        rc, out = self.run_check(d)
        self.assertEqual(rc, 0, out)

    def test_each_fault_is_reported(self):
        cases = {
            "is not printed on line": ("dev", "step 1 loss: 2.5\n",
                                       '{"line": 1, "metric": "loss", "value": 2.4}\n', None),
            "outside the body": ("dev", "loss: 2.5\n",
                                 '{"line": 3, "metric": "loss", "value": 2.5}\n', None),
            "known kind": ("dev", "x\n", '{"event": "explosion"}\n', None),
            "crc32 of its source puts it in heldout": ("dev", "x\n", '{"event": "xid"}\n',
                                                       url_for("heldout")),
            "no metric and no event": ("dev", "x\n", "\n", None),
        }
        for want, (split, body, gold, url) in cases.items():
            with self.subTest(want):
                rc, out = self.run_check(self.corpus(self.excerpt(split, "a", body, gold, url)))
                self.assertEqual(rc, 1, out)
                self.assertIn(want, out)

    def test_round1_excerpts_keep_their_split_but_not_a_shared_url(self):
        url = url_for("heldout")
        files = {**self.excerpt("dev", "old", "x\n", '{"event": "xid"}\n', url)}
        rc, out = self.run_check(self.corpus(files, round1=["old"]))
        self.assertEqual(rc, 0, out)
        files.update(self.excerpt("heldout", "new", "y\n", '{"event": "xid"}\n', url))
        rc, out = self.run_check(self.corpus(files, round1=["old"]))
        self.assertEqual(rc, 1, out)
        self.assertIn("in both splits", out)


if __name__ == "__main__":
    unittest.main()
