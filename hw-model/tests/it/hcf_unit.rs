//! The HCF control block (`sched/hcf.rs`) through its public interface: the hash against
//! known answers, the HP/LP roles across several period swaps, and the statistics
//! counters. Each test pins a behaviour that mutation testing found unchecked
//! (docs/testing.md).

use crate::wires::Wires;
use hw_model::admission::{Classifier, HcfArrival};
use hw_model::config::HcfParams;
use hw_model::dirty::Dirty;
use hw_model::sched::hcf::{bin_of, hash, Hcf, HcfQueue, Verdict};
use hw_model::{Derived, DropReason, FiveTuple, HcfConfig, HcfUnit, SwitchConfig};
use rtl::Block;

/// `10.1.2.3:49153 -> 10.130.0.1:4791`, UDP: header bytes
/// `0a010203 0a820001 c001 12b7 11`.
const TUPLE: FiveTuple = FiveTuple {
    src_ip: 0x0A01_0203,
    dst_ip: 0x0A82_0001,
    src_port: 49153,
    dst_port: 4791,
    proto: FiveTuple::UDP,
};

/// The hash and the bins the hardware gives for fixed inputs. The expected values were
/// derived outside this code base from the documented algorithm (docs/hcf.md, `hash`):
/// the IEEE CRC-32 of the 13 bytes is `0xDD8655B8` (Python's `zlib.crc32`, whose check
/// value `crc32(b"123456789") = 0xCBF43926` is the standard's); XOR the stamp and the
/// salt of hash `i`; then murmur3's `fmix32` (`x ^= x >> 16; x *= 0x85EBCA6B; x ^= x >>
/// 13; x *= 0xC2B2AE35; x ^= x >> 16`, 32-bit wrapping), transcribed by hand into Python.
/// The bin is `(h * K) >> 32`.
#[test]
fn hash_and_bins_match_known_answers() {
    assert_eq!(crc32fast::hash(&TUPLE.bytes()), 0xDD86_55B8);
    // (stamp, i, h, bin of 20, bin of 64); the mixer's input `CRC ^ stamp ^ SALT[i]` in
    // the comment.
    let cases = [
        (0, 0, 0xE548_F5DC, 17, 57),          // 0xDD8655B8
        (0x1234_5678, 0, 0x1284_9625, 1, 4),  // 0xCFB203C0
        (0, 1, 0x152C_0338, 1, 5),            // 0x43B12C01
        (0x1234_5678, 3, 0x59CC_6760, 7, 22), // 0x3C2EC3A0
    ];
    for (stamp, i, h, bin20, bin64) in cases {
        assert_eq!(hash(&TUPLE, stamp, i), h, "stamp {stamp:#x}, hash {i}");
        assert_eq!(bin_of(h, 20), bin20);
        assert_eq!(bin_of(h, 64), bin64);
    }
    // `bin_of` alone: the high half of `h * K`.
    assert_eq!(bin_of(0x8000_0000, 20), 10);
    assert_eq!(bin_of(u32::MAX, 64), 63);
    assert_eq!(bin_of(u32::MAX, 1), 0);
}

fn params(c0: u32, hp_limit: u32, lp_limit: u32) -> HcfParams {
    HcfParams {
        port: 0,
        queue: 0,
        bins: 20,
        c0,
        credit_bits: 32 - c0.leading_zeros(),
        hp_limit,
        lp_limit,
        unit: HcfUnit::Packet,
        period_cycles: None,
        hashes: 1,
        zero_on_lp_join: true,
    }
}

/// A one-cell packet of `TUPLE` classified with `hp` as the HP list, then taken: its
/// verdict and list.
fn arrive(q: &mut HcfQueue, hp: u8) -> (Verdict, u8) {
    let c = q.classify(&TUPLE, 1, hp);
    q.take(&c);
    (c.verdict, c.list)
}

/// A one-cell packet of `TUPLE` through admission's classifier for queue `q` of `port`:
/// its list, or why it is dropped.
fn admit(hcf: &mut Hcf, port: usize, q: usize) -> Result<u8, DropReason> {
    let mut a = HcfArrival::new(hcf, port, q, &TUPLE, 1);
    let list = a.classify();
    a.commit(list.is_ok());
    list
}

