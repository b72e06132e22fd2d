//! The waveform is as trustworthy as the model: every arithmetic unit is read back from the
//! VCD of a run and its outputs are recomputed from its inputs at every change of any of
//! its wires (a subtractor's `y` and `borrow` from `a` and `b`, a shifter's `y` and `sat`
//! from `a` and `k`, the multiplier's `y` from `a` and `N_q`, the reciprocal divider's `e`,
//! `m`, `r`, `q` and `sat` from `a` and `x`, L2BM's estimate and threshold units from their
//! inputs), together with the wiring between units (`shift_alpha.a` is `sub_free.y`, `t`
//! latches `shift_alpha.y`, `X_qon`'s `a` is `X_qoff`, a unit fed by `T` sees `dt.t` of the
//! sample before). Every unit the signal docs list must be in the dump of a run whose
//! policy has it, and every unit this test knows must be in the docs.
//!
//! Runs: SIH and L2BM on `fanin-burst` (32 ports), DSH on `dsh-port-level` with `N_q` = 7
//! (`mul_xpoff`) and with two lossless priorities (`shift_xpoff`).
//!
//! Companions: a dump with one wrong value of a shifter's `y`, and one without DSH's
//! port-level units, are refused.

use crate::common::{mmu_sim, wave_changes};
use hw_model::l2bm::{threshold_of, EST_BITS, K_FRAC, W_FRAC, W_ONE};
use rtl::{RecipDivider, RECIP_ROM};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Every signal of a dump: width and changes as (time, value).
struct Dump {
    signals: BTreeMap<String, (u32, Vec<(u64, u64)>)>,
}

impl Dump {
    /// Run `mmu-sim run ARGS --vcd ...` and read the dump back with `wellen`.
    fn record(test: &str, args: &[&str]) -> Self {
        let dir =
            std::env::temp_dir().join(format!("probe-readback-{}-{test}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let vcd = dir.join("run.vcd");
        let mut all = vec!["run"];
        all.extend_from_slice(args);
        all.extend_from_slice(&["--vcd", vcd.to_str().unwrap()]);
        let out = mmu_sim(&all);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let dump = Self::read(&vcd);
        std::fs::remove_dir_all(&dir).unwrap();
        dump
    }

    fn read(path: &Path) -> Self {
        let signals = wave_changes(path)
            .into_iter()
            .map(|(name, (width, changes))| {
                let values = changes
                    .into_iter()
                    .map(|(t, bits)| (t, u64::from_str_radix(&bits, 2).unwrap()))
                    .collect();
                (name, (width, values))
            })
            .collect();
        Self { signals }
    }

    fn width(&self, path: &str) -> u32 {
        self.signals[path].0
    }

    fn value_at(&self, path: &str, time: u64) -> u64 {
        let changes = &self.signals[path].1;
        let n = changes.partition_point(|&(t, _)| t <= time);
        changes[n.checked_sub(1).expect("a value at time 0")].1
    }

    fn times(&self, path: &str) -> impl Iterator<Item = u64> + '_ {
        self.signals[path].1.iter().map(|c| c.0)
    }
}

#[inline]
fn mask(width: u32) -> u64 {
    if width >= 64 {
        u64::MAX
    } else {
        (1 << width) - 1
    }
}

/// The kinds of arithmetic unit in the model, with the wires each shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    SatSub,
    Shifter,
    /// `y = N_q * a`, `N_q` a constant, not a wire.
    Multiplier(u64),
    /// DT: `sub_free`, `shift_alpha` and the register `t`.
    Dt,
    /// L2BM's estimate unit.
    Est,
    /// L2BM's threshold unit (Eq. 3), with the QON unit's `X_on` subtractor.
    Thr {
        xon: bool,
    },
}

impl Kind {
    fn wires(self) -> Vec<String> {
        let own = |w: &[&str]| w.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let under = |unit: &str, w: Vec<String>| {
            w.into_iter()
                .map(|x| format!("{unit}.{x}"))
                .collect::<Vec<_>>()
        };
        match self {
            Kind::SatSub => own(&["a", "b", "borrow", "y"]),
            Kind::Shifter => own(&["a", "k", "sat", "y"]),
            Kind::Multiplier(_) => own(&["a", "sat", "y"]),
            Kind::Dt => {
                let mut w = under("sub_free", Kind::SatSub.wires());
                w.extend(under("shift_alpha", Kind::Shifter.wires()));
                w.push("t".into());
                w
            }
            Kind::Est => own(&["q_out", "k", "est"]),
            Kind::Thr { xon } => {
                let mut w = own(&["pg", "tau", "c"]);
                w.extend(under("div", own(&["a", "x", "e", "m", "r", "sat", "q"])));
                w.extend(own(&["w", "t_base", "t"]));
                if xon {
                    w.extend(under("sub_xon", Kind::SatSub.wires()));
                }
                w
            }
        }
    }

