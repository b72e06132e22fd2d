"""The DUT event stream: JSON Lines, one event per line, the only format the testbench writes.

The schema is shared with the model (docs/cosim.md; `checker/src/events.rs` reads
and writes the same lines). Every event has `cycle` (DUT clock cycles from the first cycle
the DUT is ready, 0-based) and `event` (its kind). The kinds and their other fields
(optional ones in brackets; the model writes them, this testbench does not):

- `meta` (first line, cycle 0): `schema`, `seed`, `bug` (the BUG define or null),
  `config` (the scenario file), `params` (the DUT parameters), [`tool`].
- `arrive`: a start-of-packet beat on ingress port `port`: `prio`, `flow`, `seq`, `bytes`,
  `dst`, `ncells`, [`cell`, `tuple`, `crc`]. Without `cell` its other cells follow on the
  same port, one per cycle; a stream that gives `cell` has one `arrive` per cell. `crc`:
  the CRC-32 of the packet's payload (`payload_crc`), on the start of packet only.
- `admit`: the decision for the packet that arrived in the same cycle on `port` (`flow`,
  `seq` repeat its identity): `segments` = cells charged to `private`, `shared` and
  `headroom`, in that order of the packet's cells (the model's `admission::Plan`).
- `drop`: the packet is dropped whole: `reason` is `headroom_full` or `lossy_threshold`
  (the model's `DropReason` names; the model also has `hcf_full`, `egress_threshold`).
- `depart`: a packet's first cell is READ from the buffer on egress port `port`, from
  queue `queue`: `flow`, `seq`, `src`, `ncells`, [`cell`, `crc`]. The read frees the cell: the
  decisions of `cycle + 1` see it gone. In this DUT the cell is on the output at
  `cycle + 1`, and cell k is read at `cycle + k`; a stream that gives `cell` has one
  `depart` per cell read.
- `pfc`: `port`, `class`, `pause` (true = XOFF, false = XON), `dir`, [`quanta`,
  `port_level`]: `sent` = the DUT's XOFF output for ingress queue (port, class) changed
  (the change was decided in cycle - 1); `received` = the testbench changed the pause
  input of egress queue (port, class), which acts on the DUT's scheduling from cycle + 1.
- `counters`: the DUT's registers at the start of the cycle, i.e. the values that cycle's
  admission decisions read: `t`, `total` (cells charged and not released), and [`t_lossy`,
  `x_on`, `shared`, `lossy_shared`, `free` (free-list count), per [port][prio] `private`,
  `shared_q`, `headroom`; `drops` per reason, `packets` and `cells` per port].

Within a cycle the events are ordered by kind as in `KINDS`, then by port (and class).
"""

import json
import zlib

SCHEMA = "mmu-cosim-events/2"

# Order of the kinds within one cycle.
KINDS = ("meta", "pfc_received", "arrive", "admit", "drop", "depart", "pfc_sent", "counters")

# The reasons this DUT reports (its 1-bit `rep_reason`), then the model's others.
REASONS = ("headroom_full", "lossy_threshold")
MODEL_REASONS = REASONS + ("hcf_full", "egress_threshold")
SEGMENTS = ("private", "shared", "headroom")
DIRS = ("sent", "received")

_INT, _BOOL, _STR, _OBJ, _LIST = int, bool, str, dict, list

# Fields of each kind besides `cycle` and `event`, with their types.
FIELDS = {
    "meta": {"schema": _STR, "seed": _INT, "bug": (_STR, type(None)), "config": _STR,
             "params": _OBJ},
    "arrive": {"port": _INT, "prio": _INT, "flow": _INT, "seq": _INT, "bytes": _INT,
               "dst": _INT, "ncells": _INT},
    "admit": {"port": _INT, "flow": _INT, "seq": _INT, "segments": _OBJ},
    "drop": {"port": _INT, "flow": _INT, "seq": _INT, "reason": _STR},
    "depart": {"port": _INT, "queue": _INT, "flow": _INT, "seq": _INT, "src": _INT,
               "ncells": _INT},
    "pfc": {"port": _INT, "class": _INT, "pause": _BOOL, "dir": _STR},
    "counters": {"t": _INT, "total": _INT},
}

# Optional fields of each kind, with their types.
OPTIONAL = {
    "meta": {"tool": _STR},
    "arrive": {"cell": _INT, "tuple": _OBJ, "crc": _INT},
    "depart": {"cell": _INT, "crc": _INT},
    "pfc": {"quanta": _INT, "port_level": _BOOL},
    "counters": {"t_lossy": _INT, "x_on": _INT, "shared": _INT, "lossy_shared": _INT,
                 "free": _INT, "private": _LIST, "shared_q": _LIST, "headroom": _LIST,
                 "drops": _OBJ},
}

TUPLE = ("src_ip", "dst_ip", "src_port", "dst_port", "proto")

class EventError(ValueError):
    """An event that does not follow the schema; the message names the field."""


def _check_type(kind, name, value, want):
    # bool is an int in Python: an int field must not take a bool, nor the reverse.
    ok = isinstance(value, want) and not (want is _INT and isinstance(value, bool))
    if not ok:
        raise EventError(f"{kind}.{name}: {value!r} is not of type {want}")


