//! Helpers shared by the integration tests of `switch-run`, `study` and `mmu-sim` (the
//! latter two include this file by path). Each test crate uses a part of them.
#![allow(dead_code)]

use hw_model::{Derived, HeadroomMode, SwitchConfig};
use proptest::prelude::*;
use scenario::Scenario;
use scenario::{FlowSpec, PatternKind, PfcScriptSpec, RunSpec, TcpSpec};
use std::collections::BTreeSet;
use switch_run::Sim;

/// Cycles per drawn stream: `SOAK_CYCLES` (underscores allowed) if set and positive, else
/// `default`.
pub fn soak_cycles(default: u64) -> u64 {
    std::env::var("SOAK_CYCLES")
        .ok()
        .and_then(|s| s.replace('_', "").parse().ok())
        .filter(|&c| c > 0)
        .unwrap_or(default)
}

/// `make soak` is running (more cases, longer streams).
pub fn soak_mode() -> bool {
    std::env::var_os("SOAK_CYCLES").is_some()
}

/// Cells of a back-to-back stream of `len`-byte packets whose first bytes lie within Eq. 1's
/// bytes on `port`, the last of them an MTU packet: one mixture the headroom must hold
/// (`hw_model::config::eta_cells_for` bounds them all). Written out here on its own, not
/// read from the model, so that the tests check the model's `eta_cells` against it.
pub fn eq1_stream_cells(cfg: &SwitchConfig, port: usize, len: u32) -> u64 {
    let cells = |l: u32| (l + cfg.packet_overhead_bytes).div_ceil(cfg.cell_bytes) as u64;
    let wire = (len + cfg.wire_overhead_bytes) as u64;
    cfg.eta_eq1_bytes(port) / wire * cells(len) + cells(cfg.mtu_bytes)
}

/// Size the headroom in cells for the lossless packet sizes of a stimulus: every size from
/// the smallest of them to the MTU (`headroom_min_packet_bytes`), as a user would.
pub fn size_headroom_for(cfg: &mut SwitchConfig, sizes: &BTreeSet<u32>) {
    cfg.headroom = HeadroomMode::Cells;
    cfg.eta_bytes = None;
    cfg.headroom_min_packet_bytes = Some(sizes.first().copied().unwrap_or(cfg.mtu_bytes));
}

/// A drawn packet size, resolved against a size range `lo..=mtu` and the cell size.
#[derive(Debug, Clone, Copy)]
pub enum SizeSel {
    /// The range's smallest size.
    Min,
    Mtu,
    /// One byte past `k` cells, the worst rounding (`k * cell - overhead + 1`).
    CellEdge(u32),
    /// `permille` of the way from `lo` to the MTU.
    Uniform(u32),
}

impl SizeSel {
    /// The size in `lo..=mtu` (a cell edge outside it is clamped to it).
    pub fn resolve(self, lo: u32, mtu: u32, cell: u32, overhead: u32) -> u32 {
        let v = match self {
            Self::Min => lo,
            Self::Mtu => mtu,
            Self::CellEdge(k) => (k * cell + 1).saturating_sub(overhead),
            Self::Uniform(pm) => lo + (mtu - lo) * pm / 1000,
        };
        v.clamp(lo, mtu)
    }
}

/// Draws of [`SizeSel`], cell edges of 1..=`max_edge` cells.
pub fn size_sel(max_edge: u32) -> impl Strategy<Value = SizeSel> {
    prop_oneof![
        2 => Just(SizeSel::Min),
        2 => Just(SizeSel::Mtu),
        2 => (1u32..=max_edge).prop_map(SizeSel::CellEdge),
        3 => (0u32..=1000).prop_map(SizeSel::Uniform),
    ]
}

/// A drawn arrival pattern; `pct` is percent of the source's line rate (100 = line rate).
#[derive(Debug, Clone)]
pub enum PatDraw {
    Constant { pct: u32 },
    OnOff { pct: u32, on: u64, off: u64 },
    Burst { bytes: u64 },
    Poisson { pct: u32 },
    Tcp,
}

