//! The ECN marker's registers and its draw, bit for bit (`hw_model::ecn_marker`): what the
//! statistical tests of `ecn.rs` cannot see (a bound on the mark count allows a draw off
//! by one, or a wire left out of the probes). Each test pins a behaviour that mutation
//! testing found unchecked (docs/testing.md).

use crate::wires::Wires;
use hw_model::config::{EcnConfig, EcnCurve, EcnUnit};
use hw_model::ecn_marker::{decide, EcnIn, EcnMarker, QLEN_BITS};
use hw_model::ingress::Ingress;
use hw_model::packet_queue::Desc;
use hw_model::ports::{Dequeue, EcnLook};
use hw_model::{Derived, Ecn, MarkOn, PacketHdr, SwitchConfig};
use rtl::{Block, Clocked, Lfsr32};

const DST: usize = 5;
const PRIO: usize = 1;

fn marking(f: impl FnOnce(&mut EcnConfig)) -> Derived {
    let mut c = SwitchConfig::small();
    c.lossless_priorities = vec![];
    c.ecn = EcnConfig {
        priorities: vec![PRIO as u8],
        unit: EcnUnit::Bytes,
        kmin: 20_000,
        kmax: 600_000,
        pmax: 0.5,
        ..EcnConfig::default()
    };
    f(&mut c.ecn);
    c.build().unwrap()
}

/// The draw marks iff `floor(r * span / 2^16) < q - Kmin`: with `span = 2^16` the random
/// threshold is the 16 drawn bits `r` themselves, so `q = Kmin + r` is not marked and
/// `q = Kmin + r + 1` is.
#[test]
fn a_draw_equal_to_the_length_above_kmin_does_not_mark() {
    let curve = EcnCurve {
        kmin: 1000,
        kmax: 1000 + (1 << 16),
        pmax_q16: 1 << 16,
        span: 1 << 16,
    };
    for seed in [1, 0xACE1, 0xDEAD_BEEF] {
        let r = Lfsr32::new(seed).advance(16) & 0xFFFF;
        let mut lfsr = Lfsr32::new(seed);
        assert!(!decide(&curve, curve.kmin + r, &mut lfsr), "seed {seed:#x}");
        let mut lfsr = Lfsr32::new(seed);
        assert!(
            decide(&curve, curve.kmin + r + 1, &mut lfsr),
            "seed {seed:#x}"
        );
    }
}

/// The RED line runs from just above `Kmin` to `Kmax` inclusive: a packet at `Kmax` is
/// decided by a draw (the LFSR moves), one above `Kmax` is marked without one.
#[test]
fn a_packet_at_kmax_draws_and_one_above_is_marked_without_drawing() {
    let curve = EcnCurve {
        kmin: 1000,
        kmax: 2000,
        pmax_q16: 1 << 15,
        span: 2000,
    };
    let mut lfsr = Lfsr32::new(0xACE1);
    decide(&curve, curve.kmax, &mut lfsr);
    assert_ne!(lfsr.value(), 0xACE1, "a draw at Kmax");
    let before = lfsr.value();
    assert!(decide(&curve, curve.kmax + 1, &mut lfsr));
    assert_eq!(lfsr.value(), before, "no draw above Kmax");
}

/// A marking queue shows `qlen`, its LFSR and its mark count; a queue that does not mark
/// shows nothing.
#[test]
fn a_marking_queue_probes_its_length_lfsr_and_marks() {
    let d = marking(|_| {});
    let m = EcnMarker::new(&d);
    let i = m.queue(DST, PRIO).unwrap();
    let mut w = Wires::default();
    m.probe_queue(DST, PRIO, &mut w);
    let lfsr = m.queues[i].lfsr.value() as u64;
    assert_eq!(w.0, [(QLEN_BITS, 0), (32, lfsr), (48, 0)]);
    let mut none = Wires::default();
    m.probe_queue(DST, PRIO + 1, &mut none);
    assert!(none.0.is_empty());
}

/// One admitted packet of `len` bytes to queue `PRIO` of `DST` from port 0, through the
/// marker's phase and its edge.
fn admit(m: &mut EcnMarker, ingress: &mut Ingress, len: u16) -> Result<(), rtl::BlockError> {
    let hdr = PacketHdr {
        dst: DST as u8,
        prio: PRIO as u8,
        len,
        ecn: Ecn::NotEct,
        ..PacketHdr::default()
    };
    ingress.ports[0].pending.push_back(Desc {
        hdr,
        ncells: 1,
        ..Desc::default()
    });
    let mut ce_ports = 0;
    m.eval(
        0,
        EcnIn {
            admitted: 1,
            ingress,
        },
        &mut ce_ports,
    )?;
    m.commit(0)
}

/// `qlen` may reach the largest value of its 32 bits; one byte more is refused, naming
/// the queue.
#[test]
fn qlen_fills_its_register_and_refuses_one_byte_more() {
    let d = marking(|_| {});
    let mut ingress = Ingress::new(&d);
    let mut m = EcnMarker::new(&d);
    let i = m.queue(DST, PRIO).unwrap();
    m.queues[i].qlen = u32::MAX - 1500;
    admit(&mut m, &mut ingress, 1500).unwrap();
    assert_eq!(m.queues[i].qlen, u32::MAX);
    m.queues[i].qlen = u32::MAX - 1499;
    let err = admit(&mut m, &mut ingress, 1500).unwrap_err();
    assert!(
        err.0.contains("egress p5 q1") && err.0.contains("32-bit"),
        "{}",
        err.0
    );
}

/// Under `mark_on = "dequeue"` a packet is judged on the queue it leaves behind: the
/// registered length less itself and every earlier dequeue of its queue in the cycle (of
/// its queue only). On DCTCP's step (`Kmin = Kmax = K`, no draw), with `K + 3000` bytes
/// queued and three 1500 B dequeues, the first leaves `K + 1500` (marked), a dequeue of
/// another queue leaves the count alone, and the second leaves `K` (not marked).
#[test]
fn a_dequeue_is_judged_on_the_queue_left_after_the_cycles_earlier_dequeues() {
    const K: u32 = 30_000;
    let d = marking(|e| {
        (e.kmin, e.kmax, e.pmax) = (K, K, 1.0);
        e.mark_on = MarkOn::Dequeue;
        e.priorities = vec![PRIO as u8, PRIO as u8 + 1];
    });
    let mut m = EcnMarker::new(&d);
    let i = m.queue(DST, PRIO).unwrap();
    m.queues[i].qlen = K + 3000;
    let hdr = PacketHdr {
        len: 1500,
        ecn: Ecn::Ect0,
        ..PacketHdr::default()
    };
    let dq = Dequeue {
        port: DST as u8,
        queue: PRIO as u8,
        list: 0,
        ncells: 8,
        len: 1500,
        ecn: EcnLook::default(),
    };
    let first = Dequeue {
        ecn: m.look_at(&dq, &hdr, &[]),
        ..dq
    };
    let other = Dequeue {
        queue: PRIO as u8 + 1,
        ..first
    };
    let second = m.look_at(&dq, &hdr, &[first, other]);
    assert_eq!(
        [first.ecn, second],
        [EcnLook::looked(false, true), EcnLook::looked(false, false)]
    );
    // The other queue's dequeue alone leaves the count where it was: marked, as the first.
    assert_eq!(m.look_at(&dq, &hdr, &[other]), first.ecn);
}
