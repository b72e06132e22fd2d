//! The value checks of [`Scenario::plan`](crate::Scenario::plan): each parsed section
//! against the switch it runs on (ports exist, rates fit the line, distributions are
//! sorted), resolved into the parts of a [`Plan`](crate::Plan).

use crate::headroom::default_proc_cycles;
use crate::params::{CcLaw, DcqcnParams, IntCcParams, Ns2Params, Ns3Dcqcn};
use crate::{
    ns_to_cycles, Arbitration, Cc, DcqcnPlan, DcqcnSpec, Flavor, Flow, FlowSpec, IntCcSpec, Link,
    LinkSpec, MessageLoad, Pattern, PatternKind, PfcScriptSpec, QpMode, ScenarioError, SizeDist,
    TcpParams, TcpSpec, MAX_LINK_NS, MIN_PACKET_BYTES,
};
use hw_model::{Derived, FiveTuple, PfcFrame};

pub(crate) fn ports_err(field: String, p: usize, d: &Derived) -> ScenarioError {
    ScenarioError::new(
        field,
        format!("port {p} does not exist (ports 0..={})", d.ports - 1),
    )
}

pub(crate) fn plan_links(specs: &[LinkSpec], d: &Derived) -> Result<Vec<Link>, ScenarioError> {
    let mut links: Vec<Link> = (0..d.ports)
        .map(|p| Link {
            prop_cycles: ns_to_cycles(d.cfg.link_delay_ns as u64, d.clock_hz),
            proc_cycles: default_proc_cycles(d, p),
            arbitration: Arbitration::RoundRobin,
        })
        .collect();
    let mut seen = vec![false; d.ports];
    for (i, s) in specs.iter().enumerate() {
        let f = |k: &str| format!("links[{i}].{k}");
        if s.port >= d.ports {
            return Err(ports_err(f("port"), s.port, d));
        }
        if std::mem::replace(&mut seen[s.port], true) {
            return Err(ScenarioError::new(
                f("port"),
                format!("port {} is listed twice", s.port),
            ));
        }
        for (k, v) in [
            ("propagation_ns", s.propagation_ns),
            ("processing_ns", s.processing_ns),
        ] {
            if v.is_some_and(|v| v as u64 > MAX_LINK_NS) {
                return Err(ScenarioError::new(
                    f(k),
                    format!(
                        "{} is out of range; allowed: 0..={MAX_LINK_NS}",
                        v.unwrap_or(0)
                    ),
                ));
            }
        }
        if let Some(ns) = s.propagation_ns {
            links[s.port].prop_cycles = ns_to_cycles(ns as u64, d.clock_hz);
        }
        if let Some(ns) = s.processing_ns {
            links[s.port].proc_cycles = ns_to_cycles(ns as u64, d.clock_hz);
        }
        links[s.port].arbitration = s.arbitration;
    }
    Ok(links)
}

fn rate_bps(
    f: &dyn Fn(&str) -> String,
    gbps: Option<f64>,
    line_bps: u64,
) -> Result<u64, ScenarioError> {
    let Some(g) = gbps else { return Ok(line_bps) };
    let bps = g * 1e9;
    if !(bps.is_finite() && bps >= 1e6 && bps.round() as u64 <= line_bps) {
        return Err(ScenarioError::new(
            f("rate_gbps"),
            format!(
                "{g} is out of range; allowed: 0.001..={} (the source port's line rate)",
                line_bps as f64 / 1e9
            ),
        ));
    }
    Ok(bps.round() as u64)
}

