//! The ECN marker (`hw_model::ecn_marker`, docs/ecn.md) through the whole model.
//!
//! The statistical test: an incast into one egress queue with a RED curve. Before each
//! cycle the test reads the queue's registered length `q`; every ECN-capable packet
//! admitted to the queue in that cycle is marked with probability `p(q)` (the RED line,
//! quantised to 2^-16, `ecn_marker::mark_probability`), independently. So the number of
//! marks is a sum of independent Bernoulli draws with mean `m = sum p` and variance
//! `v = sum p (1 - p)`, and the test requires `|marks - m| <= 4.5 sqrt(v)`: a correct marker
//! fails it with probability below 10^-5 by the normal approximation (Chebyshev: below
//! 5 %), and with the fixed seeds the run is the same every time. Companion:
//! `Fault::EcnNoPmax` (the `span` register written without `1 / Pmax`, so marks between
//! `Kmin` and `Kmax` are `1 / Pmax` times too likely) is caught by the same bound.

use hw_model::config::ECN_K_MAX;
use hw_model::ecn_marker::mark_probability;
use hw_model::{
    Beat, CellFate, Ecn, EcnConfig, EcnCurveConfig, EcnUnit, Fault, FiveTuple, Inputs, MarkOn, Mmu,
    Outputs, PacketHdr, SwitchConfig,
};
use std::collections::VecDeque;

const DST: u8 = 5;
const PRIO: u8 = 1;
const LEN: u16 = 1500;

fn switch(ecn: EcnConfig) -> Mmu {
    let mut c = SwitchConfig::small();
    c.lossless_priorities = vec![];
    c.lossy_pool_bytes = 1 << 20;
    c.lossy_alpha_log2 = 3;
    c.ecn = ecn;
    Mmu::new(c.build().unwrap())
}

/// The marker of queue `PRIO` of port `DST`.
fn dst_queue(mmu: &Mmu) -> &hw_model::ecn_marker::EcnQueue {
    let q = mmu
        .ecn_queues()
        .iter()
        .find(|m| (m.port, m.queue) == (DST, PRIO));
    q.expect("queue PRIO of DST marks")
}

/// What one run shows.
struct Run {
    /// `sum p(q)` and `sum p(1 - p)` over the ECN-capable admitted packets.
    mean: f64,
    var: f64,
    /// The marker's counters, and the CE packets that departed.
    marked: u64,
    seen: u64,
    /// ECN-capable packets admitted to the queue.
    admitted: u64,
    ce_departed: u64,
    /// Per departing packet (in order): whether it carried CE.
    departures: Vec<bool>,
}

/// `senders` ports each send `packets` back-to-back packets to `DST` at line rate
/// (ECN-capable if `ect`), then the queue drains; `fault` is injected at the start.
fn incast(mmu: &mut Mmu, senders: u8, packets: u32, ect: bool, fault: Option<Fault>) -> Run {
    if let Some(f) = fault {
        mmu.inject_fault(f);
    }
    let d = mmu.config().clone();
    let gap = (d.cfg.cell_bytes as u64 * 8 * d.clock_hz).div_ceil(d.rate_bps[0]);
    let mut queues: Vec<VecDeque<Beat>> = vec![VecDeque::new(); d.ports];
    for src in 0..senders {
        for seq in 0..packets {
            let hdr = PacketHdr {
                flow: src as u32,
                seq,
                src,
                dst: DST,
                prio: PRIO,
                len: LEN,
                tuple: FiveTuple::for_flow(src as u32, src, DST, FiveTuple::UDP),
                cm_tag: None,
                ecn: if ect { Ecn::Ect0 } else { Ecn::NotEct },
            };
            let n = d.cells_for(LEN as u32) as u16;
            queues[src as usize].extend((0..n).map(|idx| Beat {
                hdr,
                idx,
                ncells: n,
            }));
        }
    }
    let params = d.ecn.clone();
    let mut out = Outputs::with_ports(d.ports);
    let mut ingress = vec![None; d.ports];
    let mut run = Run {
        mean: 0.0,
        var: 0.0,
        marked: 0,
        seen: 0,
        admitted: 0,
        ce_departed: 0,
        departures: Vec::new(),
    };
    let cycles = (senders as u64 * packets as u64 + 10) * gap * d.cells_for(LEN as u32) as u64;
    for c in 0..cycles {
        for (p, slot) in ingress.iter_mut().enumerate() {
            *slot = if c.is_multiple_of(gap) {
                queues[p].pop_front()
            } else {
                None
            };
        }
        let q = dst_queue(mmu).qlen;
        mmu.step(
            &Inputs {
                ingress: &ingress,
                pfc_rx: &[],
            },
            &mut out,
        )
        .unwrap();
        for e in &out.cell_events {
            if e.beat.sop() && e.beat.hdr.ecn.capable() && matches!(e.fate, CellFate::Admitted(_)) {
                run.admitted += 1;
                let p = mark_probability(params.curve(PRIO as usize), q);
                run.mean += p;
                run.var += p * (1.0 - p);
            }
        }
        for dep in out.departures.iter().filter(|d| d.beat.sop()) {
            let ce = dep.beat.hdr.ecn == Ecn::Ce;
            run.ce_departed += ce as u64;
            run.departures.push(ce);
        }
        if c.is_multiple_of(4099) {
            mmu.check_invariants().unwrap();
        }
    }
    mmu.check_invariants().unwrap();
    assert_eq!(dst_queue(mmu).qlen, 0, "the queue drained");
    let m = &dst_queue(mmu);
    run.marked = m.marked;
    run.seen = m.seen;
    run
}

