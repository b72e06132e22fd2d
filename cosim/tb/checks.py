"""The testbench's own checks, independent of the model: cells conserved, per-flow order
and integrity at egress, no lossless drop, and the SIH rules a decision must respect given
the DUT's registered counters. They record failures and let the run go on (the event file
then covers the whole run); `summary()` lists them."""

from collections import defaultdict
from dataclasses import dataclass

import events
from dut_config import NPRIO
from traffic import cell_tag

# Failures kept per check, for the summary.
KEEP = 5


@dataclass
class Pending:
    """A start of packet waiting for its decision (reported one cycle later)."""
    cycle: int
    beat: object
    status: object


class Checks:
    def __init__(self, cfg, log):
        self.cfg = cfg
        self.log = log
        self.failures = defaultdict(list)
        self.counts = defaultdict(int)
        self.first_cycle = {}
        # Starts of packet of the previous cycle, by port, and every beat of that cycle.
        self.sop_prev = {}
        self.beats_prev = []
        # Whether the packet in progress on each ingress port was admitted.
        self.keep = [False] * cfg.ports
        # Admitted packets not yet fully departed: (flow, seq) -> (src, prio, ncells, bytes).
        self.admitted = {}
        self.last_seq = {}
        # Packet in progress on each egress port: [flow, seq, next cell index, ncells].
        self.tx = [None] * cfg.ports
        self.written = 0
        self.charged = 0
        self.departed = 0
        self.drops = {r: {"packets": [0] * cfg.ports, "cells": [0] * cfg.ports}
                      for r in events.REASONS}
        self.stats = defaultdict(int)

    def fail(self, check, cycle, message):
        self.counts[check] += 1
        self.first_cycle.setdefault(check, cycle)
        if len(self.failures[check]) < KEEP:
            self.failures[check].append(f"cycle {cycle}: {message}")

    # --- ingress ------------------------------------------------------------------------

    def ingress(self, cycle, beats, status):
        """The beats of `cycle`; `status` is read only when a start of packet is among them."""
        self.beats_prev = beats
        self.sop_prev = {b.port: Pending(cycle, b, status) for b in beats if b.sop}

    def decisions(self, cycle, decisions, xoff):
        """The decisions reported in `cycle` (for the starts of cycle - 1) and the XOFF
        vector of `cycle`, which holds the XOFF those decisions set."""
        seen = set()
        for d in decisions:
            pend = self.sop_prev.get(d.port)
            if pend is None:
                self.fail("protocol", cycle, f"port {d.port}: a decision without a start")
                continue
            seen.add(d.port)
            self._decision(pend, d, xoff)
        for port, pend in self.sop_prev.items():
            if port not in seen:
                self.fail("protocol", pend.cycle, f"port {port}: a start with no decision")
        # Cells written at the end of cycle - 1: starts just decided, later cells by the
        # decision of their packet.
        decided = {d.port: not d.drop for d in decisions}
        for b in self.beats_prev:
            if b.sop:
                self.keep[b.port] = decided.get(b.port, False)
            if self.keep[b.port]:
                self.written += 1

    def _decision(self, pend, d, xoff):
        cfg, b, s, c = self.cfg, pend.beat, pend.status, pend.cycle
        lossless = b.prio in cfg.lossless
        q = (b.port, b.prio)
        where = f"port {b.port} prio {b.prio} flow {b.flow} seq {b.seq} ({b.ncells} cells)"
        if d.drop:
            self.log.add(events.drop(c, b.port, b.flow, b.seq, d.reason))
            self.drops[d.reason]["packets"][b.port] += 1
            self.drops[d.reason]["cells"][b.port] += b.ncells
            if lossless:
                self.fail("no lossless drop", c, f"{where} dropped ({d.reason})")
            if (d.reason == "headroom_full") != lossless:
                self.fail("drop reason", c, f"{where}: reason {d.reason}")
        else:
            self.log.add(events.admit(c, b.port, b.flow, b.seq, d.private, d.shared,
                                      d.headroom))
            self.admitted[(b.flow, b.seq)] = (b.port, b.prio, b.ncells, b.nbytes)
            self.charged += b.ncells
            if d.private + d.shared + d.headroom != b.ncells:
                self.fail("segments", c, f"{where}: segments {d.private}+{d.shared}+"
                                         f"{d.headroom}")
        qp, qs, qh = (s.private_q[q[0]][q[1]], s.shared_q[q[0]][q[1]],
                      s.headroom_q[q[0]][q[1]])
        phi = cfg.phi if lossless else 0
        t = s.t if lossless else s.t_lossy
        # Case 1 fills private first; case 2 only below T (Eq. 2); case 3 within eta.
        if d.private != min(b.ncells, max(phi - qp, 0)) and not d.drop:
            self.fail("private first", c, f"{where}: {d.private} private cells with "
                                          f"private {qp} of phi {phi}")
        if d.shared and qs >= t:
            self.fail("DT threshold", c, f"{where}: {d.shared} cells to shared with the "
                                         f"queue's shared {qs} >= T {t}")
        if d.headroom and (not lossless or qh + d.headroom > cfg.eta):
            self.fail("headroom", c, f"{where}: {d.headroom} cells to headroom holding {qh}"
                                     f" of eta {cfg.eta}")
        if lossless and (d.headroom or d.drop) and not xoff >> (b.port * NPRIO + b.prio) & 1:
            self.fail("XOFF", c + 1, f"{where} went to headroom but XOFF is low")
        self.stats["headroom packets"] += bool(d.headroom)
        self.stats["shared packets"] += bool(d.shared)

    # --- egress -------------------------------------------------------------------------

    def egress(self, cycle, beats):
        for b in beats:
            self.departed += 1
            key = (b.flow, b.seq)
            if b.sop:
                if self.tx[b.port] is not None:
                    self.fail("egress framing", cycle, f"port {b.port}: start inside a packet")
                info = self.admitted.get(key)
                if info is None:
                    self.fail("conservation", cycle, f"port {b.port}: flow {b.flow} seq "
                                                     f"{b.seq} departs but was not admitted "
                                                     f"or already departed")
                    self.tx[b.port] = None
                    continue
                src, prio, ncells, nbytes = info
                if (b.queue, b.src, b.ncells, b.nbytes) != (prio, src, ncells, nbytes):
                    self.fail("descriptor", cycle, f"port {b.port}: flow {b.flow} seq {b.seq}"
                                                   f" queue/src/ncells/len {b.queue}/{b.src}/"
                                                   f"{b.ncells}/{b.nbytes}, admitted as "
                                                   f"{prio}/{src}/{ncells}/{nbytes}")
                last = self.last_seq.get(b.flow, -1)
                if b.seq <= last:
                    self.fail("flow order", cycle, f"flow {b.flow}: seq {b.seq} after {last}")
                self.last_seq[b.flow] = b.seq
                self.tx[b.port] = [b.flow, b.seq, 0, b.ncells]
            t = self.tx[b.port]
            if t is None or (t[0], t[1]) != key:
                self.fail("egress framing", cycle, f"port {b.port}: cell of flow {b.flow} seq "
                                                   f"{b.seq} outside its packet")
                continue
            if b.data != cell_tag(b.flow, b.seq, t[2]):
                self.fail("cell data", cycle, f"port {b.port}: flow {b.flow} seq {b.seq} cell "
                                              f"{t[2]} holds {b.data:#010x}, expected "
                                              f"{cell_tag(b.flow, b.seq, t[2]):#010x}")
            last_cell = t[2] == t[3] - 1
            if b.eop != last_cell:
                self.fail("egress framing", cycle, f"port {b.port}: eop={b.eop} at cell {t[2]}"
                                                   f" of {t[3]}")
            t[2] += 1
            if last_cell:
                self.tx[b.port] = None
                self.admitted.pop(key, None)

    # --- buffer -------------------------------------------------------------------------

    def occupancy(self, cycle, free, total):
        """Free-list count and charged cells at the start of `cycle` against the counts of
        cells written (cycles < `cycle`), charged, and read out (on the output up to now)."""
        want_free = self.cfg.n_cells - self.written + self.departed
        if free != want_free:
            self.fail("conservation", cycle, f"free list holds {free} pointers, expected "
                                             f"{want_free} ({self.cfg.n_cells} cells - "
                                             f"{self.written} written + {self.departed} read)")
        want_total = self.charged - self.departed
        if total != want_total:
            self.fail("accounting", cycle, f"cells charged {total}, expected {want_total}")

    def drained(self):
        return not self.admitted and all(t is None for t in self.tx)

    def final(self, cycle, s, xoff):
        """After the drain: the buffer empty, every counter back to zero, PFC off, and the
        DUT's drop counters equal to the drops reported."""
        if s.free != self.cfg.n_cells:
            self.fail("conservation", cycle, f"drained, but {self.cfg.n_cells - s.free} "
                                             f"pointers are missing from the free list")
        for name, levels in (("private", s.private_q), ("shared", s.shared_q),
                             ("headroom", s.headroom_q)):
            if any(any(row) for row in levels):
                self.fail("accounting", cycle, f"drained, but {name} counters {levels}")
        if s.shared or s.lossy_shared or s.total:
            self.fail("accounting", cycle, f"drained, but totals shared {s.shared} lossy "
                                           f"{s.lossy_shared} charged {s.total}")
        if xoff:
            self.fail("XOFF", cycle, f"drained, but XOFF is still {xoff:#x}")
        if s.drops != self.drops:
            self.fail("drop counters", cycle, f"DUT counts {s.drops}, reported {self.drops}")

    def failed(self):
        """The failed checks, the one that failed first first (within a cycle, the one found
        first: the live model checker's divergence comes after the testbench's own checks of
        its cycle): (check, times, first ones)."""
        order = sorted(self.counts, key=lambda c: self.first_cycle[c])
        return [(c, self.counts[c], self.failures[c]) for c in order]

    def summary(self):
        lines = []
        for check, times, first in self.failed():
            lines.append(f"FAILED {check}: {times} times; first:")
            lines += [f"  {m}" for m in first]
        return lines