    /// The unit's outputs recomputed from its inputs; `v` and `w` give a wire's value and
    /// width by its name below the unit.
    fn check(self, v: &dyn Fn(&str) -> u64, w: &dyn Fn(&str) -> u32) -> Result<(), String> {
        let expect = |what: &str, got: u64, want: u64| {
            if got == want {
                Ok(())
            } else {
                Err(format!("{what} = {got}, its inputs give {want}"))
            }
        };
        match self {
            Kind::SatSub => {
                let (a, b) = (v("a"), v("b"));
                expect("y", v("y"), a.saturating_sub(b))?;
                expect("borrow", v("borrow"), (a < b) as u64)
            }
            Kind::Shifter => {
                let (a, k4, width) = (v("a"), v("k"), w("y"));
                let k = if k4 >= 8 { k4 as i64 - 16 } else { k4 as i64 };
                let (y, sat) = if k >= 0 {
                    let shifted = (a as u128) << k;
                    let max = mask(width) as u128;
                    (shifted.min(max) as u64, shifted > max)
                } else {
                    (a >> -k, false)
                };
                expect("y", v("y"), y)?;
                expect("sat", v("sat"), sat as u64)
            }
            Kind::Multiplier(n) => {
                let p = v("a") as u128 * n as u128;
                let max = mask(w("y")) as u128;
                expect("y", v("y"), p.min(max) as u64)?;
                expect("sat", v("sat"), (p > max) as u64)
            }
            Kind::Dt => {
                let sub = |x: &str| v(&format!("sub_free.{x}"));
                let shift = |x: &str| v(&format!("shift_alpha.{x}"));
                Kind::SatSub
                    .check(&sub, &|x| w(&format!("sub_free.{x}")))
                    .map_err(|e| format!("sub_free.{e}"))?;
                Kind::Shifter
                    .check(&shift, &|x| w(&format!("shift_alpha.{x}")))
                    .map_err(|e| format!("shift_alpha.{e}"))?;
                expect("shift_alpha.a", shift("a"), sub("y"))?;
                expect("t", v("t"), shift("y"))
            }
            Kind::Est => {
                let est = (v("q_out") * v("k")) >> K_FRAC;
                expect("est", v("est"), est.min(mask(EST_BITS)))
            }
            Kind::Thr { xon } => {
                let div = |x: &str| v(&format!("div.{x}"));
                let (a, x) = (div("a"), div("x"));
                expect("div.a", a, v("c") << W_FRAC)?;
                expect("div.x", x, v("tau"))?;
                let (q, sat) = RecipDivider::quotient(a, x, w("div.q"));
                let (e, m) = RecipDivider::normalise(x);
                expect("div.q", div("q"), q)?;
                expect("div.sat", div("sat"), sat as u64)?;
                expect("div.e", div("e"), e as u64)?;
                expect("div.m", div("m"), m as u64)?;
                let r = if x == 0 { 0 } else { RECIP_ROM[m as usize] };
                expect("div.r", div("r"), r as u64)?;
                expect("w", v("w"), q.max(W_ONE))?;
                let t = threshold_of(v("t_base") as u32, v("w"));
                expect("t", v("t"), t as u64)?;
                if xon {
                    let sub = |s: &str| v(&format!("sub_xon.{s}"));
                    Kind::SatSub
                        .check(&sub, &|s| w(&format!("sub_xon.{s}")))
                        .map_err(|e| format!("sub_xon.{e}"))?;
                    expect("sub_xon.a", sub("a"), v("t"))?;
                }
                Ok(())
            }
        }
    }
}

/// Check unit `prefix` of `kind` at every change of any of its wires; the number of
/// instants checked.
fn check_unit(d: &Dump, prefix: &str, kind: Kind) -> Result<usize, String> {
    let wires = kind.wires();
    let paths: Vec<String> = wires.iter().map(|w| format!("{prefix}.{w}")).collect();
    if let Some(missing) = paths.iter().find(|p| !d.signals.contains_key(*p)) {
        return Err(format!("{missing} is not in the dump"));
    }
    let times: BTreeSet<u64> = paths.iter().flat_map(|p| d.times(p)).collect();
    for &t in &times {
        let value = |w: &str| d.value_at(&format!("{prefix}.{w}"), t);
        let width = |w: &str| d.width(&format!("{prefix}.{w}"));
        kind.check(&value, &width)
            .map_err(|e| format!("time {t}: {prefix}.{e}"))?;
    }
    Ok(times.len())
}