fn check_cdf<T: Copy + PartialOrd + std::fmt::Display>(
    field: String,
    cdf: &[(T, f64)],
    lo: T,
    hi: Option<T>,
) -> Result<(), ScenarioError> {
    let bad = |m: String| Err(ScenarioError::new(field.clone(), m));
    if cdf.is_empty() {
        return bad("must list at least one [bytes, probability] point".into());
    }
    for (j, w) in cdf.iter().enumerate() {
        if w.0 < lo || hi.is_some_and(|h| w.0 > h) {
            let range = hi.map_or(format!("{lo}.."), |h| format!("{lo}..={h}"));
            return bad(format!(
                "point {j}: size {} is out of range; allowed: {range}",
                w.0
            ));
        }
        if !(w.1.is_finite() && (0.0..=1.0).contains(&w.1)) {
            return bad(format!("point {j}: probability {} is outside 0..=1", w.1));
        }
        if j > 0 && !(cdf[j - 1].0 < w.0 && cdf[j - 1].1 < w.1) {
            return bad(format!(
                "point {j}: sizes and probabilities must both strictly increase"
            ));
        }
    }
    if cdf[cdf.len() - 1].1 != 1.0 {
        return bad("the last probability must be 1".into());
    }
    Ok(())
}

pub(crate) fn plan_flow(i: usize, s: &FlowSpec, d: &Derived) -> Result<Flow, ScenarioError> {
    let f = |k: &str| format!("flows[{i}].{k}");
    if s.src >= d.ports {
        return Err(ports_err(f("src"), s.src, d));
    }
    if s.dst >= d.ports {
        return Err(ports_err(f("dst"), s.dst, d));
    }
    if s.prio > 7 {
        return Err(ScenarioError::new(
            f("prio"),
            format!("{} is out of range; allowed: 0..=7", s.prio),
        ));
    }
    let mtu = d.cfg.mtu_bytes;
    let size = match (s.size_bytes, &s.size_cdf) {
        (Some(b), None) => {
            if !(MIN_PACKET_BYTES..=mtu).contains(&b) {
                return Err(ScenarioError::new(
                    f("size_bytes"),
                    format!("{b} is out of range; allowed: {MIN_PACKET_BYTES}..={mtu} (switch.mtu_bytes)"),
                ));
            }
            SizeDist::Fixed(b)
        }
        (None, Some(cdf)) => {
            check_cdf(f("size_cdf"), cdf, MIN_PACKET_BYTES, Some(mtu))?;
            SizeDist::Steps(cdf.clone())
        }
        (Some(_), Some(_)) => {
            return Err(ScenarioError::new(
                f("size_cdf"),
                "give size_bytes or size_cdf, not both",
            ))
        }
        (None, None) => {
            return Err(ScenarioError::new(
                f("size_bytes"),
                "missing: give size_bytes or size_cdf",
            ))
        }
    };
    let line = d.rate_bps[s.src];
    let unused = |k: &str, set: bool| -> Result<(), ScenarioError> {
        if set {
            Err(ScenarioError::new(
                f(k),
                format!("not used by pattern {}", s.pattern.label()),
            ))
        } else {
            Ok(())
        }
    };
    let need = |k: &str, v: Option<u64>| -> Result<u64, ScenarioError> {
        match v {
            Some(0) => Err(ScenarioError::new(f(k), "must be at least 1")),
            Some(v) => Ok(v),
            None => Err(ScenarioError::new(
                f(k),
                format!("required by pattern {}", s.pattern.label()),
            )),
        }
    };
    let pattern = match s.pattern {
        PatternKind::Constant => {
            unused("on_cycles", s.on_cycles.is_some())?;
            unused("off_cycles", s.off_cycles.is_some())?;
            unused("burst_bytes", s.burst_bytes.is_some())?;
            unused("message_cdf", s.message_cdf.is_some())?;
            Pattern::Constant {
                rate_bps: rate_bps(&f, s.rate_gbps, line)?,
            }
        }
        PatternKind::OnOff => {
            unused("burst_bytes", s.burst_bytes.is_some())?;
            unused("message_cdf", s.message_cdf.is_some())?;
            Pattern::OnOff {
                rate_bps: rate_bps(&f, s.rate_gbps, line)?,
                on_cycles: need("on_cycles", s.on_cycles)?,
                off_cycles: need("off_cycles", s.off_cycles)?,
            }
        }
        PatternKind::Burst => {
            unused("rate_gbps", s.rate_gbps.is_some())?;
            unused("on_cycles", s.on_cycles.is_some())?;
            unused("off_cycles", s.off_cycles.is_some())?;
            unused("message_cdf", s.message_cdf.is_some())?;
            unused("stop_cycle", s.stop_cycle.is_some())?;
            let bytes = need("burst_bytes", s.burst_bytes)?;
            if bytes > 1 << 40 {
                return Err(ScenarioError::new(
                    f("burst_bytes"),
                    format!("{bytes} is out of range; allowed: 1..=2^40"),
                ));
            }
            Pattern::Burst { bytes }
        }
        PatternKind::Poisson => {
            unused("on_cycles", s.on_cycles.is_some())?;
            unused("off_cycles", s.off_cycles.is_some())?;
            unused("burst_bytes", s.burst_bytes.is_some())?;
            if s.size_cdf.is_some() {
                return Err(ScenarioError::new(
                    f("size_cdf"),
                    "not used by pattern Poisson: messages are cut into packets of size_bytes",
                ));
            }
            let cdf = s.message_cdf.as_ref().ok_or_else(|| {
                ScenarioError::new(f("message_cdf"), "required by pattern Poisson")
            })?;
            check_cdf(f("message_cdf"), cdf, 1, Some(1 << 32))?;
            Pattern::Poisson {
                rate_bps: rate_bps(&f, s.rate_gbps, line)?,
                message_cdf: cdf.clone(),
            }
        }
        PatternKind::Tcp(t) => {
            unused("rate_gbps", s.rate_gbps.is_some())?;
            unused("on_cycles", s.on_cycles.is_some())?;
            unused("off_cycles", s.off_cycles.is_some())?;
            unused("burst_bytes", s.burst_bytes.is_some())?;
            unused("message_cdf", s.message_cdf.is_some())?;
            unused("stop_cycle", s.stop_cycle.is_some())?;
            if s.size_cdf.is_some() {
                return Err(ScenarioError::new(
                    f("size_cdf"),
                    "not used by pattern Tcp: every packet but a finite flow's last is size_bytes",
                ));
            }
            Pattern::Tcp(plan_tcp(&f, &t)?)
        }
        PatternKind::Hpcc(c) | PatternKind::PowerTcp(c) | PatternKind::ThetaPowerTcp(c) => {
            let law = match s.pattern {
                PatternKind::Hpcc(_) => CcLaw::Hpcc,
                PatternKind::PowerTcp(_) => CcLaw::PowerTcp,
                _ => CcLaw::ThetaPowerTcp,
            };
            for (key, set) in [
                ("rate_gbps", s.rate_gbps.is_some()),
                ("on_cycles", s.on_cycles.is_some()),
                ("off_cycles", s.off_cycles.is_some()),
                ("burst_bytes", s.burst_bytes.is_some()),
                ("message_cdf", s.message_cdf.is_some()),
                ("size_cdf", s.size_cdf.is_some()),
            ] {
                unused(key, set)?;
            }
            Pattern::IntCc(plan_int_cc(&f, &c, line, law)?)
        }
        PatternKind::Dcqcn(c) => {
            unused("on_cycles", s.on_cycles.is_some())?;
            unused("off_cycles", s.off_cycles.is_some())?;
            unused("burst_bytes", s.burst_bytes.is_some())?;
            if s.size_cdf.is_some() {
                return Err(ScenarioError::new(
                    f("size_cdf"),
                    "not used by pattern Dcqcn: every packet is size_bytes",
                ));
            }
            let messages = match &s.message_cdf {
                None if s.rate_gbps.is_some() => {
                    return Err(ScenarioError::new(
                        f("rate_gbps"),
                        "not used by pattern Dcqcn without message_cdf (the rate is R_C)",
                    ))
                }
                None => None,
                Some(cdf) => {
                    check_cdf(f("message_cdf"), cdf, 1, Some(1 << 32))?;
                    if s.rate_gbps.is_none() {
                        return Err(ScenarioError::new(
                            f("rate_gbps"),
                            "required by pattern Dcqcn with message_cdf (the offered load)",
                        ));
                    }
                    Some(MessageLoad {
                        rate_bps: rate_bps(&f, s.rate_gbps, line)?,
                        message_cdf: cdf.clone(),
                    })
                }
            };
            let qp = match (&messages, c.qp) {
                (None, Some(_)) => {
                    return Err(ScenarioError::new(
                        f("pattern.dcqcn.qp"),
                        "not used without message_cdf (a long-lived flow is one queue pair)",
                    ))
                }
                (None, None) => QpMode::Pair,
                (Some(_), qp) => qp.unwrap_or_default(),
            };
            Pattern::Dcqcn(DcqcnPlan {
                rp: plan_dcqcn(&f, &c, line, qp)?,
                messages,
                qp,
            })
        }
    };
    let stop_cycle = s.stop_cycle.unwrap_or(u64::MAX);
    if stop_cycle <= s.start_cycle {
        return Err(ScenarioError::new(
            f("stop_cycle"),
            format!("{stop_cycle} must be after start_cycle ({})", s.start_cycle),
        ));
    }
    Ok(Flow {
        id: i as u32,
        src: s.src as u8,
        dst: s.dst as u8,
        prio: s.prio,
        size,
        pattern,
        start_cycle: s.start_cycle,
        stop_cycle,
        tuple: None,
        ecn: s.ecn,
    })
}

