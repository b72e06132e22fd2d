//! The network reproductions' scenarios against the built-ins they name.

use hw_model::Policy;
use scenario::Overrides;
use std::path::Path;
use study::reproduce::fabric_net::{Edit, Transport};

/// The PowerTCP arm of `dsh-deadlock` and `dsh-collateral-fabric` (`Transport::apply` on
/// class 3) runs what `mmu-sim run dsh-deadlock-powertcp` runs: the same scenario hash.
/// The companion: the DCQCN arm is another scenario.
#[test]
fn the_powertcp_arm_is_the_built_in_dsh_deadlock_powertcp() {
    let ov = Overrides::default();
    let built_in = scenario::builtin::load("dsh-deadlock-powertcp").unwrap();
    let dcqcn = Edit::builtin("dsh-deadlock").unwrap().scenario().unwrap();
    assert_ne!(
        dcqcn.hash(&ov),
        built_in.hash(&ov),
        "DCQCN is another scenario"
    );
    let mut e = Edit::builtin("dsh-deadlock").unwrap();
    Transport::PowerTcp.apply(&mut e, 3).unwrap();
    assert_eq!(e.scenario().unwrap().hash(&ov), built_in.hash(&ov));
}

/// A `[switch]` key set through `Edit` reaches every `[[fabric.switch]]` entry that does not
/// set it, and an entry's own key still wins. The companion is the reproductions' old way,
/// the key changed in the parsed scenario: an entry's configuration was made from the
/// built-in's `[switch]` when it was parsed, so the change misses the entry's switches.
#[test]
fn a_switch_key_reaches_the_fabric_switch_entries() {
    // dsh-deadlock's leaves are 64-67 (layer 1), its spines 68 and 69 (layer 2).
    let entry = "[{ layer = 2, buffer_bytes = 8388608 }]";
    let config = |s: &scenario::Scenario, node| {
        let plan = fabric::build::plan(s, Path::new("."), Default::default()).unwrap();
        let c = plan.configs.of(node);
        (c.policy, c.buffer_bytes)
    };
    let mut e = Edit::builtin("dsh-deadlock").unwrap();
    e.set("fabric.switch", entry)
        .unwrap()
        .set("switch.policy", "\"dsh\"")
        .unwrap()
        .set("switch.buffer_bytes", 16 << 20)
        .unwrap();
    let s = e.scenario().unwrap();
    assert_eq!(config(&s, 64), (Policy::Dsh, 16 << 20));
    assert_eq!(config(&s, 68), (Policy::Dsh, 8 << 20));

    let mut e = Edit::builtin("dsh-deadlock").unwrap();
    e.set("fabric.switch", entry).unwrap();
    let mut old = e.scenario().unwrap();
    old.switch.policy = Policy::Dsh;
    // DSH's thresholds need the larger buffer, as above (`plan()` builds each switch's).
    old.switch.buffer_bytes = 16 << 20;
    assert_eq!(config(&old, 64).0, Policy::Dsh);
    assert_eq!(
        config(&old, 68).0,
        Policy::Sih,
        "the entry kept the parsed [switch]"
    );
}

/// A reproduction finds what it changes by what it is: `Edit::entry` names the one entry
/// with the key's value, and refuses none or several (naming the array).
#[test]
fn an_entry_is_found_by_its_key_and_must_be_the_only_one() {
    let e = Edit::builtin("l2bm-clos").unwrap();
    assert_eq!(e.entry("workload", "pg", 1).unwrap(), 1);
    assert_eq!(e.entry("transport", "pg", 3).unwrap(), 0);
    let missing = e.entry("workload", "pg", 5).err().unwrap().to_string();
    assert!(
        missing.contains("fabric.workload") && missing.contains("0 entries"),
        "{missing}"
    );
    // F0, F1 and the fan-in are all of class 3; the fan-in alone starts at 1 ms.
    let e = Edit::builtin("dsh-collateral-fabric").unwrap();
    let several = e.entry("workload", "pg", 3).err().unwrap().to_string();
    assert!(several.contains("3 entries"), "{several}");
    assert_eq!(e.entry("workload", "start_us", 1000).unwrap(), 2);
}
