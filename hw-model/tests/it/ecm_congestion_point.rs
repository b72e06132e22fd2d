//! The ECM congestion point bit for bit (`hw_model::ecm_cp`, ECM 3.2 and docs/ecm.md): the
//! sampling boundaries, the feedback of a sample at each threshold, the tag filter, the
//! frame's fields, the random interval, the CP of each queue and the edge of `qlen`. No
//! whole-model test reaches these one by one (a sampled frame one byte early, a bound off by
//! one, a `Qscale` applied to `Qoff` only); each test pins a behaviour that mutation testing
//! found unchecked (docs/testing.md).

use crate::wires::Wires;
use hw_model::config::{EcmParams, QUEUES};
use hw_model::ecm_cp::{feedback, pages, Ecm, EcmCp, EcmIn, ACC_BITS, QLEN_BITS};
use hw_model::ingress::Ingress;
use hw_model::packet_queue::Desc;
use hw_model::ports::{Dequeue, EcnLook};
use hw_model::{CmTag, Derived, EcmConfig, EcmFrame, EcmKind, PacketHdr, SwitchConfig};
use rtl::{Block, Clocked, Lfsr32};

const DST: u8 = 5;
const PRIO: u8 = 1;
/// The CPID of queue `PRIO` of port `DST` with the default `switch_id` 1.
const CPID: u16 = 1 << 9 | (DST as u16) << 3 | PRIO as u16;

/// The small switch with congestion points on priority `PRIO`, then `f`.
fn derived(f: impl FnOnce(&mut EcmConfig)) -> Derived {
    let mut c = SwitchConfig::small();
    c.ecm.priorities = vec![PRIO];
    f(&mut c.ecm);
    c.build().unwrap()
}

/// The default thresholds (`Qeq` 256, `Qmc` 512, `Qsc` 1536 pages) with a fixed interval
/// of `sf` bytes (`Sr = 0`) and `Qscale = 2^qscale_log2`.
fn fixed_interval(sf: u32, qscale_log2: u32) -> EcmParams {
    derived(|c| {
        c.sf_bytes = sf;
        c.sr_bytes = 0;
        c.qscale_log2 = qscale_log2;
    })
    .ecm
}

/// The CP of queue `PRIO` of port `DST` with `qlen` pages queued and `qold` at the last sample.
fn cp_at(e: &EcmParams, qlen: u32, qold: u32) -> EcmCp {
    let mut cp = EcmCp::new(e, DST, PRIO);
    cp.qlen = qlen;
    cp.qold = qold;
    cp
}

/// A frame of `len` bytes from port 2 to the CP's queue, with a CM-Tag naming `tag`.
fn hdr(len: u16, tag: Option<u16>) -> PacketHdr {
    PacketHdr {
        src: 2,
        dst: DST,
        prio: PRIO,
        len,
        cm_tag: tag.map(|cpid| CmTag {
            cpid,
            timestamp: 7,
            unit: 3,
        }),
        ..PacketHdr::default()
    }
}

#[test]
fn a_frame_counts_its_length_in_64_byte_pages_rounded_up() {
    let got = [0, 1, 64, 65, 1500].map(pages);
    assert_eq!(got, [0, 1, 1, 2, 24]);
}

#[test]
fn len_now_adds_the_cycles_arrivals_to_the_registered_length() {
    let e = fixed_interval(1 << 18, 0);
    let mut cp = cp_at(&e, 100, 0);
    assert_eq!(cp.len_now(), 100);
    cp.arrive(&e, &hdr(1500, None));
    assert_eq!((cp.qlen, cp.len_now()), (100, 124));
}