/// The 5-tuple of flow `n`, which flow `i` names in `connection_of`: `n` must be another
/// flow that is not itself a re-route, and both must be TCP or both not.
pub(crate) fn connection_tuple(
    i: usize,
    n: usize,
    specs: &[FlowSpec],
    flows: &[Flow],
) -> Result<FiveTuple, ScenarioError> {
    let field = format!("flows[{i}].connection_of");
    let Some(first) = flows.get(n).filter(|_| n != i) else {
        return Err(ScenarioError::new(
            field,
            format!(
                "{n} is out of range; allowed: another flow, 0..={} except {i}",
                flows.len() - 1
            ),
        ));
    };
    if specs[n].connection_of.is_some() {
        return Err(ScenarioError::new(
            field,
            format!("flow {n} is itself a re-route; name the first flow of the connection"),
        ));
    }
    let tcp = |f: &Flow| matches!(f.pattern, Pattern::Tcp(_));
    if tcp(first) != tcp(&flows[i]) {
        return Err(ScenarioError::new(
            field,
            format!("flow {n} and this flow must both be tcp or both not (one connection)"),
        ));
    }
    let proto = if tcp(first) {
        FiveTuple::TCP
    } else {
        FiveTuple::UDP
    };
    Ok(first.five_tuple(proto))
}

