//! End-to-end runs of the built-in scenarios against the model.

use hw_model::Fault;
use scenario::{builtin, Overrides};
use switch_run::summary::RunMeta;
use switch_run::{Sim, Summary};

fn sim(name: &str, cycles: Option<u64>) -> Sim {
    let s = builtin::load(name).unwrap();
    Sim::new(
        &s,
        Overrides {
            cycles,
            ..Overrides::default()
        },
    )
    .unwrap()
}

fn run(name: &str) -> Summary {
    sim(name, None).run(|_| {}).unwrap()
}

#[test]
fn every_delivered_beat_gets_one_cell_event_in_its_cycle() {
    let mut s = sim("small-smoke", Some(5_000));
    for _ in 0..5_000 {
        s.step().unwrap();
        let sb = s.scoreboard();
        let seen = sb.admitted.iter().sum::<u64>() + sb.dropped_total();
        assert_eq!(
            sb.injected - s.cells_in_flight(),
            seen,
            "cycle {}",
            s.now() - 1
        );
        let cons = sb.conservation(s.mmu().buffered_cells() as u64, s.cells_in_flight());
        assert!(cons.ok(), "cycle {}: {cons}", s.now() - 1);
    }
}

#[test]
fn small_smoke_is_clean() {
    let s = run("small-smoke");
    assert!(s.ok(), "{s}");
    assert!(s.cells_departed > 0);
}

#[test]
fn fanin_burst_pauses_and_loses_no_lossless_cell() {
    let s = run("fanin-burst");
    assert!(s.ok(), "{s}");
    assert!(s.pfc_pause_frames > 0, "{s}");
    assert!(s.partner_pause_events > 0, "{s}");
    assert_eq!(s.cells_dropped_lossless, 0, "{s}");
}

#[test]
fn lossy_overload_drops_lossy_cells_only() {
    let s = run("lossy-overload");
    assert!(s.ok(), "{s}");
    assert!(s.cells_dropped_lossy > 0, "{s}");
    assert_eq!(s.cells_dropped_lossless, 0, "{s}");
}

#[test]
fn mixed_speed_and_poisson_are_clean() {
    for name in ["mixed-speed", "poisson-cdf"] {
        let s = run(name);
        assert!(s.ok(), "{name}: {s}");
        assert!(s.cells_departed > 0, "{name}: {s}");
    }
}

#[test]
fn same_seed_same_summary_other_seed_other_stimulus() {
    let strip = |mut s: Summary| {
        s.run = RunMeta {
            wall_seconds: 0.0,
            cycles_per_second: 0.0,
            cpu_seconds: 0.0,
            cycles_per_cpu_second: 0.0,
        };
        s
    };
    let a = strip(sim("poisson-cdf", Some(50_000)).run(|_| {}).unwrap());
    let b = strip(sim("poisson-cdf", Some(50_000)).run(|_| {}).unwrap());
    assert_eq!(a, b);
    let s = builtin::load("poisson-cdf").unwrap();
    let ov = Overrides {
        cycles: Some(50_000),
        seed: Some(99),
        ..Overrides::default()
    };
    let c = strip(Sim::new(&s, ov).unwrap().run(|_| {}).unwrap());
    assert_ne!(
        a.cells_injected, c.cells_injected,
        "the seed must change the stimulus"
    );
}

#[test]
fn model_invariant_check_bites_on_a_leaked_cell() {
    let mut s = sim("small-smoke", Some(2_000));
    for _ in 0..1_000 {
        s.step().unwrap();
    }
    s.mmu_mut().inject_fault(Fault::LeakCell);
    let summary = match s.run(|_| {}) {
        Ok(summary) => summary,
        Err(e) => return assert!(e.to_string().contains("invariant"), "{e}"),
    };
    assert!(!summary.ok(), "a leaked cell went unnoticed: {summary}");
}

