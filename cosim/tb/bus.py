"""Per-port fields packed into the DUT's flat vectors (port p at bits [p*W +: W]), and the
cell beat both the drivers and the monitors deal in."""

from dataclasses import dataclass


@dataclass
class Beat:
    """One cell beat on an ingress port; the header fields matter at the start of packet."""
    port: int
    sop: bool
    eop: bool
    prio: int
    dst: int
    flow: int
    seq: int
    nbytes: int
    ncells: int
    data: int


def clog2(n):
    return (n - 1).bit_length()


@dataclass(frozen=True)
class Widths:
    """tm_top's field widths for a configuration (its parameter defaults for the rest)."""
    ports: int
    nprio: int
    n_cells: int
    max_cells: int
    flow: int = 16
    seq: int = 16
    len: int = 10
    data: int = 32

    @property
    def prio(self):
        return clog2(self.nprio)

    @property
    def port(self):
        return clog2(self.ports)

    @property
    def ncells(self):
        return clog2(self.max_cells + 1)

    @property
    def count(self):
        return clog2(self.n_cells + 1)


def read(handle):
    """The value of a signal as an unsigned int; X or Z is an error naming the signal.

    Reads the simulator's bit string directly: through `handle.value` (a LogicArray) a read
    took 30 us instead of 2.6 us in cocotb's profiler, and the testbench reads some 30
    signals per cycle (cosim/README.md, "Measured")."""
    bits = handle._handle.get_signal_val_binstr()
    try:
        return int(bits, 2)
    except ValueError:
        raise AssertionError(f"{handle._name} = {bits}: not a defined value") from None


def split(value, width, n):
    mask = (1 << width) - 1
    return [(value >> (i * width)) & mask for i in range(n)]


def pack(values, width):
    out = 0
    for i, v in enumerate(values):
        assert 0 <= v < (1 << width), f"{v} does not fit {width} bits"
        out |= v << (i * width)
    return out


class Vectors:
    """A group of same-indexed per-port signals: `read_all()` returns {name: [per port]}.
    The first field is the per-port valid bit."""

    def __init__(self, dut, fields, n):
        self.handles = {name: getattr(dut, name) for name in fields}
        self.widths = fields
        self.n = n
        self.valid = next(iter(fields))

    def read(self, name):
        return split(read(self.handles[name]), self.widths[name], self.n)

    def read_all(self):
        return {name: self.read(name) for name in self.handles}

    def valid_ports(self):
        """[(port, {field: value})] for the ports whose valid bit is set."""
        if read(self.handles[self.valid]) == 0:
            return []
        c = self.read_all()
        return [(p, {name: col[p] for name, col in c.items()})
                for p in range(self.n) if c[self.valid][p]]

    def write(self, columns):
        for name, values in columns.items():
            self.handles[name].value = pack(values, self.widths[name])