/// With physical list 1 as HP, a flow's packet without credit joins list 0, the LP list.
#[test]
fn with_list_one_as_hp_a_packet_without_credit_joins_list_zero() {
    let mut q = HcfQueue::new(params(1, 10, 10));
    assert_eq!(arrive(&mut q, 1), (Verdict::Hp, 1), "credit: HP, list 1");
    assert_eq!(arrive(&mut q, 1), (Verdict::Lp, 0), "no credit: LP, list 0");
    assert_eq!(q.len, [1, 1]);
}

/// A switch whose queue 7 of port 2 is HCF, with the paper's baseline parameters.
fn hcf_on_port_2_queue_7(period_cycles: Option<u64>) -> Derived {
    SwitchConfig {
        hcf: vec![HcfConfig {
            ports: vec![2],
            queue: 7,
            period_cycles,
            ..HcfConfig::default()
        }],
        ..SwitchConfig::small()
    }
    .build()
    .unwrap()
}

/// HP and LP swap roles at every period start: over several dynamic periods a flow's
/// first packet joins the list that is HP in that period and its second the other one,
/// and emptying HP swaps the roles again.
#[test]
fn hp_and_lp_swap_roles_at_every_period_start() {
    let mut hcf = Hcf::new(&hcf_on_port_2_queue_7(None));
    let (port, q) = (2, 7);
    for period in 0..5u64 {
        let hp = hcf.hp_list(port, q);
        assert_eq!(hp, (period % 2) as u8, "period {period}");
        let lp = hp ^ 1;
        assert_eq!(admit(&mut hcf, port, q), Ok(hp));
        assert_eq!(admit(&mut hcf, port, q), Ok(lp));
        hcf.depart(port, q, lp, 1, 10 * period).unwrap();
        assert_eq!(hcf.hp_list(port, q), hp, "an LP departure swaps nothing");
        hcf.depart(port, q, hp, 1, 10 * period + 5).unwrap();
        assert_eq!(hcf.hp_sel(port), lp << q, "HP emptied: the roles swap");
    }
    assert_eq!(hcf.queue(port, q).unwrap().periods, 6, "reset + 5 swaps");
}

/// The packet queues give two lists to exactly HCF's queues, named `port * 8 + q` in the
/// order of the configuration: queue 7 of ports 2 and 5 are 23 and 47.
#[test]
fn hcf_names_its_queues_for_the_packet_queues() {
    let d = SwitchConfig {
        hcf: vec![HcfConfig {
            ports: vec![2, 5],
            queue: 7,
            ..HcfConfig::default()
        }],
        ..SwitchConfig::small()
    }
    .build()
    .unwrap();
    assert_eq!(Hcf::new(&d).queue_ids(), [23, 47]);
}

/// A packet that fits neither list is refused: admission's classifier says `hcf_full`,
/// not the LP list it was classified into, and the lists keep their lengths.
#[test]
fn a_packet_that_fits_neither_list_is_dropped() {
    let d = SwitchConfig {
        hcf: vec![HcfConfig {
            ports: vec![2],
            queue: 7,
            buffer: 2,
            hp_limit: Some(1),
            unit: HcfUnit::Packet,
            ..HcfConfig::default()
        }],
        ..SwitchConfig::small()
    }
    .build()
    .unwrap();
    let mut hcf = Hcf::new(&d);
    assert_eq!(admit(&mut hcf, 2, 7), Ok(0), "HP");
    assert_eq!(admit(&mut hcf, 2, 7), Ok(1), "LP");
    assert_eq!(admit(&mut hcf, 2, 7), Err(DropReason::HcfFull), "both full");
    assert_eq!(hcf.queue(2, 7).unwrap().len, [1, 1]);
    assert_eq!(hcf.queue(2, 7).unwrap().dropped, 1, "the drop is counted");
    assert_eq!(admit(&mut hcf, 2, 6), Ok(0), "a FIFO queue: its one list");
}

/// `to_hp`, `to_lp` and `dropped` count each verdict once.
#[test]
fn verdict_counters_count_each_packet_once() {
    let mut q = HcfQueue::new(params(1, 10, 2));
    for _ in 0..4 {
        arrive(&mut q, 0);
    }
    assert_eq!((q.to_hp, q.to_lp, q.dropped), (1, 2, 1));
    q.depart(0, 1, 0, 3).unwrap();
    assert_eq!(
        arrive(&mut q, 0),
        (Verdict::Hp, 0),
        "a new period: credit again"
    );
    assert_eq!((q.to_hp, q.to_lp, q.dropped), (2, 2, 1));
}