#[test]
fn vcd_is_byte_identical_across_runs() {
    let dir = std::env::temp_dir().join(format!("tb-vcd-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut dumps = Vec::new();
    for i in 0..2 {
        let path = dir.join(format!("run{i}.vcd"));
        let mut s = sim("small-smoke", Some(3_000));
        let f = std::fs::File::create(&path).unwrap();
        s.attach_waves(
            f,
            &path,
            wave::Format::Vcd,
            &wave::SignalFilter::all(),
            wave::Window::all(),
        )
        .unwrap();
        s.run(|_| {}).unwrap();
        dumps.push(std::fs::read(&path).unwrap());
        assert!(path.with_extension("gtkw").exists());
    }
    assert!(!dumps[0].is_empty());
    assert!(dumps[0] == dumps[1], "VCDs differ between identical runs");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `Sim::messages` (per-message completion of `poisson` flows) against an independent
/// count: every packet whose last cell departed is credited to exactly one message, so the
/// messages' delivered packets add up to the end-of-packet departures counted here; a
/// complete message has all its packets delivered and its FCT runs from its arrival to a
/// departure seen here.
#[test]
fn poisson_messages_account_for_every_departed_packet() {
    let mut s = sim("poisson-cdf", Some(50_000));
    s.keep_messages();
    let mut eop = 0u64;
    let mut departed_at = std::collections::BTreeSet::new();
    while s.now() < 50_000 {
        s.step().unwrap();
        let n = s
            .outputs()
            .departures
            .iter()
            .filter(|d| d.beat.eop())
            .count();
        if n > 0 {
            eop += n as u64;
            departed_at.insert(s.now() - 1);
        }
    }
    let msgs = s.messages();
    let delivered: u64 = msgs.iter().map(|m| m.delivered_packets as u64).sum();
    assert_eq!(delivered, eop);
    let complete: Vec<_> = msgs.iter().filter(|m| m.complete()).collect();
    let counts = s.message_counts();
    assert_eq!(
        (counts.arrived, counts.complete),
        (msgs.len() as u64, complete.len() as u64)
    );
    assert!(complete.len() > 100, "{} of {}", complete.len(), msgs.len());
    assert!(
        complete.len() < msgs.len(),
        "some still in flight at the end"
    );
    for m in complete {
        assert_eq!(m.delivered_packets, m.packets, "{m:?}");
        let done = m.last_departure_cycle.unwrap();
        assert!(departed_at.contains(&done), "{m:?}");
        assert_eq!(m.fct_cycles(), Some(done - m.arrival_cycle));
        assert!(done > m.arrival_cycle);
    }
}

/// The SAI counters agree with the totals they break down: drops per group and queue sum
/// to the drops per reason, PFC frames per priority to the frames sent, bytes are cells
/// times the cell size, and no watermark is below its final occupancy.
#[test]
fn sai_counters_agree_with_the_totals() {
    for (name, cycles) in [
        ("lossy-overload", None),
        ("fanin-burst", Some(60_000)),
        ("dsh-port-level", Some(60_000)),
    ] {
        let s = sim(name, cycles).run(|_| {}).unwrap();
        assert!(s.ok(), "{name}: {s}");
        let cb = s.cell_bytes as u64;
        let mut by_reason = std::collections::BTreeMap::<String, u64>::new();
        for g in &s.ingress_priority_groups {
            assert!(g.watermark_cells >= g.curr_occupancy_cells, "{name}: {g:?}");
            assert!(
                g.shared_watermark_cells + g.xoff_room_watermark_cells > 0
                    || g.dropped_packets > 0
                    || g.watermark_cells > 0
            );
            assert_eq!(g.watermark_bytes, g.watermark_cells as u64 * cb);
            assert_eq!(
                g.xoff_room_watermark_bytes,
                g.xoff_room_watermark_cells as u64 * cb
            );
            for (r, n) in &g.dropped_cells {
                *by_reason.entry(r.clone()).or_default() += n;
            }
        }
        for q in &s.egress_queues {
            assert!(q.watermark_cells >= q.curr_occupancy_cells, "{name}: {q:?}");
            assert_eq!(q.curr_occupancy_bytes, q.curr_occupancy_cells as u64 * cb);
            for (r, n) in &q.dropped_cells {
                *by_reason.entry(r.clone()).or_default() += n;
            }
        }
        assert_eq!(by_reason, s.drops_by_reason, "{name}");
        let queued: u64 = s
            .egress_queues
            .iter()
            .map(|q| q.curr_occupancy_cells as u64)
            .sum();
        let buffer = s.pools.iter().find(|p| p.pool == "buffer").unwrap();
        assert_eq!(buffer.curr_occupancy_cells as u64, queued, "{name}");
        assert_eq!(
            queued,
            s.cells_buffered_at_end + s.cells_owed_at_end,
            "{name}"
        );
        let frames = s.pfc_pause_frames + s.pfc_resume_frames;
        let per_prio: u64 = s.pfc.iter().map(|p| p.tx_pkts).sum();
        assert!(
            per_prio >= frames && (frames == 0) == (per_prio == 0),
            "{name}: {per_prio} vs {frames}"
        );
        if name == "dsh-port-level" {
            // A port-level frame carries all eight classes.
            let port_level = s.pfc_port_pause_frames + s.pfc_port_resume_frames;
            assert!(port_level > 0);
            assert!(per_prio >= frames + 7 * port_level, "{name}");
        }
    }
    let s = run("lossy-overload");
    assert!(
        s.ingress_priority_groups
            .iter()
            .any(|g| !g.lossless && g.dropped_packets > 0),
        "{s}"
    );
}

/// The scenario hash covers what decides the results: overrides change it, the name does
/// not, and a profile expanded into its keys hashes like the profile.
#[test]
fn scenario_hash_follows_the_resolved_scenario() {
    let s = builtin::load("small-smoke").unwrap();
    let h = s.hash(&Overrides::default());
    assert_eq!(h.len(), 64);
    assert_eq!(h, s.hash(&Overrides::default()));
    let seed = Overrides {
        seed: Some(s.run.seed + 1),
        ..Overrides::default()
    };
    assert_ne!(h, s.hash(&seed));
    let mut renamed = s.clone();
    renamed.name = "other".into();
    renamed.description = "other".into();
    assert_eq!(h, renamed.hash(&Overrides::default()));
    let mut alpha = s.clone();
    alpha.switch.alpha_log2 += 1;
    assert_ne!(h, alpha.hash(&Overrides::default()));
    let plan = s.plan(&Overrides::default()).unwrap();
    assert_eq!(plan.scenario_hash, h);
}