/// `v` if it is in `range`, else the error naming `field` and the range.
fn whole(
    field: String,
    v: u64,
    range: std::ops::RangeInclusive<u64>,
) -> Result<u64, ScenarioError> {
    if range.contains(&v) {
        Ok(v)
    } else {
        Err(ScenarioError::new(
            field,
            format!(
                "{v} is out of range; allowed: {}..={}",
                range.start(),
                range.end()
            ),
        ))
    }
}

/// `v` if it is a fraction in (0, 1], else the error naming `field` (`name` in the range).
fn fraction(field: String, name: &str, v: f64) -> Result<f64, ScenarioError> {
    if v.is_finite() && v > 0.0 && v <= 1.0 {
        Ok(v)
    } else {
        Err(ScenarioError::new(
            field,
            format!("{v} is out of range; allowed: 0 < {name} <= 1"),
        ))
    }
}

/// Check a `dcqcn` pattern's keys against their ranges; errors name `pattern.dcqcn.KEY`.
/// The defaults are the paper's for `qp = "pair"` ([`DcqcnParams`]) and ns-3's for
/// `qp = "message"` ([`Ns3Dcqcn`]); each mode refuses the keys of the other's RP.
pub(crate) fn plan_dcqcn(
    f: &dyn Fn(&str) -> String,
    c: &DcqcnSpec,
    line_bps: u64,
    qp: QpMode,
) -> Result<DcqcnParams, ScenarioError> {
    type D = DcqcnParams;
    type N = Ns3Dcqcn;
    let k = |key: &str| f(&format!("pattern.dcqcn.{key}"));
    let refused = match qp {
        QpMode::Message => c
            .b_bytes
            .map(|_| ("b_bytes", "ns-3's reaction point has no byte counter")),
        QpMode::Pair => [("decrease_us", c.decrease_us), ("nack_us", c.nack_us)]
            .into_iter()
            .find(|(_, v)| v.is_some())
            .map(|(key, _)| (key, "used only with a queue pair per message")),
    };
    if let Some((key, why)) = refused {
        return Err(ScenarioError::new(
            k(key),
            format!("not used with qp = \"{}\": {why}", qp.name()),
        ));
    }
    let ns3 = qp == QpMode::Message;
    let pick = |paper: u64, ns3_value: u64| if ns3 { ns3_value } else { paper };
    let int = |key: &str, v: Option<u64>, lo, hi, d| whole(k(key), v.unwrap_or(d), lo..=hi);
    let g = fraction(k("g"), "g", c.g.unwrap_or(if ns3 { N::G } else { D::G }))?;
    let line_mbps = line_bps / 1_000_000;
    let (us, mbps) = (1000, 1_000_000);
    let f_steps = pick(D::F as u64, N::F as u64);
    Ok(DcqcnParams {
        g,
        k_ns: int("k_us", c.k_us, 1, 1_000_000, pick(D::K_US, N::K_US))? * us,
        t_ns: int("t_us", c.t_us, 1, 1_000_000, pick(D::T_US, N::T_US))? * us,
        b_bytes: int("b_bytes", c.b_bytes, 1, 1 << 40, D::B_BYTES)?,
        f: int("f", c.f.map(u64::from), 0, 1000, f_steps)? as u32,
        r_ai_bps: int(
            "r_ai_mbps",
            c.r_ai_mbps,
            1,
            line_mbps,
            pick(D::R_AI_MBPS, N::R_AI_MBPS),
        )? * mbps,
        r_hai_bps: int(
            "r_hai_mbps",
            c.r_hai_mbps,
            1,
            line_mbps,
            pick(D::R_HAI_MBPS, N::R_HAI_MBPS),
        )? * mbps,
        n_ns: int("n_us", c.n_us, 0, 1_000_000, pick(D::N_US, N::N_US))? * us,
        min_rate_bps: int(
            "min_rate_mbps",
            c.min_rate_mbps,
            1,
            line_mbps,
            pick(D::MIN_RATE_MBPS, N::MIN_RATE_MBPS),
        )? * mbps,
        cnp_delay_ns: int(
            "cnp_delay_us",
            c.cnp_delay_us,
            0,
            1_000_000,
            D::CNP_DELAY_US,
        )? * us,
        line_bps,
        decrease_ns: int("decrease_us", c.decrease_us, 1, 1_000_000, N::DECREASE_US)? * us,
        nack_ns: int("nack_us", c.nack_us, 0, 1_000_000, N::NACK_US)? * us,
    })
}

