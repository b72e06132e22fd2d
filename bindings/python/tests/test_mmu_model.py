"""mmu_model as installed by `pip install ./bindings/python` (`make python-check`): the
verdicts of `mmu-sim check` on the recorded RTL streams, the incremental checker, the
stepped model and its probes, and bad input refused."""

import json
import os
import unittest
import warnings

import mmu_model

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..")
DUT = os.path.join(ROOT, "cosim", "dut.toml")


def fixture(name):
    return os.path.join(ROOT, "testbench", "mmu-sim", "tests", "fixtures", "cosim", f"{name}.jsonl")


def lines(name):
    with open(fixture(name), encoding="utf-8") as f:
        return f.read().splitlines()


RTL = {"line_rate": "cell-per-cycle"}


class Check(unittest.TestCase):
    def test_the_verdicts_of_the_cli(self):
        self.assertEqual(mmu_model.check(DUT, fixture("clean"), **RTL), [])
        first = mmu_model.check(DUT, fixture("bug1"), keep_going=False, **RTL)
        self.assertEqual(len(first), 1)
        self.assertEqual((first[0]["cycle"], first[0]["check"]), (479, "admission"))
        self.assertIn("shared 43 vs T 43", first[0]["expected"])
        bug2 = mmu_model.check(DUT, [json.loads(l) for l in lines("bug2")], **RTL)
        self.assertEqual(bug2[0]["check"], "leaked cells")

    def test_decisions_inferred_from_a_stream_without_them(self):
        undecided = [l for l in lines("clean") if '"event":"admit"' not in l and '"event":"drop"' not in l]
        self.assertEqual(mmu_model.check(DUT, undecided, decisions="inferred", **RTL), [])
        missing = mmu_model.check(DUT, undecided, keep_going=False, **RTL)
        self.assertEqual(missing[0]["check"], "decision missing")
        ck = mmu_model.Checker(DUT, decisions="inferred", **RTL)
        self.assertEqual([d for l in undecided for d in ck.feed(l)] + ck.finish(), [])
        with self.assertRaises(ValueError):
            mmu_model.check(DUT, undecided, decisions="guessed")

    def test_bad_input_is_refused_with_line_and_field(self):
        bad = lines("clean")[:3] + ['{"cycle":5,"event":"arrive","port":9}']
        with self.assertRaises(ValueError) as e:
            mmu_model.check(DUT, bad, **RTL)
        self.assertIn("line 4", str(e.exception))
        with self.assertRaises(ValueError):
            mmu_model.check(DUT, fixture("clean"), mode="sideways")
        with self.assertRaises(ValueError):
            mmu_model.check("no-such-scenario", fixture("clean"))


def with_meta(text, **params):
    """A stream's line with the meta's parameters changed."""
    ev = json.loads(text)
    if ev["event"] == "meta":
        ev["params"].update(params)
    return ev


class Warnings(unittest.TestCase):
    def test_a_meta_that_disagrees_with_the_scenario_warns(self):
        stream = lines("clean")[:40]
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            mmu_model.check(DUT, stream, **RTL)
        self.assertEqual(got, [])
        odd = [with_meta(l, P=8, CELL_BYTES=128) for l in stream]
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            mmu_model.check(DUT, odd, **RTL)
        texts = [str(w.message) for w in got]
        self.assertEqual(len(texts), 2, texts)
        self.assertIn("meta says P 8, the scenario's switch ports is 4", texts[0])
        self.assertIn("CELL_BYTES 128", texts[1])
        self.assertTrue(all(w.category is UserWarning for w in got))
        ck = mmu_model.Checker(DUT, **RTL)
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            ck.feed(with_meta(stream[0], policy="dsh"))
            ck.feed(stream[1])
        self.assertEqual(len(got), 1)
        self.assertIn('meta says policy "dsh", the scenario\'s switch.policy is "sih"',
                      str(got[0].message))


class Payload(unittest.TestCase):
    def test_a_payload_crc_that_changed_is_a_divergence(self):
        evs = [json.loads(l) for l in lines("clean")]
        arrive = next(e for e in evs if e["event"] == "arrive")
        depart = next(e for e in evs if e["event"] == "depart"
                      and (e["flow"], e["seq"]) == (arrive["flow"], arrive["seq"]))
        arrive["crc"] = 0x1234
        depart["crc"] = 0x1234
        self.assertEqual(mmu_model.check(DUT, evs, **RTL), [])
        depart["crc"] = 0x4321
        divs = mmu_model.check(DUT, evs, **RTL)
        self.assertEqual([d["check"] for d in divs], ["payload"])
        self.assertIn(f"flow {arrive['flow']} seq {arrive['seq']} left with payload CRC-32 "
                      "0x00004321; it arrived with 0x00001234", divs[0]["expected"])


class Incremental(unittest.TestCase):
    def test_divergences_come_as_the_events_are_fed(self):
        ck = mmu_model.Checker(DUT, **RTL)
        fed = 0
        for line in lines("bug1"):
            fed += 1
            found = ck.feed(json.loads(line))
            if found:
                break
        self.assertEqual(found[0]["check"], "admission")
        self.assertLess(fed, len(lines("bug1")))
        clean = mmu_model.Checker(DUT, **RTL)
        self.assertEqual([d for l in lines("clean") for d in clean.feed(l)], [])
        self.assertEqual(clean.finish(), [])


class Stepped(unittest.TestCase):
    def test_a_packet_through_the_model(self):
        m = mmu_model.Model(DUT)
        arrive = {"cycle": 0, "event": "arrive", "port": 0, "prio": 3, "flow": 1, "seq": 0,
                  "bytes": 128, "dst": 2, "ncells": 2, "cell": 0}
        out = m.step([arrive])
        kinds = [e["event"] for e in out]
        self.assertEqual(kinds, ["arrive", "admit"])
        self.assertEqual(out[1]["segments"], {"private": 2, "shared": 0, "headroom": 0})
        m.step([{**arrive, "cell": 1}])
        self.assertEqual(m.probe("top.mmu.buffer.total_cells"), 2)
        departed = []
        while m.cycle < 2000 and len(departed) < 2:
            departed += [e for e in m.step() if e["event"] == "depart"]
        self.assertEqual([e["cell"] for e in departed], [0, 1])
        self.assertEqual(m.probe("top.mmu.buffer.total_cells"), 0)
        with self.assertRaises(ValueError):
            m.probe("top.nothing")
        self.assertIn("top.mmu.buffer.total_cells", m.probes())


if __name__ == "__main__":
    unittest.main()