fn red() -> EcnConfig {
    EcnConfig {
        priorities: vec![PRIO],
        unit: EcnUnit::Bytes,
        kmin: 20_000,
        kmax: 600_000,
        pmax: 0.5,
        ..EcnConfig::default()
    }
}

/// `|marks - mean| <= 4.5 sd`, as an error naming the numbers.
fn within_bound(r: &Run) -> Result<(), String> {
    let (sd, dev) = (r.var.sqrt(), r.marked as f64 - r.mean);
    if dev.abs() <= 4.5 * sd {
        Ok(())
    } else {
        Err(format!(
            "{} marks, expected {:.1} +- {:.1} (4.5 sd = {:.1})",
            r.marked,
            r.mean,
            sd,
            4.5 * sd
        ))
    }
}

#[test]
fn marking_follows_the_red_curve_within_a_binomial_bound() {
    for seed in [0xEC41, 7, 0xDEAD_BEEF] {
        let mut mmu = switch(EcnConfig {
            lfsr_seed: seed,
            ..red()
        });
        let r = incast(&mut mmu, 3, 300, true, None);
        within_bound(&r).unwrap_or_else(|e| panic!("seed {seed:#x}: {e}"));
        eprintln!(
            "seed {seed:#x}: {} marks, expected {:.1} +- {:.1}",
            r.marked,
            r.mean,
            r.var.sqrt()
        );
        assert!(r.var > 50.0, "enough draws inside the band: var {}", r.var);
        assert_eq!(
            r.seen, 900,
            "every admitted ECN-capable packet is looked at"
        );
        assert_eq!(r.ce_departed, r.marked, "CE leaves with the packet");
    }
}

#[test]
fn companion_a_marker_without_pmax_is_caught() {
    let mut mmu = switch(red());
    let r = incast(&mut mmu, 3, 300, true, Some(Fault::EcnNoPmax));
    let e = within_bound(&r).expect_err("the bound must catch a marker without Pmax");
    eprintln!("EcnNoPmax: {e}");
    assert!(e.contains("marks, expected"), "{e}");
}

/// `Fault::EcnNoPmax` is exactly the curve with `Pmax = 1` (`span = Kmax - Kmin`): the
/// same incast marks the same packets as an unfaulted marker configured so.
#[test]
fn a_marker_without_pmax_marks_as_the_curve_with_pmax_one() {
    let faulty = incast(&mut switch(red()), 3, 300, true, Some(Fault::EcnNoPmax));
    let pmax_one = EcnConfig { pmax: 1.0, ..red() };
    let configured = incast(&mut switch(pmax_one), 3, 300, true, None);
    assert!(
        faulty.marked > 0 && faulty.marked < 900,
        "{}",
        faulty.marked
    );
    assert_eq!(faulty.departures, configured.departures);
}

#[test]
fn packets_that_are_not_ecn_capable_are_never_marked() {
    let mut mmu = switch(red());
    let r = incast(&mut mmu, 3, 300, false, None);
    assert_eq!((r.seen, r.marked, r.ce_departed), (0, 0, 0));
    assert_eq!(r.departures.len(), 900);
}