/// Check an `hpcc`, `powertcp` or `theta_powertcp` pattern's keys (named
/// `pattern.LAW.KEY`) and fill in ns3-datacenter's defaults ([`IntCcParams`]).
pub(crate) fn plan_int_cc(
    f: &dyn Fn(&str) -> String,
    c: &IntCcSpec,
    line_bps: u64,
    law: CcLaw,
) -> Result<IntCcParams, ScenarioError> {
    type P = IntCcParams;
    let k = |key: &str| f(&format!("pattern.{}.{key}", law.name()));
    let refused = match law {
        CcLaw::Hpcc => c.gamma.map(|_| "gamma"),
        CcLaw::PowerTcp => c.mi_thresh.map(|_| "mi_thresh"),
        CcLaw::ThetaPowerTcp => c
            .mi_thresh
            .map(|_| "mi_thresh")
            .or(c.u_target.map(|_| "u_target")),
    };
    if let Some(key) = refused {
        return Err(ScenarioError::new(
            k(key),
            format!("not used by {}; remove the key", law.name()),
        ));
    }
    let int = |key: &str, v: Option<u64>, lo, hi, d| whole(k(key), v.unwrap_or(d), lo..=hi);
    let frac = |key: &str, v: Option<f64>, d: f64| fraction(k(key), key, v.unwrap_or(d));
    let line_mbps = line_bps / 1_000_000;
    let (ai, gamma) = match law {
        CcLaw::Hpcc => (P::HPCC_RATE_AI_MBPS, P::POWERTCP_GAMMA),
        CcLaw::PowerTcp => (P::POWERTCP_BETA_MBPS, P::POWERTCP_GAMMA),
        CcLaw::ThetaPowerTcp => (P::POWERTCP_BETA_MBPS, P::THETA_GAMMA),
    };
    Ok(IntCcParams {
        law,
        base_rtt_ns: int("base_rtt_us", c.base_rtt_us, 1, 100_000, P::BASE_RTT_US)? * 1000,
        rate_ai_bps: int("rate_ai_mbps", c.rate_ai_mbps, 1, line_mbps, ai)? * 1_000_000,
        min_rate_bps: int(
            "min_rate_mbps",
            c.min_rate_mbps,
            1,
            line_mbps,
            P::MIN_RATE_MBPS,
        )? * 1_000_000,
        u_target: frac("u_target", c.u_target, P::U_TARGET)?,
        mi_thresh: int(
            "mi_thresh",
            c.mi_thresh.map(u64::from),
            0,
            1000,
            P::MI_THRESH as u64,
        )? as u32,
        gamma: frac("gamma", c.gamma, gamma)?,
        line_bps,
    })
}