/// `CPID = switch_id << 9 | port << 3 | queue`; the LFSR starts at `lfsr_seed ^ CPID` and
/// each interval is `Sf` plus a draw in `0..=Sr` (the text), or `Sf - Sr` plus a draw in
/// `0..=2 Sr` (the pseudo-code, `sr_centered`); a sample draws the next one.
#[test]
fn the_interval_is_sf_plus_a_draw_from_the_cps_own_lfsr() {
    for centred in [false, true] {
        let e = derived(|c| {
            c.sf_bytes = 5000;
            c.sr_bytes = 3000;
            c.sr_centered = centred;
        })
        .ecm;
        let mut lfsr = Lfsr32::new(0xACE1 ^ CPID as u32);
        let mut draw = || {
            if centred {
                2000 + lfsr.draw(6000)
            } else {
                5000 + lfsr.draw(3000)
            }
        };
        let mut cp = cp_at(&e, 0, 0);
        assert_eq!(cp.cpid, CPID);
        let first = draw();
        assert_eq!(cp.interval, first, "centred: {centred}");
        // An empty queue samples at `S / 2`: one frame of `S` bytes is sampled.
        cp.arrive(&e, &hdr(first as u16, None));
        assert_eq!(cp.samp_byte_acc, 0, "sampled");
        assert_eq!(cp.interval, draw(), "the next draw, centred: {centred}");
    }
}

/// The frame that brings the byte count to `S` exactly is sampled (the text's `L >= S`);
/// one byte less is not. `S` is halved (`Sscale = 2`) when the queue is empty or above
/// `Qmc`, not at `Qmc`.
#[test]
fn a_frame_is_sampled_when_the_bytes_reach_the_interval() {
    let e = fixed_interval(4000, 0);
    let sampled = |qlen: u32, len: u16| {
        let mut cp = cp_at(&e, qlen, qlen);
        cp.arrive(&e, &hdr(len, None));
        let acc = cp.samp_byte_acc;
        assert!(acc == 0 || acc == len as u32, "{acc}");
        acc == 0
    };
    let (qeq, qmc) = (e.qeq, e.qmc);
    assert!(sampled(qeq + 44, 4000), "at S");
    assert!(!sampled(qeq + 44, 3999), "one byte below S");
    assert!(
        !sampled(qeq + 44, 2000),
        "S / 2 only when empty or above Qmc"
    );
    assert!(sampled(0, 2000), "empty: S / 2");
    assert!(!sampled(0, 1999), "empty: one byte below S / 2");
    assert!(!sampled(qmc, 2000), "at Qmc: S");
    assert!(sampled(qmc + 1, 2000), "above Qmc: S / 2");
}

/// Bytes add up over frames until the sample, which restarts the count.
#[test]
fn the_byte_count_adds_frames_until_the_sample() {
    let e = fixed_interval(4000, 0);
    let mut cp = cp_at(&e, e.qeq + 44, e.qeq + 44);
    for (len, acc) in [(1000, 1000), (1500, 2500), (1499, 3999), (1, 0), (700, 700)] {
        cp.arrive(&e, &hdr(len, None));
        assert_eq!(cp.samp_byte_acc, acc, "after {len} B");
    }
}

/// Known answers with `Qeq` 256, `Qmc` 512, `Qsc` 1536 pages: each threshold and each
/// saturation bound, from both sides.
#[test]
fn feedback_at_each_threshold_and_bound() {
    let e = fixed_interval(0, 0);
    assert_eq!((e.qeq, e.qmc, e.qsc), (256, 512, 1536));
    let r = EcmKind::Regular;
    for (q, qold, want) in [
        (1537, 0, (EcmKind::Zero, 0, 0, false)),
        (1536, 0, (EcmKind::Max, 256, 512, false)),
        (513, 0, (EcmKind::Max, 256, 512, false)),
        (512, 0, (r, 256, 512, true)),
        (511, 0, (r, 255, 511, false)),
        (300, 290, (r, 44, 10, false)),
        (290, 300, (r, 34, -10, false)),
        (256, 256, (r, 0, 0, false)),
        (0, 0, (r, -256, 0, false)),
        (0, 511, (r, -256, -511, false)),
        (0, 512, (r, -256, -512, true)),
        (0, 600, (r, -256, -512, true)),
    ] {
        assert_eq!(feedback(&e, q, qold), want, "q {q}, qold {qold}");
    }
}