/// A forced credit keeps only its register's `ceil(log2(c0 + 1))` bits and leaves the
/// neighbouring bins of the bit vector alone.
#[test]
fn a_forced_credit_keeps_its_register_width() {
    let mut q = HcfQueue::new(params(2, 10, 10));
    q.force_credit(1, 0b110);
    assert_eq!((q.credit(0), q.credit(1), q.credit(2)), (2, 0b10, 2));
}

/// The probes show the lists by role (HP first, whichever physical list it is), the
/// period, the last arrival and every credit register.
#[test]
fn probes_show_the_lists_by_role_and_every_credit() {
    let mut q = HcfQueue::new(params(1, 10, 10));
    for _ in 0..3 {
        arrive(&mut q, 1);
    }
    let mut wires = Wires::default();
    q.probe(1, &mut wires);
    // hp_len, lp_len, period_start, periods, last_bin (17: the known answer above),
    // last_verdict (2: LP), then the 20 one-bit credits.
    assert_eq!(
        wires.0[..6],
        [(21, 1), (21, 2), (32, 0), (32, 1), (6, 17), (2, 2)]
    );
    let credits: Vec<u64> = wires.0[6..].iter().map(|&(_, c)| c).collect();
    assert_eq!(credits.len(), 20);
    assert!(credits
        .iter()
        .enumerate()
        .all(|(k, &c)| c == (k != 17) as u64));
}

/// A fixed period starts at its boundary when HP is empty, swapping the roles; when HP
/// holds a packet (whichever physical list HP is) the boundary only marks the period due
/// and the departure that empties HP starts the next one.
#[test]
fn fixed_period_boundaries_start_periods_in_the_flow_control_phase() {
    let d = hcf_on_port_2_queue_7(Some(100));
    let mut hcf = Hcf::new(&d);
    let mut dirty = Dirty::new(d.ports);
    let (port, q) = (2, 7);
    // (HP list, periods started, stamp) now.
    let state = |hcf: &Hcf| {
        let h = hcf.queue(port, q).unwrap();
        (hcf.hp_list(port, q), h.periods, h.stamp)
    };
    assert_eq!(hcf.next_boundary(), 100);
    assert_eq!(admit(&mut hcf, port, q), Ok(0));
    hcf.eval(99, (), &mut dirty).unwrap();
    hcf.eval(100, (), &mut dirty).unwrap();
    assert_eq!(state(&hcf), (0, 1, 0), "HP (list 0) holds a packet");
    assert_eq!(hcf.next_boundary(), 200);
    assert_eq!(admit(&mut hcf, port, q), Ok(1));
    hcf.depart(port, q, 0, 1, 130).unwrap();
    assert_eq!(state(&hcf), (1, 2, 130), "due, and HP just emptied");
    hcf.eval(200, (), &mut dirty).unwrap();
    assert_eq!(state(&hcf), (1, 2, 130), "HP (list 1) holds a packet");
    hcf.depart(port, q, 1, 1, 250).unwrap();
    assert_eq!(state(&hcf), (0, 3, 250));
    hcf.eval(300, (), &mut dirty).unwrap();
    assert_eq!(state(&hcf), (1, 4, 300), "HP empty at the boundary");
    hcf.eval(400, (), &mut dirty).unwrap();
    assert_eq!(state(&hcf), (0, 5, 400));
}

/// An HCF queue's probes sit under its `hcf` scope, led by the HP select; a FIFO queue
/// shows none.
#[test]
fn an_hcf_queue_probes_its_hp_select_and_registers() {
    let mut hcf = Hcf::new(&hcf_on_port_2_queue_7(None));
    admit(&mut hcf, 2, 7).unwrap();
    hcf.depart(2, 7, 0, 1, 9).unwrap();
    let mut fifo = Wires::default();
    hcf.probe_queue(2, 6, &mut fifo);
    assert!(fifo.0.is_empty());
    let mut wires = Wires::default();
    hcf.probe_queue(2, 7, &mut wires);
    // hp_sel 1 after the swap, then HcfQueue::probe: hp_len, lp_len, period_start 9.
    assert_eq!(wires.0[..4], [(1, 1), (21, 0), (21, 0), (32, 9)]);
}