/// Check a `tcp` pattern's parameters (named `flows[i].pattern.tcp.KEY`) and fill in the
/// defaults.
pub(crate) fn plan_tcp(
    f: &dyn Fn(&str) -> String,
    t: &TcpSpec,
) -> Result<TcpParams, ScenarioError> {
    let k = |key: &str| f(&format!("pattern.tcp.{key}"));
    let check = |key: &str, v: u64, lo, hi| whole(k(key), v, lo..=hi);
    let base_rtt_us = check(
        "base_rtt_us",
        t.base_rtt_us.unwrap_or(TcpParams::BASE_RTT_US),
        1,
        1_000_000,
    )?;
    let min_rto_us = check(
        "min_rto_us",
        t.min_rto_us.unwrap_or(TcpParams::MIN_RTO_US),
        1,
        10_000_000,
    )?;
    let max_rto_us = match t.max_rto_us {
        Some(v) => check("max_rto_us", v, min_rto_us, 100_000_000)?,
        None => min_rto_us * TcpParams::MAX_RTO_FACTOR,
    };
    let init_cwnd = check(
        "init_cwnd",
        t.init_cwnd.unwrap_or(TcpParams::INIT_CWND) as u64,
        1,
        1024,
    )? as u32;
    let flow_bytes = t
        .flow_bytes
        .map(|b| check("flow_bytes", b, 1, 1 << 40))
        .transpose()?;
    let dctcp_shift_g = match (t.cc.unwrap_or_default(), t.dctcp_shift_g) {
        (Cc::Dctcp, g) => Some(check(
            "dctcp_shift_g",
            g.unwrap_or(TcpParams::DCTCP_SHIFT_G) as u64,
            0,
            16,
        )? as u32),
        (Cc::Reno, None) => None,
        (Cc::Reno, Some(_)) => {
            return Err(ScenarioError::new(
                k("dctcp_shift_g"),
                "not used by cc = \"reno\"; allowed only with cc = \"dctcp\"",
            ))
        }
    };
    Ok(TcpParams {
        base_rtt_us,
        min_rto_us,
        max_rto_us,
        init_cwnd,
        flow_bytes,
        karn: t.karn.unwrap_or(false),
        dctcp_shift_g,
        ns2: plan_ns2(&k, t)?,
    })
}

