//! DSH Figs. 14-15 (`dsh-fct`, `dsh-workloads`): the scenarios against their built-ins,
//! the FCT tally and its class check, the normalisation over seeds, and one tiny run.

use fabric::cdf::Builtin;
use fabric::flows::Flow;
use fabric::units::Picos;
use hw_model::Policy;
use scenario::Overrides;
use study::reproduce::dsh_fct::{self, ratio, tally, Outcome, Setup, Topology};
use study::reproduce::dsh_workloads;
use study::reproduce::fabric_net::Transport;
use study::sweep::Spec;

fn setup(topology: Topology) -> Setup {
    Setup {
        topology,
        policy: Policy::Sih,
        transport: Transport::Dcqcn,
        bg_load: 0.6,
        cdf: Builtin::WebSearch,
        seed: 1,
        arrivals_us: 200,
        run_us: 300,
    }
}

/// Seed 1 at the built-ins' loads and lengths is the built-in itself (the same scenario
/// hash); the companion: DSH, another load or another seed is another scenario.
#[test]
fn seed_1_at_the_built_ins_settings_is_the_built_in() {
    let ov = Overrides::default();
    let hash = |s: &Setup| dsh_fct::scenario(s).unwrap().hash(&ov);
    let built_in = |name| scenario::builtin::load(name).unwrap().hash(&ov);
    assert_eq!(hash(&setup(Topology::LeafSpine)), built_in("dsh-leafspine"));
    let fat = Setup {
        arrivals_us: 50,
        run_us: 100,
        ..setup(Topology::FatTree)
    };
    assert_eq!(hash(&fat), built_in("dsh-fattree"));
    let base = setup(Topology::LeafSpine);
    for other in [
        Setup {
            policy: Policy::Dsh,
            ..base
        },
        Setup {
            bg_load: 0.5,
            ..base
        },
        Setup { seed: 2, ..base },
    ] {
        assert_ne!(hash(&other), built_in("dsh-leafspine"), "{other:?}");
    }
}

fn flow(pg: u8, size: u64) -> Flow {
    Flow {
        src: 0,
        dst: 1,
        pg,
        dport: 100,
        size,
        start: Picos(0),
    }
}

#[test]
fn tally_splits_the_kinds_and_averages_the_completed() {
    let flows = [
        flow(3, 65_536),
        flow(0, 1_000),
        flow(3, 65_536),
        flow(5, 2_000_000),
    ];
    let fcts = [
        (0, Some(10_000)),
        (1, Some(3_000)),
        (2, Some(30_000)),
        (3, None),
    ];
    let o = tally(&flows, fcts.into_iter()).unwrap();
    assert_eq!(
        (o.fanin_flows, o.fanin_completed, o.fanin_fct_ns),
        (2, 2, 20_000.0)
    );
    assert_eq!((o.bg_flows, o.bg_completed, o.bg_fct_ns), (2, 1, 3_000.0));
    // The companion: a flow on the fan-in class that is not a 64 KB burst voids the run.
    let wrong = [flow(3, 1_000)];
    let err = tally(&wrong, [(0, Some(1))].into_iter()).unwrap_err();
    assert!(
        err.to_string()
            .contains("a flow of 1000 B on the fan-in class 3"),
        "{err}"
    );
}

fn outcome(bg: (u64, f64), fanin: (u64, f64)) -> Outcome {
    Outcome {
        bg_flows: 10,
        bg_completed: bg.0,
        bg_fct_ns: bg.1,
        fanin_flows: 16,
        fanin_completed: fanin.0,
        fanin_fct_ns: fanin.1,
        pause_frames: 0,
    }
}

