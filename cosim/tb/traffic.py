"""The seeded traffic mix: flows, their packets, and the pause episodes of the egress side.

Everything random is drawn from one `random.Random(seed)` in a fixed order, so a seed
gives the same stimulus, and so the same event file, every time.
"""

from dataclasses import dataclass, field


@dataclass
class Flow:
    """Packets from ingress port `src` to egress port `dst` at priority `prio`, offered at
    `load` cells per cycle while the flow is on. A bursty flow is on for `on` cycles, then
    off for `off` cycles, from cycle `phase`."""
    fid: int
    src: int
    dst: int
    prio: int
    load: float
    on: int = 0
    off: int = 0
    phase: int = 0
    next_seq: int = 0

    def active(self, cycle):
        if self.off == 0:
            return True
        return (cycle - self.phase) % (self.on + self.off) < self.on


@dataclass
class Packet:
    flow: int
    seq: int
    src: int
    dst: int
    prio: int
    nbytes: int
    ncells: int


@dataclass
class PauseEpisode:
    """The egress queue (port, prio) is paused by its downstream in [start, end)."""
    port: int
    prio: int
    start: int
    end: int


@dataclass
class Mix:
    flows: list
    pauses: list = field(default_factory=list)


def cell_tag(flow, seq, idx):
    """The DATA_W-bit word the testbench puts in cell `idx` of a packet: readable in a
    waveform as flow (8 bits), seq (20 bits), cell index (4 bits)."""
    return (flow & 0xFF) << 24 | (seq & 0xFFFFF) << 4 | (idx & 0xF)


def default_mix(cfg, rng, gen_cycles):
    """Fan-in onto port 3 from ports 0..2 at lossless and lossy priorities (on/off, so the
    buffer fills and drains and PFC turns on and off), cross traffic between the other
    ports, and random pause episodes on egress queues."""
    lossless = list(cfg.lossless)
    lossy = [p for p in range(4) if p not in cfg.lossless]
    hot = 3
    specs = [
        # src, dst, prio, load, bursty
        (0, hot, lossless[-1], 0.35, True),
        (1, hot, lossless[-1], 0.35, True),
        (2, hot, lossless[0], 0.30, True),
        (0, hot, lossy[0], 0.25, True),
        (1, hot, lossy[-1], 0.25, True),
        (2, hot, lossy[0], 0.20, True),
        (hot, 0, lossless[0], 0.40, False),
        (hot, 1, lossy[-1], 0.30, False),
        (0, 1, lossless[-1], 0.20, False),
        (1, 2, lossless[0], 0.20, False),
        (2, 0, lossy[-1], 0.20, False),
        (hot, 2, lossless[-1], 0.15, False),
    ]
    flows = []
    for fid, (src, dst, prio, load, bursty) in enumerate(specs):
        if bursty:
            on, off = rng.randrange(1500, 3000), rng.randrange(500, 1500)
            phase = rng.randrange(0, on + off)
        else:
            on = off = phase = 0
        flows.append(Flow(fid, src, dst, prio, load, on, off, phase))
    pauses = []
    t = rng.randrange(500, 2000)
    while t < gen_cycles:
        length = rng.randrange(200, 1500)
        pauses.append(PauseEpisode(rng.randrange(cfg.ports), rng.randrange(4), t,
                                   min(t + length, gen_cycles)))
        t += length + rng.randrange(500, 3000)
    return Mix(flows, pauses)


class Generator:
    """Each cycle, each active flow offers a packet with probability load / mean cells;
    sizes are uniform in 64..=mtu bytes."""

    def __init__(self, cfg, mix, rng):
        self.cfg = cfg
        self.mix = mix
        self.rng = rng
        self.mtu = cfg.max_cells * cfg.cell_bytes
        self.mean_cells = sum(cfg.cells(b) for b in range(64, self.mtu + 1)) / (self.mtu - 63)

    def tick(self, cycle):
        """The packets the hosts create in `cycle`."""
        out = []
        for f in self.mix.flows:
            if not f.active(cycle):
                continue
            if self.rng.random() < f.load / self.mean_cells:
                nbytes = self.rng.randint(64, self.mtu)
                out.append(Packet(f.fid, f.next_seq, f.src, f.dst, f.prio, nbytes,
                                  self.cfg.cells(nbytes)))
                f.next_seq += 1
        return out