/// The ns-2 keys of a `tcp` flow: only with `flavor = "ns2"`, which refuses the model's
/// timer and window keys.
fn plan_ns2(k: &dyn Fn(&str) -> String, t: &TcpSpec) -> Result<Option<Ns2Params>, ScenarioError> {
    let model = [
        ("min_rto_us", t.min_rto_us.is_some()),
        ("max_rto_us", t.max_rto_us.is_some()),
        ("init_cwnd", t.init_cwnd.is_some()),
        ("karn", t.karn.is_some()),
    ];
    let n = &t.ns2;
    let ns2 = [
        ("window_", n.window.is_some()),
        ("windowInit_", n.window_init.is_some()),
        ("syn_", n.syn.is_some()),
        ("tcpTick_", n.tcp_tick_s.is_some()),
        ("rtxcur_init_", n.rtxcur_init_s.is_some()),
        ("minrto_", n.minrto_s.is_some()),
        ("maxrto_", n.maxrto_s.is_some()),
    ];
    let flavor = t.flavor.unwrap_or_default();
    let (refused, why): (&[(&str, bool)], &str) = match flavor {
        Flavor::Model => (&ns2, "an ns-2 key; allowed only with flavor = \"ns2\""),
        Flavor::Ns2 => (&model, "not used by flavor = \"ns2\" (ns-2's keys: window_, windowInit_, syn_, tcpTick_, rtxcur_init_, minrto_, maxrto_)"),
    };
    if let Some((key, _)) = refused.iter().find(|(_, set)| *set) {
        return Err(ScenarioError::new(k(key), why));
    }
    if flavor == Flavor::Model {
        return Ok(None);
    }
    let d = Ns2Params::DEFAULT;
    let count = |key: &str, v: Option<u32>, lo: u32, hi: u32, def: u32| match v {
        None => Ok(def),
        Some(x) if (lo..=hi).contains(&x) => Ok(x),
        Some(x) => Err(ScenarioError::new(
            k(key),
            format!("{x} is out of range; allowed: {lo}..={hi}"),
        )),
    };
    // Seconds to ns, within `lo..=hi` seconds.
    let secs = |key: &str, v: Option<f64>, lo: f64, hi: f64, def: u64| match v {
        None => Ok(def),
        Some(x) if x.is_finite() && (lo..=hi).contains(&x) => Ok((x * 1e9).round() as u64),
        Some(x) => Err(ScenarioError::new(
            k(key),
            format!("{x} is out of range; allowed: {lo}..={hi} (seconds)"),
        )),
    };
    let window = count("window_", n.window, 1, 1 << 20, d.window)?;
    let minrto = secs("minrto_", n.minrto_s, 0.0, 1000.0, d.minrto)?;
    Ok(Some(Ns2Params {
        window,
        window_init: count("windowInit_", n.window_init, 1, window, d.window_init)?,
        syn: n.syn.unwrap_or(d.syn),
        tick: secs("tcpTick_", n.tcp_tick_s, 1e-9, 1.0, d.tick)?,
        rtxcur_init: secs("rtxcur_init_", n.rtxcur_init_s, 1e-9, 1000.0, d.rtxcur_init)?,
        minrto,
        maxrto: secs(
            "maxrto_",
            n.maxrto_s,
            (minrto as f64 / 1e9).max(1e-9),
            100_000.0,
            d.maxrto,
        )?,
    }))
}

pub(crate) fn plan_pfc(
    i: usize,
    s: &PfcScriptSpec,
    d: &Derived,
) -> Result<(u64, u8, PfcFrame), ScenarioError> {
    let f = |k: &str| format!("pfc_script[{i}].{k}");
    if s.port >= d.ports {
        return Err(ports_err(f("port"), s.port, d));
    }
    if s.port_level {
        if !s.classes.is_empty() {
            return Err(ScenarioError::new(
                f("classes"),
                "a port-level frame carries every class: leave classes out",
            ));
        }
        let frame = PfcFrame {
            class_enable: 0xFF,
            quanta: [s.quanta; 8],
            port_level: true,
        };
        return Ok((s.cycle, s.port as u8, frame));
    }
    if s.classes.is_empty() {
        return Err(ScenarioError::new(
            f("classes"),
            "must list at least one class (0..=7)",
        ));
    }
    let mut frame = PfcFrame::default();
    for &c in &s.classes {
        if c > 7 {
            return Err(ScenarioError::new(
                f("classes"),
                format!("class {c} is out of range; allowed: 0..=7"),
            ));
        }
        frame.class_enable |= 1 << c;
        frame.quanta[c as usize] = s.quanta;
    }
    Ok((s.cycle, s.port as u8, frame))
}
