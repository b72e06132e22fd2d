"""cocotb test of tm_top: the seeded traffic mix through the DUT, the event file, and the
testbench's own checks, and the model's checker fed each event as it is written (live.py): a
divergence stops the run. Run by run.py, which passes the settings in the environment:
COSIM_CONFIG (scenario file), COSIM_CONFIG_NAME (its name in the event file), COSIM_SEED,
COSIM_CYCLES (cycles of traffic), COSIM_EVENTS (output path), COSIM_BUG (the BUG define
built in, or empty), COSIM_FAILURES (where the failed checks are written, as JSON, for
run.py), COSIM_IGNORE_XOFF (non-empty: the link partners never pause), COSIM_NO_STOP
(non-empty: a divergence of the live checker fails the test at the end, not at once)."""

import json
import os
import random

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ReadOnly, RisingEdge

import dut_config
import events
from bus import Widths, read
from checks import Checks
from live import LiveCheck
from monitors import DecisionMonitor, EgressMonitor, IngressMonitor, PfcMonitor, StatusMonitor
from partner import REACTION, IngressBus, LinkPartner, PauseDriver
from traffic import Generator, default_mix

SNAPSHOT_EVERY = 100
# Cycles to wait for the buffer to drain after the traffic stops, per cycle of traffic.
DRAIN_FACTOR = 4
RESET_CYCLES = 4


@cocotb.test()
async def traffic_mix(dut):
    cfg = dut_config.load(os.environ["COSIM_CONFIG"])
    seed = int(os.environ.get("COSIM_SEED", "1"))
    gen_cycles = int(os.environ.get("COSIM_CYCLES", "20000"))
    bug = os.environ.get("COSIM_BUG") or None
    ignore_xoff = bool(os.environ.get("COSIM_IGNORE_XOFF"))
    stop_at_divergence = not os.environ.get("COSIM_NO_STOP")
    w = Widths(cfg.ports, dut_config.NPRIO, cfg.n_cells, cfg.max_cells)
    rng = random.Random(seed)
    mix = default_mix(cfg, rng, gen_cycles)
    gen = Generator(cfg, mix, rng)

    live = LiveCheck(os.environ["COSIM_CONFIG"])
    log = events.EventWriter(os.environ["COSIM_EVENTS"], sink=live.feed)
    log.add(events.meta(seed, bug, os.environ["COSIM_CONFIG_NAME"], cfg.rtl_parameters()))
    partners = [LinkPartner(p, dut_config.NPRIO, REACTION) for p in range(cfg.ports)]
    bus = IngressBus(dut, w)
    pauses = PauseDriver(dut, dut_config.NPRIO, mix.pauses)
    ing = IngressMonitor(dut, w, log)
    dec = DecisionMonitor(dut, w)
    egr = EgressMonitor(dut, w, log)
    pfc = PfcMonitor(dut, w, log)
    stat = StatusMonitor(dut, w)
    checks = Checks(cfg, log)

    cocotb.start_soon(Clock(dut.clk, 1, unit="ns").start())
    dut.rst.value = 1
    bus.drive([None] * cfg.ports)
    dut.pause_in.value = 0
    for _ in range(RESET_CYCLES):
        await RisingEdge(dut.clk)
    dut.rst.value = 0
    init = 0
    while True:
        await RisingEdge(dut.clk)
        await ReadOnly()
        if read(dut.ready):
            break
        init += 1
        assert init <= cfg.n_cells, "ready did not rise: the free-list init engine is stuck"

    cycle = 0
    limit = gen_cycles * (1 + DRAIN_FACTOR)
    # A DUT error flag, a buffer that does not drain or a divergence from the model ends
    # the run early.
    stopped = False
    try:
        while True:
            await RisingEdge(dut.clk)
            if cycle < gen_cycles:
                for pkt in gen.tick(cycle):
                    partners[pkt.src].offer(pkt)
            pauses.drive(cycle)
            bus.drive([p.beat() for p in partners])
            await ReadOnly()

            xoff = pfc.sample(cycle)
            for p in partners:
                p.observe_xoff(0 if ignore_xoff else xoff >> (p.port * dut_config.NPRIO))
            beats = ing.sample(cycle)
            status = stat.read() if any(b.sop for b in beats) else None
            checks.decisions(cycle, dec.sample(), xoff)
            checks.ingress(cycle, beats, status)
            checks.egress(cycle, egr.sample(cycle))
            checks.occupancy(cycle, *stat.occupancy())
            snapshot = cycle % SNAPSHOT_EVERY == 0
            if snapshot:
                log.add(StatusMonitor.event(cycle, status or stat.read()))
            # A packet's arrive and depart wait for its last cell (their CRC).
            log.flush_before(cycle - cfg.max_cells)
            err = read(dut.err)
            if (live.first and stop_at_divergence) or err:
                # The stream ends with the registers where the run stopped, which account
                # for the packets still in the buffer (docs/cosim.md, "cells left").
                if not snapshot:
                    log.add(StatusMonitor.event(cycle, status or stat.read()))
                stopped = True
            if err:
                checks.fail("DUT error flags", cycle, f"{err:#06b} (bit 0 free list empty, "
                            "1 counter underflow, 2 ingress protocol, 3 queue underflow)")
            if stopped:
                break
            idle = all(p.idle() for p in partners) and checks.drained()
            if cycle >= gen_cycles and idle and not beats:
                break
            if cycle >= limit:
                checks.fail("drain", cycle, f"not drained {limit - gen_cycles} cycles after "
                            f"the traffic stopped: {sum(p.backlog() for p in partners)} "
                            f"packets at the partners, {len(checks.admitted)} admitted "
                            "packets not departed")
                stopped = True
                break
            cycle += 1

        if not stopped:
            # Two more cycles: the last decision report, and the queues' XON.
            for _ in range(2):
                await RisingEdge(dut.clk)
                cycle += 1
                await ReadOnly()
                xoff = pfc.sample(cycle)
                checks.decisions(cycle, dec.sample(), xoff)
                checks.ingress(cycle, [], None)
            final = stat.read()
            log.add(StatusMonitor.event(cycle, final))
            checks.final(cycle, final, xoff)
    finally:
        ing.crc.close()
        egr.crc.close()
        log.close()
    if not live.first:
        live.finish()
    if live.first:
        d = live.first
        checks.fail("model checker", d["cycle"],
                    f"{d['check']}: DUT {d['event']}; model: {d['expected']}")

    dut._log.info("%d cycles (%d of traffic), %d events in %s", cycle, gen_cycles, log.count,
                  os.environ["COSIM_EVENTS"])
    dut._log.info("cells written %d, read %d; packets with headroom cells %d, with shared "
                  "cells %d; drops %s", checks.written, checks.departed,
                  checks.stats["headroom packets"], checks.stats["shared packets"],
                  checks.drops)
    with open(os.environ["COSIM_FAILURES"], "w", encoding="utf-8") as f:
        json.dump([{"check": c, "times": n, "first": first} for c, n, first in checks.failed()],
                  f, indent=1)
    summary = checks.summary()
    for line in summary:
        dut._log.error(line)
    if live.first:
        raise AssertionError(f"{live.message()}\n(found at cycle {cycle} of the run)")
    assert not summary, f"{len(checks.counts)} checks failed (see the log above)"
