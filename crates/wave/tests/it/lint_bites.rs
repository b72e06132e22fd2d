//! The lint must reject broken files, or passing it proves nothing.

use wave::lint::{lint_vcd, LintError};

/// A valid file; each test breaks one thing in it.
const GOOD: &str = "\
$version mmu-sim $end
$timescale 1 ns $end
$scope module top $end
$scope module q $end
$var wire 1 ! valid $end
$var wire 8 \" depth $end
$upscope $end
$upscope $end
$enddefinitions $end
#0
$dumpvars
0!
b00000000 \"
$end
#3
1!
b00000101 \"
#4
0!
";

fn rejected(text: &str) -> LintError {
    lint_vcd(text).expect_err("lint must reject this file")
}

#[test]
fn the_good_file_passes() {
    let r = lint_vcd(GOOD).unwrap();
    assert_eq!((r.signals, r.timestamps, r.changes), (2, 3, 5));
}

#[test]
fn undeclared_id() {
    let e = rejected(&GOOD.replace("#4\n0!", "#4\n0#"));
    assert_eq!(e.line, 19, "{e}");
    assert!(e.message.contains("undeclared"), "{e}");
}

#[test]
fn vector_value_too_narrow() {
    let e = rejected(&GOOD.replace("b00000101 \"", "b101 \""));
    assert_eq!(e.line, 17, "{e}");
    assert!(
        e.message.contains("3 digits") && e.message.contains("8 bits"),
        "{e}"
    );
}

#[test]
fn vector_value_too_wide() {
    let e = rejected(&GOOD.replace("b00000101 \"", "b000000101 \""));
    assert_eq!(e.line, 17, "{e}");
}

#[test]
fn bad_vector_digit() {
    let e = rejected(&GOOD.replace("b00000101 \"", "b00000201 \""));
    assert_eq!(e.line, 17, "{e}");
}

#[test]
fn scalar_on_a_vector() {
    let e = rejected(&GOOD.replace("#4\n0!", "#4\n0\""));
    assert_eq!(e.line, 19, "{e}");
    assert!(e.message.contains("8 bits wide"), "{e}");
}

#[test]
fn non_increasing_timestamp() {
    let e = rejected(&GOOD.replace("#4", "#3"));
    assert_eq!(e.line, 18, "{e}");
    assert!(e.message.contains("not after"), "{e}");
    let e = rejected(&GOOD.replace("#4", "#2"));
    assert_eq!(e.line, 18, "{e}");
}

#[test]
fn timescale_2ns() {
    let e = rejected(&GOOD.replace("$timescale 1 ns", "$timescale 2 ns"));
    assert_eq!(e.line, 2, "{e}");
    assert!(e.message.contains("1, 10 or 100"), "{e}");
}

#[test]
fn timescale_bad_unit() {
    let e = rejected(&GOOD.replace("$timescale 1 ns", "$timescale 1 xs"));
    assert_eq!(e.line, 2, "{e}");
}

#[test]
fn unbalanced_scope_missing_upscope() {
    let e = rejected(&GOOD.replacen("$upscope $end\n", "", 1));
    assert_eq!(e.line, 8, "{e}");
    assert!(e.message.contains("still open"), "{e}");
}

#[test]
fn unbalanced_scope_extra_upscope() {
    let e = rejected(&GOOD.replace(
        "$upscope $end\n$upscope $end\n",
        "$upscope $end\n$upscope $end\n$upscope $end\n",
    ));
    assert_eq!(e.line, 9, "{e}");
    assert!(e.message.contains("without an open"), "{e}");
}

#[test]
fn duplicate_id() {
    let e = rejected(&GOOD.replace("$var wire 8 \" depth", "$var wire 8 ! depth"));
    assert_eq!(e.line, 6, "{e}");
}

#[test]
fn missing_enddefinitions() {
    let e = rejected(&GOOD.replace("$enddefinitions $end\n", ""));
    assert!(e.message.contains("#0"), "{e}");
}

#[test]
fn junk_in_body() {
    let e = rejected(&GOOD.replace("#3\n", "#3\nhello\n"));
    assert_eq!(e.line, 16, "{e}");
    let e = rejected(&format!("{GOOD}$dumpvars\n"));
    assert!(e.message.contains("never closed"), "{e}");
}

#[test]
fn var_outside_scope() {
    let text = "$timescale 1 ns $end\n$var wire 1 ! x $end\n$enddefinitions $end\n";
    let e = rejected(text);
    assert_eq!(e.line, 2, "{e}");
}

#[test]
fn error_display_has_line() {
    let e = rejected(&GOOD.replace("#4", "#3"));
    assert!(e.to_string().starts_with("VCD line 18:"), "{e}");
}
