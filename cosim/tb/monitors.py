"""Monitors: turn tm_top's pins into transactions and events. Each `sample(cycle)` is
called once per cycle in the read-only phase after the rising edge that starts `cycle`,
so it sees that cycle's inputs and the registers as they stand during it."""

from dataclasses import dataclass

import events
from bus import Beat, Vectors, read, split


@dataclass
class Decision:
    port: int
    drop: bool
    reason: str
    private: int
    shared: int
    headroom: int


@dataclass
class OutBeat:
    port: int
    sop: bool
    eop: bool
    queue: int
    src: int
    flow: int
    seq: int
    nbytes: int
    ncells: int
    data: int


@dataclass
class Status:
    t: int
    t_lossy: int
    x_on: int
    shared: int
    lossy_shared: int
    total: int
    free: int
    # [port][prio]
    private_q: list
    shared_q: list
    headroom_q: list
    # reason -> {"packets": [per port], "cells": [per port]}
    drops: dict


class PayloadCrc:
    """Holds each port's start-of-packet event until the packet's last cell has given its
    payload's CRC-32 (`crc`, events.payload_crc); the writer takes events up to the cycle it
    last flushed, which test_tm keeps the longest packet behind."""

    def __init__(self, log, width):
        self.log = log
        self.width = width
        self.open = {}

    def start(self, port, ev):
        self.open[port] = (ev, [])

    def cell(self, port, data, eop):
        if port not in self.open:
            return
        ev, words = self.open[port]
        words.append(data)
        if eop:
            del self.open[port]
            self.log.add({**ev, "crc": events.payload_crc(words, self.width)})

    def close(self):
        """The run stopped: the packets still open go out without a CRC."""
        for ev, _ in self.open.values():
            self.log.add(ev)
        self.open.clear()


class IngressMonitor:
    """The ingress vectors: one Beat per valid beat; an `arrive` event per start, with the
    CRC of the payload driven in."""

    def __init__(self, dut, w, log):
        self.vec = Vectors(dut, {"in_valid": 1, "in_sop": 1, "in_eop": 1, "in_prio": w.prio,
                                 "in_dst": w.port, "in_flow": w.flow, "in_seq": w.seq,
                                 "in_len": w.len, "in_ncells": w.ncells, "in_data": w.data},
                           w.ports)
        self.crc = PayloadCrc(log, w.data)

    def sample(self, cycle):
        out = []
        for p, f in self.vec.valid_ports():
            b = Beat(p, bool(f["in_sop"]), bool(f["in_eop"]), f["in_prio"], f["in_dst"],
                     f["in_flow"], f["in_seq"], f["in_len"], f["in_ncells"], f["in_data"])
            out.append(b)
            if b.sop:
                self.crc.start(p, events.arrive(cycle, p, b.prio, b.flow, b.seq, b.nbytes,
                                                b.dst, b.ncells))
            self.crc.cell(p, b.data, b.eop)
        return out


class DecisionMonitor:
    """The registered decision report: decisions for the starts of packet of cycle - 1."""

    def __init__(self, dut, w):
        self.vec = Vectors(dut, {"rep_valid": 1, "rep_drop": 1, "rep_reason": 1,
                                 "rep_private": w.ncells, "rep_shared": w.ncells,
                                 "rep_headroom": w.ncells}, w.ports)

    def sample(self):
        return [Decision(p, bool(f["rep_drop"]), events.REASONS[f["rep_reason"]],
                         f["rep_private"], f["rep_shared"], f["rep_headroom"])
                for p, f in self.vec.valid_ports()]


class EgressMonitor:
    """The egress vectors: one OutBeat per valid beat; a `depart` event per start, stamped
    with the cycle its first cell was read (one before it is on the output), with the CRC
    of the payload seen leaving."""

    def __init__(self, dut, w, log):
        self.vec = Vectors(dut, {"out_valid": 1, "out_sop": 1, "out_eop": 1,
                                 "out_queue": w.prio, "out_src": w.port, "out_flow": w.flow,
                                 "out_seq": w.seq, "out_len": w.len, "out_ncells": w.ncells,
                                 "out_data": w.data}, w.ports)
        self.crc = PayloadCrc(log, w.data)

    def sample(self, cycle):
        out = []
        for p, f in self.vec.valid_ports():
            b = OutBeat(p, bool(f["out_sop"]), bool(f["out_eop"]), f["out_queue"],
                        f["out_src"], f["out_flow"], f["out_seq"], f["out_len"],
                        f["out_ncells"], f["out_data"])
            out.append(b)
            if b.sop:
                # Stamped at the read: the cell on the output in `cycle` was read in the
                # cycle before (events.py, `depart`).
                self.crc.start(p, events.depart(cycle - 1, p, b.queue, b.flow, b.seq, b.src,
                                                b.ncells))
            self.crc.cell(p, b.data, b.eop)
        return out


class PfcMonitor:
    """pfc_xoff (sent) and pause_in (received): a `pfc` event per edge of either."""

    def __init__(self, dut, w, log):
        self.xoff = dut.pfc_xoff
        self.pause = dut.pause_in
        self.nprio = w.nprio
        self.queues = w.ports * w.nprio
        self.log = log
        self.last = {"sent": 0, "received": 0}

    def _edges(self, cycle, value, direction):
        changed = value ^ self.last[direction]
        for i in range(self.queues):
            if changed >> i & 1:
                self.log.add(events.pfc(cycle, i // self.nprio, i % self.nprio,
                                        bool(value >> i & 1), direction))
        self.last[direction] = value

    def sample(self, cycle):
        """Returns the XOFF vector."""
        xoff = read(self.xoff)
        self._edges(cycle, xoff, "sent")
        self._edges(cycle, read(self.pause), "received")
        return xoff


class StatusMonitor:
    """The stat_* outputs."""

    def __init__(self, dut, w):
        self.dut = dut
        self.w = w

    def occupancy(self):
        """(free, total): the two read every cycle for the conservation check."""
        return read(self.dut.stat_free), read(self.dut.stat_total)

    def per_queue(self, name):
        flat = split(read(getattr(self.dut, name)), self.w.count, self.w.ports * self.w.nprio)
        n = self.w.nprio
        return [flat[p * n:(p + 1) * n] for p in range(self.w.ports)]

    def read(self):
        d = self.dut
        drops = {}
        for reason, tag in zip(events.REASONS, ("headroom", "lossy")):
            drops[reason] = {
                "packets": split(read(getattr(d, f"stat_drop_pkts_{tag}")), 32, self.w.ports),
                "cells": split(read(getattr(d, f"stat_drop_cells_{tag}")), 32, self.w.ports),
            }
        return Status(read(d.stat_t), read(d.stat_t_lossy), read(d.stat_x_on),
                      read(d.stat_shared), read(d.stat_lossy_shared), read(d.stat_total),
                      read(d.stat_free), self.per_queue("stat_grp_private"),
                      self.per_queue("stat_grp_shared"), self.per_queue("stat_grp_headroom"),
                      drops)

    @staticmethod
    def event(cycle, s):
        return events.counters(cycle, t=s.t, t_lossy=s.t_lossy, x_on=s.x_on, shared=s.shared,
                               lossy_shared=s.lossy_shared, total=s.total, free=s.free,
                               private=s.private_q, shared_q=s.shared_q,
                               headroom=s.headroom_q, drops=s.drops)
