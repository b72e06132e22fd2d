"""The mmu-sim golden model's checker (docs/cosim.md).

Events are the JSON objects of the co-simulation event stream (schema
``mmu-cosim-events/2``), given as dicts or as their JSON text. A divergence is a dict with
``cycle``, ``line``, ``check`` (e.g. ``"admission"``), ``event`` (the DUT's event),
``expected`` (what the model expected, and why), ``history`` (the last events of the flow
and port) and ``text`` (all of it, as ``mmu-sim check`` prints it).

A ``meta`` line whose parameters disagree with the scenario (policy, ports, cell size,
buffer cells, alpha) gives a ``UserWarning`` per difference through :mod:`warnings` (the
lines ``mmu-sim check`` prints as ``warning:``); the check still runs. ``arrive`` and
``depart`` may carry ``crc``, the payload's CRC-32, compared per packet (``"payload"``).
"""

from typing import Any, Dict, Iterable, List, Union

Event = Union[Dict[str, Any], str]
Divergence = Dict[str, Any]

def check(
    scenario: str,
    events: Union[str, Iterable[Event]],
    mode: str = "follow",
    line_rate: str = "scenario",
    pfc_tolerance: int = 2,
    keep_going: bool = True,
    decisions: str = "reported",
) -> List[Divergence]:
    """Check a whole stream against the model configured by ``scenario`` (a built-in name
    or a TOML file): ``events`` is a JSON Lines path or the events, the ``meta`` line
    first. ``mode`` is ``"follow"`` or ``"lockstep"``, ``line_rate`` ``"scenario"`` or
    ``"cell-per-cycle"``, ``decisions`` ``"reported"`` or ``"inferred"`` (a stream of
    ``arrive`` and ``depart`` only: the model decides each arrival). The verdicts of ``mmu-sim check``; raises ValueError (naming the
    line and field) for a stream that cannot be read."""

class Checker:
    """The checker fed one event at a time, e.g. by a cocotb test's monitors."""

    def __init__(
        self,
        scenario: str,
        mode: str = "follow",
        line_rate: str = "scenario",
        pfc_tolerance: int = 2,
        decisions: str = "reported",
    ) -> None: ...
    def feed(self, event: Event) -> List[Divergence]:
        """The next event in stream order (the ``meta`` line first); the divergences it
        settles (those of a cycle come when the next cycle's first event arrives)."""
    def finish(self) -> List[Divergence]:
        """The end of the stream: the divergences of its last cycle and of its end."""

class Model:
    """The model stepped a cycle at a time."""

    def __init__(self, scenario: str) -> None: ...
    @property
    def cycle(self) -> int:
        """The next cycle to step."""
    def step(self, inputs: List[Event] = ...) -> List[Dict[str, Any]]:
        """Step one cycle with ``arrive`` events (one cell per port; ``cell`` is its index)
        and received ``pfc`` events; returns the model's events of the cycle."""
    def probe(self, path: str) -> int:
        """The value of the signal at ``path``, as the waveforms show it."""
    def probes(self) -> List[str]:
        """Every probe's path."""