/// The step threshold `K` on dequeue: in the drain after the last arrival, the packet
/// that leaves `n` packets behind it is marked iff n * 1500 B > K, so all but the last
/// floor(K / 1500) + 1 departures of a 3 x 100 packet incast are.
fn check_step_on_dequeue(ecn: EcnConfig, k: u32) -> Result<(), String> {
    let mut mmu = switch(EcnConfig {
        mark_on: MarkOn::Dequeue,
        ..ecn
    });
    let r = incast(&mut mmu, 3, 100, true, None);
    let tail = (k / LEN as u32 + 1) as usize;
    let (head, last) = r.departures.split_at(r.departures.len() - tail);
    if last.iter().any(|&ce| ce) {
        return Err(format!("one of the last {tail} departures is marked"));
    }
    if !head[head.len() - 100..].iter().all(|&ce| ce) {
        return Err(format!(
            "the drain before the last {tail} is not all marked"
        ));
    }
    assert_eq!(r.seen, 300);
    Ok(())
}

#[test]
fn step_threshold_on_dequeue_marks_what_leaves_more_than_k_behind() {
    let k = 30_000;
    let step = EcnConfig {
        priorities: vec![PRIO],
        kmin: k,
        kmax: k,
        ..EcnConfig::default()
    };
    check_step_on_dequeue(step, k).unwrap();
}

#[test]
fn a_priority_marks_on_its_own_curve() {
    let k = 30_000;
    let never = ECN_K_MAX;
    let curve = |priorities| EcnCurveConfig {
        priorities,
        kmin: k,
        kmax: k,
        pmax: 1.0,
    };
    // PRIO on the step curve of `[[curves]]`, priority 3 on the top curve, out of reach.
    let own = EcnConfig {
        priorities: vec![3],
        kmin: never,
        kmax: never,
        curves: vec![curve(vec![PRIO])],
        ..EcnConfig::default()
    };
    check_step_on_dequeue(own, k).unwrap();
    // Companion: PRIO on the top curve and the step curve given to priority 3, so the
    // queue marks on the wrong one: the same check fails.
    let swapped = EcnConfig {
        priorities: vec![PRIO],
        kmin: never,
        kmax: never,
        curves: vec![curve(vec![3])],
        ..EcnConfig::default()
    };
    let e = check_step_on_dequeue(swapped, k).expect_err("the wrong curve is caught");
    assert!(e.contains("not all marked"), "{e}");
}

#[test]
fn a_priority_on_two_curves_is_refused_naming_the_curve() {
    let mut c = SwitchConfig::small();
    c.ecn.priorities = vec![1, 3];
    c.ecn.curves = vec![EcnCurveConfig {
        priorities: vec![3],
        kmin: 100,
        kmax: 100,
        pmax: 1.0,
    }];
    let e = c.build().expect_err("priority 3 twice");
    assert_eq!(e.field, "switch.ecn.curves[0].priorities", "{e}");
    c.ecn.curves[0].priorities = vec![2];
    c.ecn.curves[0].kmax = 99;
    let e = c.build().expect_err("kmax below kmin");
    assert_eq!(e.field, "switch.ecn.curves[0].kmax", "{e}");
    c.ecn.curves[0].kmax = 100;
    let d = c.build().unwrap();
    assert_eq!(d.ecn.mask, 0b1110);
    assert_eq!((d.ecn.curve(1).kmin, d.ecn.curve(2).kmin), (5 * 1024, 100));
}

#[test]
fn cells_unit_counts_cells_and_the_check_catches_a_skewed_length() {
    let mut mmu = switch(EcnConfig {
        priorities: vec![PRIO],
        unit: EcnUnit::Cells,
        kmin: 10,
        kmax: 10,
        ..EcnConfig::default()
    });
    let r = incast(&mut mmu, 2, 50, true, None);
    assert!(r.marked > 0 && r.marked < 100, "{} marked", r.marked);
    // Companion of the qlen recount.
    mmu.inject_fault(Fault::EcnSkewQlen);
    let e = mmu.check_invariants().expect_err("skewed qlen caught");
    assert!(e.what.contains("ECN qlen 1, recount 0"), "{e}");
}
