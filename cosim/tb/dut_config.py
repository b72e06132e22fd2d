"""The DUT's parameters, derived from the mmu-sim scenario file that configures the model
(cosim/dut.toml), the way hw-model/src/config.rs derives cells from bytes.

The RTL is built with these parameters, so the scenario file is the one place the
configuration is written. Keys the DUT cannot follow are refused with the key named.
"""

import tomllib
from dataclasses import dataclass

# The DUT's fixed shape (cosim/rtl/README.md). The model always has 8 priorities; the DUT
# has NPRIO, and the priorities >= NPRIO stay unused.
NPRIO = 4


class ConfigError(ValueError):
    """A scenario the DUT cannot be built from; the message names the key."""


@dataclass(frozen=True)
class DutConfig:
    ports: int
    n_cells: int
    cell_bytes: int
    max_cells: int
    lossless: tuple
    phi: int
    eta: int
    delta: int
    alpha_log2: int
    lossy_cells: int
    lossy_alpha_log2: int

    @property
    def lossless_mask(self):
        return sum(1 << p for p in self.lossless)

    @property
    def shared_cells(self):
        """B_s: what is left after the lossy pool, private and headroom (Eq. 3)."""
        reserved = self.ports * len(self.lossless) * (self.phi + self.eta)
        return self.n_cells - self.lossy_cells - reserved

    def check_headroom(self, reaction):
        """eta must hold the packet that went to headroom, the packets an upstream that
        reacts `reaction` cycles after XOFF starts meanwhile, and the last of them:
        2 MTU + reaction - 1 cells. Otherwise a lossless drop is no bug of the DUT."""
        need = 2 * self.max_cells + reaction - 1
        if self.eta < need:
            raise ConfigError(
                f"switch.eta_bytes: {self.eta} cells; the link partners react {reaction} "
                f"cycles after XOFF, so no lossless drop needs eta >= {need} cells")

    def cells(self, nbytes):
        return -(-nbytes // self.cell_bytes)

    def rtl_parameters(self):
        """The tm_top parameters."""
        return {
            "P": self.ports,
            "NPRIO": NPRIO,
            "N_CELLS": self.n_cells,
            "CELL_BYTES": self.cell_bytes,
            "MAX_CELLS": self.max_cells,
            "LOSSLESS_MASK": self.lossless_mask,
            "PHI": self.phi,
            "ETA": self.eta,
            "DELTA": self.delta,
            "ALPHA_LOG2": self.alpha_log2,
            "LOSSY_CELLS": self.lossy_cells,
            "LOSSY_ALPHA_LOG2": self.lossy_alpha_log2,
        }


def _need(table, key):
    if key not in table:
        raise ConfigError(f"switch.{key}: missing; the DUT needs it written out")
    return table[key]


def _require(table, key, allowed):
    value = table.get(key)
    if value not in allowed:
        raise ConfigError(f"switch.{key}: {value!r}; the DUT implements only {allowed}")


def load(path):
    with open(path, "rb") as f:
        doc = tomllib.load(f)
    sw = doc.get("switch")
    if sw is None:
        raise ConfigError("switch: missing")
    _require(sw, "policy", ("sih",))
    # The DUT's pause inputs are levels: on until explicitly off.
    _require(sw, "pfc_rx_mode", ("onoff",))
    _require(sw, "lossy_private_bytes", (0,))
    _require(sw, "packet_overhead_bytes", (0,))
    _require(sw, "hybrid_ingress_pool", (False,))
    cell = _need(sw, "cell_bytes")
    if cell & (cell - 1):
        raise ConfigError(f"switch.cell_bytes: {cell} is not a power of two")
    ports = _need(sw, "ports")
    if ports != 4:
        raise ConfigError(f"switch.ports: {ports}; the testbench's traffic mix is for 4 ports")
    lossless = tuple(sorted(_need(sw, "lossless_priorities")))
    if any(p >= NPRIO for p in lossless) or not 0 < len(lossless) < NPRIO:
        raise ConfigError(
            f"switch.lossless_priorities: {list(lossless)}; the DUT has priorities "
            f"0..={NPRIO - 1}, and the traffic mix needs lossless and lossy ones")
    n_cells = _need(sw, "buffer_bytes") // cell

    def cells(key):
        return -(-_need(sw, key) // cell)

    cfg = DutConfig(
        ports=ports,
        n_cells=n_cells,
        cell_bytes=cell,
        max_cells=cells("mtu_bytes"),
        lossless=lossless,
        phi=cells("private_bytes"),
        eta=cells("eta_bytes"),
        delta=cells("delta_bytes"),
        alpha_log2=_need(sw, "alpha_log2"),
        lossy_cells=cells("lossy_pool_bytes"),
        lossy_alpha_log2=_need(sw, "lossy_alpha_log2"),
    )
    if cfg.shared_cells < 1:
        raise ConfigError(
            f"switch.buffer_bytes: {n_cells} cells leave no shared segment after the lossy "
            "pool, private and headroom")
    if n_cells % ports:
        raise ConfigError(
            f"switch.buffer_bytes: {n_cells} cells is not a multiple of {ports} ports "
            "(the free-list init engine writes one pointer per port per cycle)")
    return cfg