/// Above equilibrium a sample reports to the sampled frame's source whatever its tag, with
/// `Qoff` and `Qdelta` both scaled by `Qscale`, the tag's timestamp and unit, and the
/// sampled header; `qold` takes the queue length the frame saw.
#[test]
fn a_sample_above_equilibrium_reports_scaled_qoff_and_qdelta_to_the_source() {
    let e = fixed_interval(0, 2);
    let mut cp = cp_at(&e, e.qeq + 10, e.qeq + 4);
    let h = hdr(64, Some(CPID ^ 1));
    let f = cp.arrive(&e, &h).1;
    let want = EcmFrame {
        port: 2,
        cpid: CPID,
        kind: EcmKind::Regular,
        qoff: 10 << 2,
        qdelta: 6 << 2,
        q: false,
        timestamp: 7,
        unit: 3,
        sampled: h,
    };
    assert_eq!(f, Some(want));
    assert_eq!((cp.frames, cp.qold), ([1, 0, 0], e.qeq + 10));
}

/// At or below equilibrium only a frame tagged with this CP's CPID gets feedback, and none
/// at all when `Qoff` and `Qdelta` are both 0.
#[test]
fn at_or_below_equilibrium_only_the_associated_source_gets_feedback() {
    let e = fixed_interval(0, 0);
    let qeq = e.qeq;
    let frame = |qlen: u32, qold: u32, tag: Option<u16>| {
        let mut cp = cp_at(&e, qlen, qold);
        cp.arrive(&e, &hdr(64, tag)).1.map(|f| (f.qoff, f.qdelta))
    };
    assert_eq!(frame(qeq, qeq, Some(CPID)), None, "Qoff = Qdelta = 0");
    assert_eq!(frame(qeq, qeq - 5, Some(CPID)), Some((0, 5)));
    assert_eq!(frame(qeq, qeq - 5, Some(CPID ^ 1)), None);
    assert_eq!(frame(qeq, qeq - 5, None), None);
    assert_eq!(frame(qeq - 3, qeq, Some(CPID)), Some((-3, -3)));
    assert_eq!(frame(qeq - 3, qeq, Some(CPID ^ 1)), None);
    assert_eq!(frame(qeq + 3, qeq + 3, None), Some((3, 0)));
}

/// ECM-Max and ECM(0,0) skip the tag filter and carry `Q = 0`; a regular frame at the
/// `Qdelta` bound carries `Q` only with `qsat_enable`. Each kind is counted apart.
#[test]
fn ecm_max_and_ecm_zero_skip_the_filter_and_q_follows_qsat_enable() {
    let e = fixed_interval(0, 1);
    let (qeq, qmc, qsc) = (e.qeq as i32, e.qmc, e.qsc);
    let mut cp = cp_at(&e, qmc + 1, 0);
    let f = cp.arrive(&e, &hdr(64, None)).1.expect("ECM-Max");
    assert_eq!(
        (f.kind, f.qoff, f.qdelta, f.q),
        (EcmKind::Max, qeq << 1, 4 * qeq, false)
    );
    assert_eq!(cp.frames, [0, 1, 0]);
    let mut cp = cp_at(&e, qsc + 1, 0);
    let f = cp.arrive(&e, &hdr(64, None)).1.expect("ECM(0,0)");
    assert_eq!(
        (f.kind, f.qoff, f.qdelta, f.q),
        (EcmKind::Zero, 0, 0, false)
    );
    assert_eq!(cp.frames, [0, 0, 1]);
    for qsat in [true, false] {
        let e = EcmParams {
            qsat_enable: qsat,
            ..e.clone()
        };
        let f = cp_at(&e, qmc, 0).arrive(&e, &hdr(64, None)).1.unwrap();
        assert_eq!((f.kind, f.q), (EcmKind::Regular, qsat), "at +2 Qeq");
    }
}