def validate(ev):
    """Raise EventError unless `ev` is a well-formed event."""
    if not isinstance(ev, dict):
        raise EventError(f"event is not an object: {ev!r}")
    kind = ev.get("event")
    if kind not in FIELDS:
        raise EventError(f"event: unknown kind {kind!r}; allowed: {', '.join(FIELDS)}")
    cycle = ev.get("cycle")
    _check_type(kind, "cycle", cycle, _INT)
    if cycle < 0:
        raise EventError(f"{kind}.cycle: {cycle} is negative")
    want = FIELDS[kind]
    optional = OPTIONAL.get(kind, {})
    extra = set(ev) - set(want) - set(optional) - {"cycle", "event"}
    if extra:
        raise EventError(f"{kind}: unknown fields {sorted(extra)}")
    for name, typ in want.items():
        if name not in ev:
            raise EventError(f"{kind}.{name}: missing")
        _check_type(kind, name, ev[name], typ)
    for name, typ in optional.items():
        if name in ev:
            _check_type(kind, name, ev[name], typ)
    if "cell" in ev and not 0 <= ev["cell"] < ev["ncells"]:
        raise EventError(f"{kind}.cell: {ev['cell']}; allowed: 0..{ev['ncells']}")
    if "crc" in ev and not 0 <= ev["crc"] <= 0xFFFFFFFF:
        raise EventError(f"{kind}.crc: {ev['crc']}; allowed: 0..=4294967295")
    if "crc" in ev and ev.get("cell", 0) != 0:
        raise EventError(f"{kind}.crc: on cell {ev['cell']}; allowed: on the start of packet")
    if kind == "arrive" and "tuple" in ev:
        if sorted(ev["tuple"]) != sorted(TUPLE):
            raise EventError(f"arrive.tuple: keys {sorted(ev['tuple'])}; allowed: {TUPLE}")
        for name in TUPLE:
            _check_type(kind, f"tuple.{name}", ev["tuple"][name], _INT)
    if kind == "admit":
        segs = ev["segments"]
        if sorted(segs) != sorted(SEGMENTS):
            raise EventError(f"admit.segments: keys {sorted(segs)}; allowed: {SEGMENTS}")
        for name in SEGMENTS:
            _check_type(kind, f"segments.{name}", segs[name], _INT)
    if kind == "drop" and ev["reason"] not in MODEL_REASONS:
        raise EventError(f"drop.reason: {ev['reason']!r}; allowed: {MODEL_REASONS}")
    if kind == "pfc" and ev["dir"] not in DIRS:
        raise EventError(f"pfc.dir: {ev['dir']!r}; allowed: {DIRS}")


def payload_crc(words, width):
    """The `crc` of a packet whose cells hold the `width`-bit data words `words`: CRC-32
    (IEEE 802.3, zlib's) over each word's width / 8 bytes, least significant first, in cell
    order (docs/cosim.md, "Payload integrity")."""
    crc = 0
    for w in words:
        crc = zlib.crc32(w.to_bytes(width // 8, "little"), crc)
    return crc


def rank(ev):
    """Sort key of an event within its cycle."""
    kind = ev["event"]
    if kind == "pfc":
        kind = f"pfc_{ev['dir']}"
    return (KINDS.index(kind), ev.get("port", -1), ev.get("class", -1))


def meta(seed, bug, config, params):
    return {"cycle": 0, "event": "meta", "schema": SCHEMA, "seed": seed, "bug": bug,
            "config": config, "params": params}


def arrive(cycle, port, prio, flow, seq, nbytes, dst, ncells):
    return {"cycle": cycle, "event": "arrive", "port": port, "prio": prio, "flow": flow,
            "seq": seq, "bytes": nbytes, "dst": dst, "ncells": ncells}


def admit(cycle, port, flow, seq, private, shared, headroom):
    return {"cycle": cycle, "event": "admit", "port": port, "flow": flow, "seq": seq,
            "segments": {"private": private, "shared": shared, "headroom": headroom}}


def drop(cycle, port, flow, seq, reason):
    return {"cycle": cycle, "event": "drop", "port": port, "flow": flow, "seq": seq,
            "reason": reason}


def depart(cycle, port, queue, flow, seq, src, ncells):
    return {"cycle": cycle, "event": "depart", "port": port, "queue": queue, "flow": flow,
            "seq": seq, "src": src, "ncells": ncells}


def pfc(cycle, port, cls, pause, direction):
    return {"cycle": cycle, "event": "pfc", "port": port, "class": cls, "pause": pause,
            "dir": direction}


def counters(cycle, **fields):
    return {"cycle": cycle, "event": "counters", **fields}


class EventWriter:
    """Writes events in cycle order. Events may be added late (a decision is reported the
    cycle after its arrival, a packet's `arrive` and `depart` once its last cell has given
    the payload's CRC) up to the cycle last flushed; `flush_before(c)` writes every cycle < c.
    `sink`, if given, is called with each line as it is written (without the newline)."""

    def __init__(self, path, sink=None):
        self._f = open(path, "w", encoding="utf-8")
        self._sink = sink
        self._pending = {}
        self._written_upto = -1
        self.count = 0

    def add(self, ev):
        validate(ev)
        if ev["cycle"] <= self._written_upto:
            raise EventError(f"{ev['event']} at cycle {ev['cycle']}: cycle already written")
        self._pending.setdefault(ev["cycle"], []).append(ev)

    def flush_before(self, cycle):
        for c in sorted(k for k in self._pending if k < cycle):
            for ev in sorted(self._pending.pop(c), key=rank):
                line = json.dumps(ev, separators=(",", ":"))
                self._f.write(line + "\n")
                if self._sink:
                    self._sink(line)
                self.count += 1
        self._written_upto = max(self._written_upto, cycle - 1)

    def close(self):
        self.flush_before(1 << 62)
        self._f.close()


def load(path):
    """Read and validate an event file; return its events. The cycles must not decrease."""
    out = []
    last = -1
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            try:
                ev = json.loads(line)
                validate(ev)
            except (json.JSONDecodeError, EventError) as e:
                raise EventError(f"{path}:{lineno}: {e}") from None
            if ev["cycle"] < last:
                raise EventError(f"{path}:{lineno}: cycle {ev['cycle']} after {last}")
            last = ev["cycle"]
            out.append(ev)
    return out
