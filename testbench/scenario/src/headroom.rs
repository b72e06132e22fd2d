//! Eq. 1 against a scenario's links and lossless flows: the link partner's default
//! processing delay, each link's own Eq. 1, the lossless traffic the headroom was not sized
//! for ([`headroom_findings`]), and the sizing report of `mmu-sim validate`
//! ([`eta_report`]).

use crate::{Flow, Link, LinkSpec, ScenarioError, MAX_LINK_NS};
use hw_model::config::{eta_cells_for, EQ1_PFC_BYTES, PFC_FRAME_WIRE_BYTES};
use hw_model::{Derived, HeadroomMode, PacketCost, Policy};

/// Lossless flows or a link that the headroom of their ports was not sized for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeadroomWarning {
    /// Bit `p`: the traffic into port `p` is concerned.
    pub ports: u64,
    /// The field to change and why.
    pub problem: ScenarioError,
}

impl std::fmt::Display for HeadroomWarning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.problem.fmt(f)
    }
}

/// Default partner processing delay, cycles (rounded down): what is left of Eq. 1's 3840 B
/// after the PFC frame itself (84 B on the wire) and two wire overheads (the packets
/// that straddle the frame's arrival and the response), at the port's line rate.
pub fn default_proc_cycles(d: &Derived, port: usize) -> u64 {
    let bytes = EQ1_PFC_BYTES.saturating_sub(pfc_frame_and_gaps_bytes(d));
    (bytes as u128 * 8 * d.clock_hz as u128 / d.rate_bps[port] as u128) as u64
}

/// The part of Eq. 1's PFC budget that is not the partner's processing: the frame on the
/// wire and two wire overheads (the packets that straddle its arrival and the response).
fn pfc_frame_and_gaps_bytes(d: &Derived) -> u64 {
    (PFC_FRAME_WIRE_BYTES + 2 * d.cfg.wire_overhead_bytes) as u64
}

/// Eq. 1 of the link into `port` as it is: `prop_ns` of propagation, and for the PFC frame
/// and the reaction the frame, two wire overheads and `proc_cycles` of processing at line
/// rate (rounded up). With the default link it is at most `eta_eq1_bytes`.
pub fn link_eq1_bytes(d: &Derived, port: usize, prop_ns: u64, proc_cycles: u64) -> u64 {
    let proc_bytes =
        (proc_cycles as u128 * d.rate_bps[port] as u128).div_ceil(8 * d.clock_hz as u128) as u64;
    d.cfg
        .eq1_bytes(port, prop_ns, pfc_frame_and_gaps_bytes(d) + proc_bytes)
}