/// `to` is `from` one sample later, wherever `to` is evaluated: a unit fed by a register
/// sees, in cycle `c`, the register's value after the edge of `c - 1`.
fn check_registered(d: &Dump, from: &str, to: &str) -> Result<usize, String> {
    let mut n = 0;
    for t in d.times(to).collect::<Vec<_>>() {
        if t == 0 {
            continue;
        }
        let (got, want) = (d.value_at(to, t), d.value_at(from, t - 1));
        if got != want {
            return Err(format!(
                "time {t}: {to} = {got}, {from} at {} = {want}",
                t - 1
            ));
        }
        n += 1;
    }
    Ok(n)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pol {
    Sih,
    Dsh,
    L2bm,
}

/// Every arithmetic unit of a run with `ports` ports under `policy` with `nq` lossless
/// priorities, as (path, kind).
fn units(ports: usize, policy: Pol, nq: u64) -> Vec<(String, Kind)> {
    let mut u = vec![
        ("top.mmu.dt".to_string(), Kind::Dt),
        ("top.mmu.dt_lossy".to_string(), Kind::Dt),
    ];
    let port = |p: usize, unit: &str| format!("top.mmu.ingress.p{p:02}.{unit}");
    match policy {
        Pol::Sih => u.push(("top.mmu.pfc.sub_xon".into(), Kind::SatSub)),
        Pol::Dsh => {
            u.push(if nq.is_power_of_two() {
                ("top.mmu.dsh.shift_xpoff".into(), Kind::Shifter)
            } else {
                ("top.mmu.dsh.mul_xpoff".into(), Kind::Multiplier(nq))
            });
            u.push(("top.mmu.dsh.sub_xpon".into(), Kind::SatSub));
            for p in 0..ports {
                u.push((port(p, "sub_xqoff"), Kind::SatSub));
                u.push((port(p, "sub_xqon"), Kind::SatSub));
            }
        }
        Pol::L2bm => {
            u.push(("top.mmu.l2bm.dt_egress".into(), Kind::Dt));
            for p in 0..ports {
                u.push((port(p, "l2bm.est"), Kind::Est));
                u.push((port(p, "l2bm.adm"), Kind::Thr { xon: false }));
                u.push((port(p, "l2bm.qon"), Kind::Thr { xon: true }));
            }
        }
    }
    u
}

/// The wiring between units that a run's dump must show.
fn check_wiring(d: &Dump, ports: usize, policy: Pol, nq: u64) -> Result<usize, String> {
    let mut n = 0;
    let t = "top.mmu.dt.t";
    match policy {
        Pol::Sih => n += check_registered(d, t, "top.mmu.pfc.sub_xon.a")?,
        Pol::Dsh => {
            let xpoff = if nq.is_power_of_two() {
                "top.mmu.dsh.shift_xpoff"
            } else {
                "top.mmu.dsh.mul_xpoff"
            };
            n += check_registered(d, t, &format!("{xpoff}.a"))?;
            for time in d.times("top.mmu.dsh.sub_xpon.a").collect::<Vec<_>>() {
                let want = d.value_at(&format!("{xpoff}.y"), time);
                if d.value_at("top.mmu.dsh.sub_xpon.a", time) != want {
                    return Err(format!("time {time}: sub_xpon.a is not X_poff"));
                }
                n += 1;
            }
            for p in 0..ports {
                let at = format!("top.mmu.ingress.p{p:02}");
                n += check_registered(d, t, &format!("{at}.sub_xqoff.a"))?;
                for time in d.times(&format!("{at}.sub_xqon.a")).collect::<Vec<_>>() {
                    let want = d.value_at(&format!("{at}.sub_xqoff.y"), time);
                    if d.value_at(&format!("{at}.sub_xqon.a"), time) != want {
                        return Err(format!("time {time}: {at}.sub_xqon.a is not X_qoff"));
                    }
                    n += 1;
                }
            }
        }
        Pol::L2bm => {}
    }
    Ok(n)
}

/// Check every unit of a dump and its wiring; the instants checked per unit kind.
fn check_dump(d: &Dump, ports: usize, policy: Pol, nq: u64) -> Result<usize, String> {
    let mut n = 0;
    for (prefix, kind) in units(ports, policy, nq) {
        n += check_unit(d, &prefix, kind)?;
    }
    n += check_wiring(d, ports, policy, nq)?;
    Ok(n)
}

/// A unit's name as the docs' tables show it: `sub_*`, `shift_*`, `mul_*`, and L2BM's
/// `est`, `adm`, `qon` and `div` (`in_l2bm`: the path is under an `l2bm` scope).
fn is_unit_name(part: &str, in_l2bm: bool) -> bool {
    ["sub_", "shift_", "mul_"]
        .iter()
        .any(|p| part.starts_with(p) && part.len() > p.len())
        || (in_l2bm && ["est", "adm", "qon", "div"].contains(&part))
}

/// The unit names the signal docs' tables mention.
fn documented_units() -> BTreeSet<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut names = BTreeSet::new();
    for doc in ["docs/signals.md", "docs/l2bm.md"] {
        let text = std::fs::read_to_string(root.join(doc)).unwrap();
        for line in text.lines().filter(|l| l.starts_with('|')) {
            for word in line.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.')) {
                for part in word.split('.') {
                    if is_unit_name(part, word.contains("l2bm.")) {
                        names.insert(part.to_string());
                    }
                }
            }
        }
    }
    names
}

