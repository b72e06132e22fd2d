//! Scoreboard checks, each with a companion showing the check bites.

use hw_model::{Beat, DropReason, PacketHdr, Segment};
use switch_run::monitor::{CellTxn, TxnKind};
use switch_run::scoreboard::Scoreboard;

fn beat(seq: u32, idx: u16, ncells: u16) -> Beat {
    Beat {
        hdr: PacketHdr {
            flow: 0,
            seq,
            src: 0,
            dst: 2,
            prio: 3,
            len: 400,
            ..Default::default()
        },
        idx,
        ncells,
    }
}

fn txn(cycle: u64, kind: TxnKind, b: &Beat) -> CellTxn<'_> {
    CellTxn {
        cycle,
        kind,
        beat: b,
    }
}

/// Inject, admit and depart the given (seq, idx) cells in the given departure order.
fn run(departures: &[(u32, u16)], dropped_packets: &[u32]) -> Scoreboard {
    let mut sb = Scoreboard::new(1);
    for seq in 0..4 {
        for idx in 0..2 {
            let b = beat(seq, idx, 2);
            sb.record(&txn(0, TxnKind::Inject, &b));
            let fate = if dropped_packets.contains(&seq) {
                TxnKind::Drop(DropReason::HeadroomFull)
            } else {
                TxnKind::Admit(Segment::Shared)
            };
            sb.record(&txn(1, fate, &b));
        }
    }
    for (i, &(seq, idx)) in departures.iter().enumerate() {
        sb.record(&txn(10 + i as u64, TxnKind::Depart(2), &beat(seq, idx, 2)));
    }
    sb
}

#[test]
fn in_order_departures_with_a_dropped_packet_pass() {
    let sb = run(&[(0, 0), (0, 1), (2, 0), (2, 1), (3, 0), (3, 1)], &[1]);
    assert_eq!(sb.reordered, 0);
    assert_eq!(sb.dropped_lossless(), 2);
    assert!(sb.conservation(0, 0).ok(), "{}", sb.conservation(0, 0));
}

#[test]
fn out_of_order_departure_is_caught() {
    let sb = run(
        &[
            (0, 0),
            (1, 0),
            (0, 1),
            (1, 1),
            (2, 0),
            (2, 1),
            (3, 0),
            (3, 1),
        ],
        &[],
    );
    assert_eq!(sb.reordered, 1, "(0, 1) departed after (1, 0)");
    assert!(
        sb.first_error().unwrap().contains("seq 0, idx 1"),
        "{:?}",
        sb.first_error()
    );
}

#[test]
fn duplicate_departure_is_caught() {
    let sb = run(&[(0, 0), (0, 0), (0, 1)], &[1, 2, 3]);
    assert_eq!(sb.reordered, 1);
}

#[test]
fn wrong_egress_port_is_caught() {
    let mut sb = Scoreboard::new(1);
    sb.record(&txn(0, TxnKind::Depart(5), &beat(0, 0, 1)));
    assert_eq!(sb.misrouted, 1);
}

#[test]
fn conservation_counts_buffered_and_in_flight_cells() {
    let sb = run(&[(0, 0), (0, 1)], &[1]);
    // 8 injected: 2 departed, 2 dropped, 3 buffered, 1 on the link.
    assert!(sb.conservation(3, 1).ok());
}

#[test]
fn conservation_detects_a_missing_cell() {
    let sb = run(&[(0, 0), (0, 1)], &[1]);
    // The DUT lost one cell: it reports 3 buffered where 4 should be.
    let c = sb.conservation(3, 0);
    assert!(!c.ok());
    assert!(c.to_string().ends_with("FAILED (7 accounted for)"), "{c}");
}

#[test]
fn a_departure_of_an_unknown_flow_is_caught() {
    let mut sb = Scoreboard::new(1);
    let mut b = beat(0, 0, 1);
    b.hdr.flow = 7;
    sb.record(&txn(3, TxnKind::Depart(2), &b));
    assert_eq!(sb.misrouted, 1);
    assert_eq!(
        sb.first_error(),
        Some("cycle 3: departure of unknown flow 7")
    );
}

/// The order check compares `(seq, idx)` as one integer: it must order as the pair does at
/// the ends of both ranges, and report the pair it held.
#[test]
fn departure_order_is_checked_across_the_whole_seq_and_idx_ranges() {
    let depart = |cells: &[(u32, u16)]| {
        let mut sb = Scoreboard::new(1);
        for (i, &(seq, idx)) in cells.iter().enumerate() {
            sb.record(&txn(
                i as u64,
                TxnKind::Depart(2),
                &beat(seq, idx, u16::MAX),
            ));
        }
        sb
    };
    let in_order = [
        (0, 0),
        (0, u16::MAX),
        (1, 0),
        (u32::MAX, 0),
        (u32::MAX, u16::MAX),
    ];
    assert_eq!(depart(&in_order).reordered, 0);
    let sb = depart(&[(u32::MAX, 0), (u32::MAX - 1, u16::MAX)]);
    assert_eq!(sb.reordered, 1);
    assert_eq!(
        sb.first_error(),
        Some("cycle 1: flow 0 cell (seq 4294967294, idx 65535) departed after (seq 4294967295, idx 0)")
    );
}