/// Lossless traffic the headroom was not sized for: each finding breaks Eq. 1 in cells
/// (`hw_model::config::eta_cells_for`), so lossless cells can drop. One per cause, naming
/// the field to change:
///
/// - a lossless flow with a packet size that fills more cells per wire byte than `eta` was
///   sized for (`headroom = "cells"`: the densest size of `headroom_min_packet_bytes..=
///   mtu_bytes`; `"paper-bytes"`: one cell per `cell_bytes` of wire, i.e. packets whose
///   cells hold no more than their wire bytes);
/// - a link into a port with lossless traffic whose own Eq. 1 ([`link_eq1_bytes`]: its
///   propagation and processing delays) is more than the wire bytes `eta` was sized for
///   (Eq. 1 of `switch.link_delay_ns`, or `switch.eta_bytes`).
pub fn headroom_findings(
    link_specs: &[LinkSpec],
    links: &[Link],
    flows: &[Flow],
    d: &Derived,
) -> Vec<HeadroomWarning> {
    let mut out: Vec<HeadroomWarning> = Vec::new();
    let mut lossless_ports = 0u64;
    // Flows with the same too-dense packet on ports sized alike share one warning, named
    // after the first of them.
    let mut dense: Vec<(&Flow, PacketCost, Vec<usize>, u64)> = Vec::new();
    for f in flows.iter().filter(|f| d.is_lossless(f.prio)) {
        let p = f.src as usize;
        lossless_ports |= 1 << p;
        let Some(worst) = f.densest_packet(d) else {
            continue;
        };
        if !worst.denser_than(&d.eta_sizing[p].densest) {
            continue;
        }
        let alike = |g: &&mut (&Flow, PacketCost, Vec<usize>, u64)| {
            g.1 == worst
                && d.eta_sizing[g.0.src as usize] == d.eta_sizing[p]
                && g.0.size_field(worst.len) == f.size_field(worst.len)
        };
        match dense.iter_mut().find(alike) {
            Some(g) => {
                g.2.push(f.id as usize);
                g.3 |= 1 << p;
            }
            None => dense.push((f, worst, Vec::new(), 1 << p)),
        }
    }
    for (f, worst, more, ports) in dense {
        let mut message = denser_than_sized(f, worst, d);
        if !more.is_empty() {
            message += &format!("; the same for flows {}", number_list(&more));
        }
        out.push(HeadroomWarning {
            ports,
            problem: ScenarioError::new(
                format!("flows[{}].{}", f.id, f.size_field(worst.len)),
                message,
            ),
        });
    }
    // Links with the same finding share one warning.
    let mut long: Vec<(String, String, u64)> = Vec::new();
    for p in (0..d.ports).filter(|&p| lossless_ports & (1 << p) != 0) {
        let spec = link_specs.iter().enumerate().find(|(_, s)| s.port == p);
        let prop_ns = spec
            .and_then(|(_, s)| s.propagation_ns)
            .map_or(d.cfg.link_delay_ns as u64, u64::from);
        let proc_cycles = links[p].proc_cycles;
        let need = link_eq1_bytes(d, p, prop_ns, proc_cycles);
        let sized = d.eta_sizing[p].wire_bytes;
        if need <= sized {
            continue;
        }
        let from = match d.cfg.eta_bytes {
            Some(b) => format!("switch.eta_bytes = {b}"),
            None => format!("Eq. 1 of switch.link_delay_ns = {} ns", d.cfg.link_delay_ns),
        };
        let what = format!(
            "propagation {prop_ns} ns, processing {proc_cycles} cycles: Eq. 1 = {need} B of headroom, more than the {sized} B eta is sized for ({from})"
        );
        let slow = spec
            .filter(|(_, s)| s.processing_ns.is_some() && proc_cycles > default_proc_cycles(d, p));
        let (field, allowed) = match (slow, spec) {
            (Some((i, _)), _) => {
                let spare = sized.saturating_sub(link_eq1_bytes(d, p, prop_ns, 0));
                let cycles = spare as u128 * 8 * d.clock_hz as u128 / d.rate_bps[p] as u128;
                let ns = cycles * 1_000_000_000 / d.clock_hz as u128;
                (format!("links[{i}].processing_ns"), format!("at most {ns}"))
            }
            (None, Some((i, s))) if s.propagation_ns.is_some() => {
                // The first delay that does not fit (Eq. 1 grows with the delay).
                let (mut fit, mut over) = (0u64, MAX_LINK_NS + 1);
                while fit < over {
                    let mid = (fit + over) / 2;
                    if link_eq1_bytes(d, p, mid, proc_cycles) <= sized {
                        fit = mid + 1;
                    } else {
                        over = mid;
                    }
                }
                let allowed = match fit {
                    0 => "none with this processing delay".to_string(),
                    n => format!("0..={}", n - 1),
                };
                (format!("links[{i}].propagation_ns"), allowed)
            }
            _ => ("switch.eta_bytes".to_string(), format!("at least {need}")),
        };
        let message = format!("{what}; allowed: {allowed}");
        match long.iter_mut().find(|l| (&l.0, &l.1) == (&field, &message)) {
            Some(l) => l.2 |= 1 << p,
            None => long.push((field, message, 1 << p)),
        }
    }
    for (field, message, ports) in long {
        let list: Vec<usize> = (0..d.ports).filter(|&p| ports & (1 << p) != 0).collect();
        out.push(HeadroomWarning {
            ports,
            problem: ScenarioError::new(
                field,
                format!("the link into {}: {message}", port_list(&list)),
            ),
        });
    }
    out
}

