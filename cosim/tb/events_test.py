"""The event schema refuses what it should: run with `make -C cosim unit`."""

import os
import tempfile
import unittest
import zlib

import events

GOOD = [
    events.meta(1, None, "cosim/dut.toml", {"P": 4}),
    events.pfc(0, 1, 2, True, "received"),
    events.arrive(0, 0, 3, 7, 0, 200, 3, 4),
    events.admit(0, 0, 7, 0, 2, 2, 0),
    events.drop(0, 1, 8, 0, "lossy_threshold"),
    events.depart(0, 3, 3, 7, 0, 0, 4),
    events.pfc(0, 0, 3, False, "sent"),
    events.counters(0, t=96, t_lossy=48, x_on=88, shared=0, lossy_shared=0, total=0,
                    free=512, private=[[0]], shared_q=[[0]], headroom=[[0]], drops={}),
]


class Schema(unittest.TestCase):
    def test_every_kind_is_valid_and_round_trips_in_order(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "e.jsonl")
            sunk = []
            w = events.EventWriter(path, sink=sunk.append)
            # Added out of order within the cycle; written in the schema's order.
            for ev in reversed(GOOD):
                w.add(ev)
            w.close()
            self.assertEqual(events.load(path), GOOD)
            # The sink (the live checker) gets the file's lines, in its order.
            with open(path, encoding="utf-8") as f:
                self.assertEqual(sunk, f.read().splitlines())

    def refused(self, ev, field):
        with self.assertRaises(events.EventError) as e:
            events.validate(ev)
        self.assertIn(field, str(e.exception))

    def test_missing_wrong_and_unknown_fields_are_named(self):
        ev = dict(GOOD[2])
        del ev["seq"]
        self.refused(ev, "arrive.seq")
        self.refused({**GOOD[2], "port": "0"}, "arrive.port")
        self.refused({**GOOD[1], "pause": 1}, "pfc.pause")
        self.refused({**GOOD[2], "port": True}, "arrive.port")
        self.refused({**GOOD[2], "extra": 1}, "extra")
        self.refused({**GOOD[2], "cycle": -1}, "arrive.cycle")
        self.refused({**GOOD[2], "event": "leave"}, "unknown kind")

    def test_optional_fields_are_accepted_and_typed(self):
        tup = {"src_ip": 1, "dst_ip": 2, "src_port": 3, "dst_port": 4, "proto": 17}
        events.validate({**GOOD[2], "cell": 0, "tuple": tup})
        events.validate({**GOOD[5], "cell": 3})
        events.validate({**GOOD[1], "quanta": 65535, "port_level": True})
        events.validate({**GOOD[0], "tool": "mmu-sim 0.1.0"})
        events.validate({"cycle": 9, "event": "counters", "t": 96, "total": 0})
        self.refused({**GOOD[5], "cell": 4}, "depart.cell")
        self.refused({**GOOD[2], "cell": "0"}, "arrive.cell")
        self.refused({**GOOD[2], "tuple": {**tup, "x": 1}}, "arrive.tuple")
        self.refused({**GOOD[1], "quanta": True}, "pfc.quanta")
        self.refused({**GOOD[4], "reason": "hcf"}, "drop.reason")
        events.validate({**GOOD[4], "reason": "hcf_full"})

    def test_a_payload_crc_is_a_32_bit_integer_on_the_first_cell(self):
        events.validate({**GOOD[2], "crc": 0xFFFFFFFF})
        events.validate({**GOOD[5], "cell": 0, "crc": 0})
        self.refused({**GOOD[2], "crc": 1 << 32}, "arrive.crc")
        self.refused({**GOOD[5], "crc": -1}, "depart.crc")
        self.refused({**GOOD[5], "crc": "0"}, "depart.crc")
        self.refused({**GOOD[5], "cell": 1, "crc": 0}, "depart.crc: on cell 1")

    def test_the_payload_crc_is_zlibs_over_the_cells_words(self):
        # CRC-32 of the 8 bytes 78 56 34 12 f0 de bc 9a (two words, least significant
        # byte first): the value the DPI-C harness checks its crc32_word against.
        words = [0x12345678, 0x9ABCDEF0]
        self.assertEqual(events.payload_crc(words, 32),
                         zlib.crc32(bytes([0x78, 0x56, 0x34, 0x12, 0xF0, 0xDE, 0xBC, 0x9A])))
        self.assertEqual(events.payload_crc(words, 32), 0x86829DEB)
        self.assertNotEqual(events.payload_crc(words[::-1], 32), events.payload_crc(words, 32))

    def test_enumerations_are_checked(self):
        self.refused({**GOOD[4], "reason": "full"}, "drop.reason")
        self.refused({**GOOD[1], "dir": "up"}, "pfc.dir")
        self.refused({**GOOD[3], "segments": {"private": 1, "shared": 1}}, "admit.segments")
        self.refused({**GOOD[3], "segments": {"private": 1, "shared": 1, "headroom": "0"}},
                     "segments.headroom")

    def test_a_cycle_already_written_is_refused(self):
        with tempfile.TemporaryDirectory() as d:
            w = events.EventWriter(os.path.join(d, "e.jsonl"))
            w.add(events.arrive(5, 0, 3, 7, 0, 200, 3, 4))
            w.flush_before(6)
            with self.assertRaises(events.EventError):
                w.add(events.arrive(5, 1, 3, 8, 0, 200, 3, 4))
            w.close()

    def test_load_refuses_decreasing_cycles_and_bad_lines(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "e.jsonl")
            with open(path, "w") as f:
                f.write('{"cycle":3,"event":"arrive","port":0,"prio":3,"flow":7,"seq":0,'
                        '"bytes":200,"dst":3,"ncells":4}\n')
                f.write('{"cycle":2,"event":"arrive","port":0,"prio":3,"flow":7,"seq":1,'
                        '"bytes":200,"dst":3,"ncells":4}\n')
            with self.assertRaises(events.EventError) as e:
                events.load(path)
            self.assertIn(":2:", str(e.exception))
            with open(path, "w") as f:
                f.write("not json\n")
            with self.assertRaises(events.EventError):
                events.load(path)


if __name__ == "__main__":
    unittest.main()