/// Draws of [`PatDraw`]; `Tcp` (one draw in nine) only with `tcp`.
pub fn pattern_draw(tcp: bool) -> BoxedStrategy<PatDraw> {
    let open_loop = prop_oneof![
        3 => (5u32..=100).prop_map(|pct| PatDraw::Constant { pct }),
        2 => (5u32..=100, 50u64..=5000, 50u64..=5000)
            .prop_map(|(pct, on, off)| PatDraw::OnOff { pct, on, off }),
        2 => (1u64..=64_000).prop_map(|bytes| PatDraw::Burst { bytes }),
        1 => (5u32..=60).prop_map(|pct| PatDraw::Poisson { pct }),
    ];
    if tcp {
        prop_oneof![8 => open_loop, 1 => Just(PatDraw::Tcp)].boxed()
    } else {
        open_loop.boxed()
    }
}

/// A flow with every optional key unset.
pub fn flow_spec(src: usize, dst: usize, prio: u8, pattern: PatternKind) -> FlowSpec {
    FlowSpec {
        src,
        dst,
        prio,
        size_bytes: None,
        size_cdf: None,
        pattern,
        rate_gbps: None,
        on_cycles: None,
        off_cycles: None,
        burst_bytes: None,
        message_cdf: None,
        start_cycle: 0,
        stop_cycle: None,
        connection_of: None,
        ecn: false,
    }
}

/// The flow of the drawn pattern from `src` (line rate `line_gbps`) to `dst`. TCP is lossy
/// traffic (it reacts to drops): on a lossless priority it is sent at line rate instead.
pub fn flow_of(
    p: &PatDraw,
    src: usize,
    dst: usize,
    prio: u8,
    line_gbps: f64,
    lossless: bool,
) -> FlowSpec {
    let rate = |pct: u32| (pct < 100).then(|| line_gbps * pct as f64 / 100.0);
    match *p {
        PatDraw::Constant { pct } => FlowSpec {
            rate_gbps: rate(pct),
            ..flow_spec(src, dst, prio, PatternKind::Constant)
        },
        PatDraw::OnOff { pct, on, off } => FlowSpec {
            rate_gbps: rate(pct),
            on_cycles: Some(on),
            off_cycles: Some(off),
            ..flow_spec(src, dst, prio, PatternKind::OnOff)
        },
        PatDraw::Burst { bytes } => FlowSpec {
            burst_bytes: Some(bytes),
            ..flow_spec(src, dst, prio, PatternKind::Burst)
        },
        PatDraw::Poisson { pct } => FlowSpec {
            rate_gbps: rate(pct),
            message_cdf: Some(vec![(64, 0.3), (4_000, 0.8), (60_000, 1.0)]),
            ..flow_spec(src, dst, prio, PatternKind::Poisson)
        },
        PatDraw::Tcp if !lossless => flow_spec(
            src,
            dst,
            prio,
            PatternKind::Tcp(TcpSpec {
                base_rtt_us: Some(5),
                ..TcpSpec::default()
            }),
        ),
        PatDraw::Tcp => flow_spec(src, dst, prio, PatternKind::Constant),
    }
}

/// `flows` on `switch` for `cycles` cycles: seed 1, lossless expected, default links and
/// reaction points, no scripted PFC.
pub fn scenario(switch: SwitchConfig, cycles: u64, flows: Vec<FlowSpec>) -> Scenario {
    Scenario {
        name: "test".into(),
        description: String::new(),
        switch,
        run: RunSpec {
            cycles,
            seed: 1,
            expect_lossless: true,
        },
        links: Vec::new(),
        flows,
        pfc_script: Vec::new(),
        ecm_rp: Default::default(),
        fabric: None,
    }
}

/// The fan-in of the headroom companions: ports 0..=6 each burst 60 KB of 1500 B packets
/// on priority 3 into port 7 at cycle 1000.
pub fn fanin_bursts() -> Vec<FlowSpec> {
    (0..7)
        .map(|src| FlowSpec {
            size_bytes: Some(1500),
            burst_bytes: Some(60_000),
            start_cycle: 1_000,
            ..flow_spec(src, 7, 3, PatternKind::Burst)
        })
        .collect()
}