#[test]
fn the_ratio_is_per_seed_then_averaged_over_seeds_with_completions() {
    let sih = [
        outcome((5, 100.0), (16, 50.0)),
        outcome((5, 200.0), (0, 0.0)),
    ];
    let dsh = [
        outcome((5, 90.0), (16, 25.0)),
        outcome((5, 160.0), (16, 40.0)),
    ];
    let pairs: Vec<(&Outcome, &Outcome)> = sih.iter().zip(&dsh).collect();
    // Background: 0.9 and 0.8, mean 0.85 (the ratio of the summed means would be 250/300).
    let bg = ratio(&pairs, dsh_fct::background);
    assert_eq!(bg.seeds, 2);
    assert!((bg.mean - 0.85).abs() < 1e-12, "{bg:?}");
    assert!(bg.sd > 0.0);
    // Fan-in: seed 2's SIH run completed none, so only seed 1 counts.
    let fi = ratio(&pairs, dsh_fct::fan_in);
    assert_eq!((fi.seeds, fi.mean), (1, 0.5));
    // No seed with completions on both sides: no figure, not a zero.
    assert!(ratio(&pairs[1..], dsh_fct::fan_in).mean.is_nan());
}

/// The built-ins `dsh-leafspine` and `dsh-fattree` as they are (seed 1, the
/// reproductions' scenario at the built-ins' settings, the same hash as tested above):
/// both kinds of flow start and some of each complete, every fan-in flow is one of 16 of a
/// burst, and on the leaf-spine SIH and DSH see the same flows.
#[test]
fn the_built_ins_complete_flows_of_both_kinds() {
    let fat = Setup {
        arrivals_us: 50,
        run_us: 100,
        ..setup(Topology::FatTree)
    };
    let sih = dsh_fct::measure(&setup(Topology::LeafSpine)).unwrap();
    for o in [sih.clone(), dsh_fct::measure(&fat).unwrap()] {
        assert!(o.bg_completed > 0 && o.bg_completed < o.bg_flows, "{o:?}");
        assert!(
            o.fanin_completed > 0 && o.fanin_completed <= o.fanin_flows,
            "{o:?}"
        );
        assert_eq!(o.fanin_flows % 16, 0, "{o:?}");
        assert!(o.bg_fct_ns > 0.0 && o.fanin_fct_ns > 0.0);
    }
    let dsh = dsh_fct::measure(&Setup {
        policy: Policy::Dsh,
        ..setup(Topology::LeafSpine)
    })
    .unwrap();
    assert_eq!(
        (dsh.bg_flows, dsh.fanin_flows),
        (sih.bg_flows, sih.fanin_flows)
    );
}

/// The built-in specs: Fig. 14's product, and Fig. 15's topologies zipped with their
/// lengths (the fat-tree's shorter).
#[test]
fn the_built_in_specs_expand_to_the_grids() {
    let fct = Spec::load("dsh-fct").unwrap();
    let g = dsh_fct::Grid::default_grid();
    assert_eq!(
        fct.len(),
        2 * g.transports.len() * g.bg_loads.len() * g.seeds as usize
    );
    let w = Spec::load("dsh-workloads").unwrap();
    let g = dsh_workloads::Grid::default_grid();
    assert_eq!(w.len(), 2 * 4 * g.lengths.len() * g.seeds as usize);
    let text = dsh_workloads::spec_text(&g);
    assert!(
        text.contains(
            "[[zip]]\ntopology = [\"leafspine\", \"fattree\"]\narrivals_us = [400, 50]\n"
        ),
        "{text}"
    );
}

/// PowerTCP's ACKs go on a class the switches do not keep lossless (their 64 B would
/// overflow SIH's headroom, sized for MTU packets, on the data's class); DCQCN keeps the
/// built-in's feedback on the data's class.
#[test]
fn powertcp_puts_its_acks_on_a_lossy_class() {
    let run = |transport| {
        dsh_fct::scenario(&Setup {
            transport,
            ..setup(Topology::LeafSpine)
        })
        .unwrap()
    };
    let p = run(Transport::PowerTcp);
    let pg = p.fabric.as_ref().unwrap().feedback_pg;
    assert_eq!(pg, Some(dsh_fct::POWERTCP_FEEDBACK_PG));
    assert!(!p.switch.lossless_priorities.contains(&pg.unwrap()));
    assert_eq!(run(Transport::Dcqcn).fabric.unwrap().feedback_pg, None);
}