/// Each egress queue of an enabled priority has its own CP, found by (port, queue); the
/// other queues have none.
#[test]
fn every_queue_of_an_enabled_priority_has_its_own_cp() {
    let d = derived(|c| c.priorities = vec![1, 3]);
    let ecm = Ecm::new(&d);
    for p in 0..d.ports {
        for q in 0..QUEUES {
            let cp = ecm.cp(p, q).map(|i| (ecm.cps[i].port, ecm.cps[i].queue));
            let want = (q == 1 || q == 3).then_some((p as u8, q as u8));
            assert_eq!(cp, want, "port {p} queue {q}");
        }
    }
}

/// One admitted packet on ingress port `src` to queue `PRIO` of `DST`, pending as this
/// cycle's newest.
fn admit(ingress: &mut Ingress, src: u8, len: u16) {
    ingress.ports[src as usize].pending.push_back(Desc {
        hdr: PacketHdr {
            src,
            ..hdr(len, Some(CPID))
        },
        ncells: 1,
        ..Desc::default()
    });
}

/// The block's cycle: the admitted ports' packets arrive at their CP in the flow-control
/// phase (each sampled one sends its frame), `qlen` takes them at the edge, and the
/// transmitters' dequeues leave it at a later edge. A cycle with one arrival, or one
/// departure, alone moves `qlen` too.
#[test]
fn admitted_packets_reach_their_cp_and_dequeues_leave_it_at_the_edge() {
    let d = derived(|c| {
        c.sf_bytes = 0;
        c.sr_bytes = 0;
    });
    let mut ingress = Ingress::new(&d);
    let mut ecm = Ecm::new(&d);
    let i = ecm.cp(DST as usize, PRIO as usize).unwrap();
    let mut out = Vec::new();
    admit(&mut ingress, 0, 1500);
    ecm.eval(
        0,
        EcmIn {
            admitted: 1,
            ingress: &ingress,
        },
        &mut out,
    )
    .unwrap();
    assert_eq!((ecm.cps[i].qlen, ecm.cps[i].len_now()), (0, 24));
    assert_eq!(out.iter().map(|f| f.port).collect::<Vec<_>>(), [0]);
    ecm.commit(0).unwrap();
    assert_eq!(ecm.cps[i].qlen, 24, "one arrival");

    admit(&mut ingress, 2, 64);
    admit(&mut ingress, 3, 65);
    out.clear();
    ecm.eval(
        1,
        EcmIn {
            admitted: 0b1100,
            ingress: &ingress,
        },
        &mut out,
    )
    .unwrap();
    ecm.commit(1).unwrap();
    assert_eq!(ecm.cps[i].qlen, 27, "two arrivals");

    let dq = Dequeue {
        port: DST,
        queue: PRIO,
        list: 0,
        ncells: 1,
        len: 1500,
        ecn: EcnLook::default(),
    };
    ecm.departures(&[dq]);
    assert_eq!(ecm.cps[i].qlen, 27, "until the edge");
    ecm.commit(2).unwrap();
    assert_eq!(ecm.cps[i].qlen, 3, "one departure");
}

/// A CP shows its five registers in `egress.pNN.qQ.ecm`; a queue without one shows nothing.
#[test]
fn a_cp_probes_its_five_registers() {
    let mut ecm = Ecm::new(&derived(|_| {}));
    let i = ecm.cp(DST as usize, PRIO as usize).unwrap();
    let cp = &mut ecm.cps[i];
    (cp.qlen, cp.samp_byte_acc, cp.qold) = (100, 5, 7);
    let (interval, lfsr) = (cp.interval as u64, cp.lfsr.value() as u64);
    let mut w = Wires::default();
    ecm.probe_queue(DST as usize, PRIO as usize, &mut w);
    let want = [
        (QLEN_BITS, 100),
        (ACC_BITS, 5),
        (ACC_BITS, interval),
        (32, lfsr),
        (QLEN_BITS, 7),
    ];
    assert_eq!(w.0, want);
    let mut none = Wires::default();
    ecm.probe_queue(DST as usize, PRIO as usize + 1, &mut none);
    assert!(none.0.is_empty());
}