/// What the scoreboard found wrong after a cycle.
#[derive(Debug)]
pub enum CycleFault {
    /// A cell departed out of its flow's order, or on the wrong port.
    Order(String),
    /// Cells appeared or vanished.
    Conservation(String),
}

impl std::fmt::Display for CycleFault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Order(m) | Self::Conservation(m) => f.write_str(m),
        }
    }
}

/// The scoreboard's checks after cycle `c`: no reordered or misrouted cell, then cell
/// conservation (injected = admitted + dropped, admitted = departed + buffered, counting
/// the cells still on the links).
pub fn order_and_conservation(sim: &Sim, c: u64) -> Result<(), CycleFault> {
    let sb = sim.scoreboard();
    if sb.reordered > 0 || sb.misrouted > 0 {
        return Err(CycleFault::Order(format!(
            "cycle {c}: {} reordered, {} misrouted; first: {}",
            sb.reordered,
            sb.misrouted,
            sb.first_error().unwrap_or("?")
        )));
    }
    let cons = sb.conservation(sim.mmu().buffered_cells() as u64, sim.cells_in_flight());
    if !cons.ok() {
        return Err(CycleFault::Conservation(format!("cycle {c}: {cons}")));
    }
    Ok(())
}

/// Bytes of a buffer whose lossless shared segment is at least `shared_cells`, grown to the
/// least `B_s` whose largest threshold `alpha * B_s` (`alpha = 2^alpha_log2`) is above
/// `need` cells, so that a queue resuming at `T - need` can resume; `big` is the
/// configuration built with a large buffer (for its fixed segments). `None` above 2^20
/// cells.
pub fn buffer_bytes_for(
    big: &Derived,
    alpha_log2: i32,
    need: u64,
    shared_cells: u32,
) -> Option<u64> {
    let least = if alpha_log2 >= 0 {
        (need >> alpha_log2) + 1
    } else {
        (need + 1) << -alpha_log2
    };
    let reserved = big.total_cells - big.lossy_pool_cells - big.shared_cells;
    let total = big.lossy_pool_cells as u64 + reserved as u64 + (shared_cells as u64).max(least);
    (total <= 1 << 20).then(|| total * big.cfg.cell_bytes as u64)
}

/// A downstream PAUSE of `classes` of `port` at `cycle` with `quanta`, and its RESUME
/// `resume_after` cycles later.
pub fn pause_then_resume(
    port: usize,
    classes: u8,
    cycle: u64,
    quanta: u16,
    resume_after: u64,
) -> [PfcScriptSpec; 2] {
    let classes: Vec<u8> = (0..8).filter(|c| classes & (1 << c) != 0).collect();
    [(cycle, quanta), (cycle + resume_after, 0)].map(|(cycle, quanta)| PfcScriptSpec {
        cycle,
        port,
        classes: classes.clone(),
        quanta,
        port_level: false,
    })
}

/// Every variable of a waveform file (VCD or FST) read with `wellen`: its width and its
/// value changes as (time, bit string), in time order.
pub fn wave_changes(
    path: &std::path::Path,
) -> std::collections::BTreeMap<String, (u32, Vec<(u64, String)>)> {
    let mut wave = wellen::simple::read(path).expect("wellen reads the dump");
    let h = wave.hierarchy();
    let vars: Vec<_> = h
        .all_vars()
        .map(|v| {
            (
                h[v].full_name(h),
                h[v].length(h).unwrap_or(0),
                h[v].signal_ref(),
            )
        })
        .collect();
    let refs: Vec<_> = vars.iter().map(|v| v.2).collect();
    wave.load_signals(&refs);
    let times = wave.time_table().to_vec();
    vars.into_iter()
        .map(|(name, width, r)| {
            let changes = wave
                .get_signal(r)
                .unwrap()
                .iter_changes()
                .map(|(i, v)| (times[i as usize], v.to_bit_string().unwrap()))
                .collect();
            (name, (width, changes))
        })
        .collect()
}
