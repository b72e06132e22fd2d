//! The messages of bad scenario values name the field the user wrote and the real limit,
//! and a misspelt name gets the closest allowed one.

use scenario::{builtin, parse_table, set_key, Overrides, Scenario, ScenarioError};

/// Built-in `name` with `--set` assignment `set`, parsed and planned: the error.
fn error_with(name: &str, set: &str) -> String {
    let text = builtin::find(name).unwrap().toml();
    let mut table = parse_table(&text).unwrap();
    let e: ScenarioError = set_key(&mut table, set)
        .and_then(|()| Scenario::from_table(table, name))
        .and_then(|s| s.plan(&Overrides::default()).map(|_| ()))
        .expect_err(set);
    e.to_string()
}

#[test]
fn a_nested_type_error_names_the_nested_key() {
    for (name, set, field) in [
        (
            "small-smoke",
            "switch.ecm.priorities=true",
            "switch.ecm.priorities",
        ),
        ("small-smoke", "switch.ecn.kmax=true", "switch.ecn.kmax"),
        ("hcf-tcp", "switch.hcf[0].ports=true", "switch.hcf[0].ports"),
    ] {
        let e = error_with(name, set);
        assert!(
            e.starts_with(&format!("{field}: invalid type")),
            "{set}: {e}"
        );
    }
}

#[test]
fn a_number_where_a_name_belongs_lists_the_names() {
    let e = error_with("small-smoke", "flows[0].pattern=5");
    assert!(
        e.starts_with("flows[0].pattern: 5 is not a name; expected one of `constant`, "),
        "{e}"
    );
    let e = error_with("small-smoke", "switch.policy=5");
    assert!(
        e.starts_with("switch.policy: 5 is not a name; expected one of `sih`, `dsh`, `l2bm`"),
        "{e}"
    );
}

#[test]
fn a_negative_port_gets_the_port_range() {
    for (name, set, field) in [
        ("small-smoke", "flows[0].src=-1", "flows[0].src"),
        ("small-smoke", "flows[0].dst=-1", "flows[0].dst"),
        (
            "dsh-port-level",
            "pfc_script[0].port=-1",
            "pfc_script[0].port",
        ),
    ] {
        let e = error_with(name, set);
        assert_eq!(
            e,
            format!("{field}: -1 is out of range; allowed: an existing port, 0..=switch.ports - 1")
        );
    }
}

/// occamy-shaped's buffer and lossy pool are the same bytes; at 128 B cells the pool
/// rounds up to a cell more than the buffer rounds down to.
#[test]
fn a_pool_past_the_buffer_in_cells_says_so_in_cells() {
    let e = error_with("occamy-shaped", "switch.cell_bytes=128");
    assert_eq!(
        e,
        "switch.lossy_pool_bytes: 131008 bytes is 1024 cells of 128 bytes, more than the \
         buffer's 1023 cells (switch.buffer_bytes = 131008); allowed: at most 130944 bytes"
    );
}

#[test]
fn misspelt_names_get_the_closest_allowed_one() {
    for (set, hint) in [
        ("switch.policy=\"dhs\"", "(did you mean `dsh`?)"),
        ("switch.alpah_log2=1", "(did you mean `alpha_log2`?)"),
        ("flows[0].patern=\"burst\"", "(did you mean `pattern`?)"),
        ("run.cycels=5", "(did you mean `cycles`?)"),
        ("switch.profile=\"tomahwk\"", "(did you mean \"tomahawk\"?)"),
        ("fabrc=1", "(did you mean \"fabric\"?)"),
    ] {
        let e = error_with("small-smoke", set);
        assert!(e.contains(hint), "{set}: {e}");
    }
}

#[test]
fn a_type_error_on_an_integer_key_gives_its_range() {
    for (set, range) in [
        ("switch.ports=\"x\"", "switch.ports: invalid type: string \"x\", expected usize; allowed: an integer, 1..=64"),
        ("switch.alpha_log2=1.5", "switch.alpha_log2: invalid type: floating point `1.5`, expected i32; allowed: an integer, -7..=3"),
        ("switch.ecn.kmax=true", "switch.ecn.kmax: invalid type: boolean `true`, expected u32; allowed: an integer, kmin..=134217727"),
    ] {
        assert_eq!(error_with("small-smoke", set), range, "{set}");
    }
}