/// One paragraph per distinct `eta` of the switch (`mmu-sim validate`): the ports, the
/// value in cells and bytes, where it is reserved, and how it was derived (the mode, the
/// packet range, Eq. 1's terms, the densest packet and its cells).
pub fn eta_report(d: &Derived) -> Vec<String> {
    let c = &d.cfg;
    if d.lossless_mask == 0 {
        return vec!["eta: no lossless priorities, no headroom".to_string()];
    }
    let mut groups: Vec<(hw_model::EtaSizing, u64, Vec<usize>)> = Vec::new();
    for p in 0..d.ports {
        let key = (d.eta_sizing[p], d.rate_bps[p]);
        match groups.iter_mut().find(|g| (g.0, g.1) == key) {
            Some(g) => g.2.push(p),
            None => groups.push((key.0, key.1, vec![p])),
        }
    }
    let per = match c.policy {
        Policy::Dsh => "once per port as insurance (Eq. 4)",
        Policy::Sih | Policy::L2bm => "per lossless ingress queue (Eq. 3)",
    };
    groups
        .iter()
        .map(|(s, bps, ports)| {
            let w = match c.eta_bytes {
                Some(b) => format!("W = switch.eta_bytes = {b} B"),
                None => format!(
                    "W = Eq. 1 = 2 (C D_prop + L_MTU) + {EQ1_PFC_BYTES} = 2 ({} + {}) + {EQ1_PFC_BYTES} = {} B at {} Gb/s, link_delay_ns {}",
                    (s.wire_bytes - EQ1_PFC_BYTES) / 2 - c.mtu_bytes as u64,
                    c.mtu_bytes,
                    s.wire_bytes,
                    *bps as f64 / 1e9,
                    c.link_delay_ns
                ),
            };
            let how = match c.headroom {
                HeadroomMode::Cells => format!(
                    "headroom = \"cells\", lossless packets of {}..={} B (headroom_min_packet_bytes..=mtu_bytes); densest packet {} B: {}; eta = floor(W x {} / {}) + {} (largest packet, {} B) = {} + {} = {} cells",
                    c.headroom_min_packet_bytes.unwrap_or(c.mtu_bytes),
                    c.mtu_bytes,
                    s.densest.len,
                    s.densest,
                    s.densest.cells,
                    s.densest.wire,
                    s.largest.cells,
                    s.largest.len,
                    s.cells - s.largest.cells,
                    s.largest.cells,
                    s.cells
                ),
                HeadroomMode::PaperBytes => format!(
                    "headroom = \"paper-bytes\": eta = ceil(W / {}) = {} cells, the paper's rounding; it holds the in-flight packets only if none takes more buffer than wire bytes",
                    c.cell_bytes, s.cells
                ),
            };
            format!(
                "eta, {}: {} cells = {} B, reserved {per}\n  {w}\n  {how}",
                port_list(ports),
                s.cells,
                s.cells as u64 * c.cell_bytes as u64
            )
        })
        .chain([format!(
            "headroom: {} cells in total, shared segment B_s {} cells",
            d.headroom_cells, d.shared_cells
        )])
        .collect()
}

/// `ports 0-5, 7` (runs of consecutive ports joined).
fn port_list(ports: &[usize]) -> String {
    let s = if ports.len() > 1 { "s" } else { "" };
    format!("port{s} {}", number_list(ports))
}

/// `0-5, 7`: ascending numbers, runs of consecutive ones joined.
fn number_list(numbers: &[usize]) -> String {
    let mut runs: Vec<(usize, usize)> = Vec::new();
    for &n in numbers {
        match runs.last_mut() {
            Some(r) if r.1 + 1 == n => r.1 = n,
            _ => runs.push((n, n)),
        }
    }
    let parts: Vec<String> = runs
        .iter()
        .map(|&(a, b)| match a == b {
            true => a.to_string(),
            false => format!("{a}-{b}"),
        })
        .collect();
    parts.join(", ")
}

/// `eta` of port `p` in cells, had it been sized (`headroom = "cells"`) for lossless packets
/// of `smallest..=mtu_bytes`: the figure a `switch.headroom_min_packet_bytes = smallest`
/// fix gives; `None` if `smallest` is above `mtu_bytes`.
pub fn eta_from_min_packet(d: &Derived, p: usize, smallest: u32) -> Option<u64> {
    let sized = d.eta_sizing[p];
    d.densest_packet(smallest..=d.cfg.mtu_bytes)
        .map(|w| eta_cells_for(sized.wire_bytes, w, sized.largest.cells))
}

/// Why `worst`, a packet of flow `f`, is denser than the headroom of its port allows.
fn denser_than_sized(f: &Flow, worst: PacketCost, d: &Derived) -> String {
    let p = f.src as usize;
    let sized = d.eta_sizing[p];
    let need = eta_cells_for(sized.wire_bytes, worst, sized.largest.cells);
    let head = format!(
        "lossless packets of {} B into port {p} fill {worst}",
        worst.len
    );
    match d.cfg.headroom {
        HeadroomMode::Cells => {
            let smallest = f.packet_sizes().iter().map(|r| *r.start()).min().unwrap_or(worst.len);
            let wider = eta_from_min_packet(d, p, smallest).unwrap_or(need);
            format!(
                "{head}, more than the {} of the {} B packets eta is sized for (switch.headroom_min_packet_bytes = {}): Eq. 1's {} B of such packets can take {need} cells, eta of port {p} is {} cells; allowed: packets of at most {}, or switch.headroom_min_packet_bytes = {smallest} (eta {wider} cells)",
                sized.densest,
                sized.densest.len,
                d.cfg.headroom_min_packet_bytes.unwrap_or(d.cfg.mtu_bytes),
                sized.wire_bytes,
                sized.cells,
                sized.densest,
            )
        }
        HeadroomMode::PaperBytes => format!(
            "{head}: {} B of buffer for {} B on the wire, and switch.headroom = \"paper-bytes\" rounds Eq. 1's {} B to {} cells, enough only for packets that take no more buffer than wire bytes: such packets can take {need} cells; allowed: packets of whole cells, or switch.headroom = \"cells\"",
            worst.cells * d.cfg.cell_bytes,
            worst.wire,
            sized.wire_bytes,
            sized.cells,
        ),
    }
}
