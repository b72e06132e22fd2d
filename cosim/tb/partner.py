"""Drivers: the upstream link partner of each ingress port, and the downstream pause of
each egress queue."""

from collections import deque

from bus import Beat, Vectors
from traffic import cell_tag

# Cycles between the DUT's XOFF and the partner's reaction (link delay and processing).
REACTION = 8


class LinkPartner:
    """The device upstream of one ingress port. It keeps one host queue per priority, sends
    one packet at a time as cell beats (one per cycle, no gaps), picks the next priority
    round robin among the non-empty ones that are not paused, and sees the DUT's XOFF for
    its port `reaction` cycles late (link delay plus processing). A packet already started
    is always finished."""

    def __init__(self, port, nprio, reaction):
        self.port = port
        self.nprio = nprio
        self.queues = [deque() for _ in range(nprio)]
        self.reaction = reaction
        # XOFF bits of this port as observed in the last `reaction` cycles, oldest first.
        self.seen = deque([0] * reaction, maxlen=reaction)
        self.current = None
        self.idx = 0
        self.last = nprio - 1

    def offer(self, pkt):
        self.queues[pkt.prio].append(pkt)

    def observe_xoff(self, bits):
        """This port's XOFF bits in their low NPRIO bits (higher bits are ignored)."""
        self.seen.append(bits & ((1 << self.nprio) - 1))

    def idle(self):
        return self.current is None and not any(self.queues)

    def backlog(self):
        return sum(len(q) for q in self.queues)

    def beat(self):
        """The beat to drive this cycle, or None."""
        if self.current is None:
            paused = self.seen[0]
            for i in range(1, self.nprio + 1):
                prio = (self.last + i) % self.nprio
                if self.queues[prio] and not paused >> prio & 1:
                    self.current = self.queues[prio].popleft()
                    self.idx = 0
                    self.last = prio
                    break
            else:
                return None
        p = self.current
        b = Beat(self.port, self.idx == 0, self.idx == p.ncells - 1, p.prio, p.dst, p.flow,
                 p.seq, p.nbytes, p.ncells, cell_tag(p.flow, p.seq, self.idx))
        self.idx += 1
        if self.idx == p.ncells:
            self.current = None
        return b


class IngressBus:
    """Packs the partners' beats into tm_top's ingress vectors, once per cycle; a vector
    is written only when it changes."""

    FIELDS = ("in_valid", "in_sop", "in_eop", "in_prio", "in_dst", "in_flow", "in_seq",
              "in_len", "in_ncells", "in_data")

    def __init__(self, dut, w):
        widths = (1, 1, 1, w.prio, w.port, w.flow, w.seq, w.len, w.ncells, w.data)
        self.vec = Vectors(dut, dict(zip(self.FIELDS, widths)), w.ports)
        self.last = None

    def drive(self, beats):
        cols = {name: [0] * self.vec.n for name in self.FIELDS}
        for p, b in enumerate(beats):
            if b is None:
                continue
            for name, v in zip(self.FIELDS, (1, int(b.sop), int(b.eop), b.prio, b.dst, b.flow,
                                             b.seq, b.nbytes, b.ncells, b.data)):
                cols[name][p] = v
        changed = {k: v for k, v in cols.items() if self.last is None or self.last[k] != v}
        self.vec.write(changed)
        self.last = cols


class PauseDriver:
    """The downstream devices: drives pause_in from the mix's pause episodes."""

    def __init__(self, dut, nprio, episodes):
        self.handle = dut.pause_in
        self.nprio = nprio
        self.episodes = episodes
        self.value = 0

    def drive(self, cycle):
        v = 0
        for e in self.episodes:
            if e.start <= cycle < e.end:
                v |= 1 << (e.port * self.nprio + e.prio)
        if v != self.value:
            self.handle.value = v
            self.value = v
