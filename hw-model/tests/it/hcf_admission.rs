//! HCF's classification waits for admission's decision source (`admission.rs`,
//! `Classifier`): a packet the source refuses leaves HCF as it was.

use hw_model::accounting::Accounting;
use hw_model::admission::{Admission, Classifier, HcfArrival, Registered};
use hw_model::decision_source::DecisionSource;
use hw_model::dt_threshold::pool_units;
use hw_model::pfc::state::PauseState;
use hw_model::policy::{Plan, QueueView, Request, Sih};
use hw_model::ports::FlowRequests;
use hw_model::sched::hcf::Hcf;
use hw_model::{DropReason, FiveTuple, HcfConfig, SwitchConfig};

/// A decision source that refuses every packet, whatever the model decided.
struct Refuse;

impl DecisionSource for Refuse {
    type Reason = ();

    fn admission(
        &mut self,
        _: &Request,
        _: &QueueView,
        _: Result<Plan, DropReason>,
    ) -> Result<Plan, ()> {
        Err(())
    }
}

/// HCF's classification, committed when the source has answered, or (`early`) at
/// classification, the order before the classification was a value.
struct Ordered<'a> {
    arrival: HcfArrival<'a>,
    early: bool,
}

impl Classifier for Ordered<'_> {
    fn classify(&mut self) -> Result<u8, DropReason> {
        let list = self.arrival.classify();
        if self.early {
            self.arrival.commit(list.is_ok());
        }
        list
    }

    fn commit(&mut self, admitted: bool) {
        if !self.early {
            self.arrival.commit(admitted);
        }
    }
}

/// HCF (queue 7 of port 2) before and after the admission of one packet for it that
/// the model admits to HP and `Refuse` refuses, committed `early` or not.
fn hcf_around_a_refusal(early: bool) -> [String; 2] {
    let d = SwitchConfig {
        hcf: vec![HcfConfig {
            ports: vec![2],
            queue: 7,
            ..Default::default()
        }],
        ..SwitchConfig::small()
    }
    .build()
    .unwrap();
    let (dt, dt_lossy) = pool_units(&d);
    let pause = PauseState::new(d.ports);
    let mut policy = Sih::new(&d, dt.t());
    let mut acct = Accounting::new(d.ports);
    let mut requests = FlowRequests::new(d.ports);
    let mut hcf = Hcf::new(&d);
    let before = format!("{hcf:?}");
    let tuple = FiveTuple::for_flow(1, 0, 2, FiveTuple::TCP);
    let r = Request::new(0, 7, 2, 1, d.is_lossless(7));
    let refused = Admission::new(&d).admit(
        &r,
        Registered {
            dt: &dt,
            dt_lossy: &dt_lossy,
            pause: &pause,
        },
        &mut acct,
        &mut policy,
        &mut Refuse,
        &mut Ordered {
            arrival: HcfArrival::new(&mut hcf, 2, 7, &tuple, 1),
            early,
        },
        &mut requests,
        0,
    );
    assert!(refused.is_err());
    [before, format!("{hcf:?}")]
}

/// A packet the decision source refuses leaves HCF's credits, list lengths, counters
/// and waveform registers exactly as they were.
#[test]
fn a_refused_packet_leaves_hcf_as_it_was() {
    let [before, after] = hcf_around_a_refusal(false);
    assert_eq!(after, before);
}

/// Companion: with the registers changed at classification, the refused packet's
/// credit and HP length stay in HCF, and the check above sees it.
#[test]
fn taking_at_classification_keeps_a_refused_packet_in_hcf() {
    let [before, after] = hcf_around_a_refusal(true);
    assert_ne!(after, before);
    assert!(
        after.contains("len: [1, 0]") && after.contains("to_hp: 1"),
        "{after}"
    );
}