/// Unit names of `units`: their own and those of the units inside them.
fn unit_names(units: &[(String, Kind)]) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for (path, kind) in units {
        for w in kind.wires() {
            let full = format!("{path}.{w}");
            for part in full.split('.') {
                if is_unit_name(part, full.contains("l2bm.")) {
                    names.insert(part.to_string());
                }
            }
        }
    }
    names
}

#[test]
fn every_unit_reads_back_consistent_with_its_inputs_and_the_docs_list_them_all() {
    let runs: [(&str, &[&str], usize, Pol, u64); 4] = [
        (
            "sih",
            &["fanin-burst", "--cycles", "30000"],
            32,
            Pol::Sih,
            7,
        ),
        (
            "l2bm",
            &["fanin-burst", "--policy", "l2bm", "--cycles", "30000"],
            32,
            Pol::L2bm,
            7,
        ),
        (
            "dsh7",
            &["dsh-port-level", "--cycles", "60000"],
            8,
            Pol::Dsh,
            7,
        ),
        (
            "dsh2",
            &[
                "dsh-port-level",
                "--cycles",
                "60000",
                "--set",
                "switch.lossless_priorities=[1,2]",
            ],
            8,
            Pol::Dsh,
            2,
        ),
    ];
    let mut checked = BTreeSet::new();
    for (name, args, ports, policy, nq) in runs {
        let d = Dump::record(name, args);
        let n = check_dump(&d, ports, policy, nq).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(n > 1000, "{name}: only {n} instants checked");
        // T moves in every run, so the DT pipeline is checked at more than its reset.
        assert!(
            d.times("top.mmu.dt.t").count() > 10,
            "{name}: T never moved"
        );
        checked.extend(unit_names(&units(ports, policy, nq)));
    }
    let documented = documented_units();
    assert_eq!(
        documented, checked,
        "the units the docs list (left) and the units this test checks (right) differ"
    );
}

/// Companions: a wrong shifter value, a missing DSH port-level unit, and a unit fed a
/// stale `T` are each refused.
#[test]
fn a_wrong_or_missing_probe_is_caught() {
    let good = Dump::record("companion", &["dsh-port-level", "--cycles", "30000"]);
    check_dump(&good, 8, Pol::Dsh, 7).unwrap();

    let mut wrong = Dump {
        signals: good.signals.clone(),
    };
    let y = wrong.signals.get_mut("top.mmu.dt.shift_alpha.y").unwrap();
    let last = y.1.len() - 1;
    y.1[last].1 += 1;
    let e = check_dump(&wrong, 8, Pol::Dsh, 7).unwrap_err();
    assert!(
        e.contains("top.mmu.dt.shift_alpha.y") || e.contains("top.mmu.dt.t"),
        "{e}"
    );

    let mut missing = Dump {
        signals: good.signals.clone(),
    };
    missing
        .signals
        .retain(|p, _| !p.starts_with("top.mmu.dsh.sub_xpon."));
    let e = check_dump(&missing, 8, Pol::Dsh, 7).unwrap_err();
    assert!(
        e.contains("top.mmu.dsh.sub_xpon.a is not in the dump"),
        "{e}"
    );

    let mut stale = Dump {
        signals: good.signals.clone(),
    };
    let a = stale
        .signals
        .get_mut("top.mmu.ingress.p03.sub_xqoff.a")
        .unwrap();
    assert!(a.1.len() > 2, "T moves in the run");
    let i = a.1.len() / 2;
    a.1[i].0 += 1;
    let e = check_dump(&stale, 8, Pol::Dsh, 7).unwrap_err();
    assert!(e.contains("sub_xqoff"), "{e}");
}
