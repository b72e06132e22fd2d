"""The live checker keeps the first divergence of the streams the model's fixtures recorded
from this RTL (testbench/mmu-sim/tests/fixtures/cosim): run with `make -C cosim unit`."""

import os
import unittest

from live import LiveCheck

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
DUT = os.path.join(ROOT, "cosim", "dut.toml")


def fed(name):
    """A LiveCheck fed the fixture `name` line by line, then finished."""
    live = LiveCheck(DUT)
    path = os.path.join(ROOT, "testbench", "mmu-sim", "tests", "fixtures", "cosim", f"{name}.jsonl")
    with open(path, encoding="utf-8") as f:
        for line in f.read().splitlines():
            live.feed(line)
    live.finish()
    return live


class Live(unittest.TestCase):
    def test_a_clean_stream_has_no_divergence(self):
        self.assertIsNone(fed("clean").first)

    def test_the_first_divergence_is_kept_with_its_message(self):
        live = fed("bug1")
        self.assertEqual((live.first["cycle"], live.first["check"]), (479, "admission"))
        self.assertTrue(live.message().startswith(
            "live checker: divergence at cycle 479: admission (line "), live.message())
        self.assertEqual(fed("bug2").first["check"], "leaked cells")


if __name__ == "__main__":
    unittest.main()
