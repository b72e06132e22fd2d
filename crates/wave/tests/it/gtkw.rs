//! GTKWave save file output.

use std::path::{Path, PathBuf};

use wave::{write_gtkw, GtkwGroup, GtkwTrace, GtkwView, SignalFilter, SignalSpec};

fn tmp(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("wave-gtkw-tests");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn signals() -> Vec<SignalSpec> {
    vec![
        SignalSpec::new("top.mmu.x.valid", 1),
        SignalSpec::new("top.mmu.x.cells", 20),
        SignalSpec::new("top.mmu.y.wide", 64),
        SignalSpec::new("top.mmu.y.gone", 8),
    ]
}

#[test]
fn same_dir_uses_relative_dumpfile_and_names_have_widths() {
    let gtkw = tmp("same.gtkw");
    let vcd = tmp("same.vcd");
    let in_vcd = SignalFilter::parse("top.mmu.x.*, *.wide")
        .unwrap()
        .apply(&signals());
    let groups = [
        GtkwGroup::new("Ingress x", ["top.mmu.x.valid", "top.mmu.x.cells"]),
        GtkwGroup::new(
            "Egress y",
            ["top.mmu.y.wide", "top.mmu.y.gone", "not.a.signal"],
        ),
        GtkwGroup::new("All filtered", ["top.mmu.y.gone"]),
    ];
    write_gtkw(&gtkw, &vcd, &groups, &in_vcd, &GtkwView::new(0, 1000)).unwrap();
    let text = std::fs::read_to_string(&gtkw).unwrap();

    assert!(text.contains("[dumpfile] \"same.vcd\"\n"), "{text}");
    let abs_gtkw = std::path::absolute(&gtkw).unwrap();
    assert!(
        text.contains(&format!("[savefile] \"{}\"\n", abs_gtkw.display())),
        "{text}"
    );
    assert!(text.contains("\n-Ingress x\n"), "{text}");
    assert!(text.contains("\n-Egress y\n"), "{text}");
    assert!(
        !text.contains("All filtered"),
        "empty group is skipped: {text}"
    );
    assert!(text.contains("\ntop.mmu.x.valid\n"), "{text}");
    assert!(text.contains("\ntop.mmu.x.cells[19:0]\n"), "{text}");
    assert!(text.contains("\ntop.mmu.y.wide[63:0]\n"), "{text}");
    assert!(
        !text.contains("gone"),
        "filtered-out signal is skipped: {text}"
    );
    assert!(!text.contains("not.a.signal"), "{text}");

    // Group markers and radix flags, in order.
    let lines: Vec<&str> = text.lines().skip_while(|l| !l.starts_with('@')).collect();
    assert_eq!(
        lines,
        [
            "@800200",
            "-Ingress x",
            "@28",
            "top.mmu.x.valid",
            "@24",
            "top.mmu.x.cells[19:0]",
            "@1000200",
            "-Ingress x",
            "@800200",
            "-Egress y",
            "@24",
            "top.mmu.y.wide[63:0]",
            "@1000200",
            "-Egress y",
        ]
    );
}

#[test]
fn other_dir_uses_absolute_dumpfile() {
    let gtkw = tmp("other.gtkw");
    let vcd = tmp("sub").join("other.vcd");
    write_gtkw(&gtkw, &vcd, &[], &signals(), &GtkwView::new(0, 10)).unwrap();
    let text = std::fs::read_to_string(&gtkw).unwrap();
    let abs = std::path::absolute(&vcd).unwrap();
    assert!(
        text.contains(&format!("[dumpfile] \"{}\"\n", abs.display())),
        "{text}"
    );
}

#[test]
fn unwritable_path_is_an_error() {
    let gtkw = tmp("no-such-dir").join("deeper").join("x.gtkw");
    let e = write_gtkw(
        &gtkw,
        Path::new("x.vcd"),
        &[],
        &signals(),
        &GtkwView::new(0, 10),
    )
    .unwrap_err();
    assert!(matches!(e, wave::WaveError::Io(_)), "{e:?}");
}

#[test]
fn aliases_analog_traces_size_and_zoom() {
    let gtkw = tmp("alias.gtkw");
    let groups = [GtkwGroup::new(
        "x",
        [
            GtkwTrace::new("top.mmu.x.valid").named("p03 valid"),
            GtkwTrace::new("top.mmu.x.cells")
                .named("p03 {cells}\n")
                .analog(),
            GtkwTrace::new("top.mmu.y.wide"),
        ],
    )];
    let view = GtkwView {
        size: (1600, 1000),
        times: (2000, 2000 + 1020 * 4),
        marker: None,
    };
    write_gtkw(&gtkw, &tmp("alias.fst"), &groups, &signals(), &view).unwrap();
    let text = std::fs::read_to_string(&gtkw).unwrap();
    assert!(text.contains("[dumpfile] \"alias.fst\"\n"), "{text}");
    // The name pane fits the longest name (the bare path `top.mmu.y.wide[63:0]`) and a
    // value; the zoom fits the interval into what is left.
    let signals_width: u32 = text
        .lines()
        .find_map(|l| l.strip_prefix("[signals_width] "))
        .unwrap()
        .parse()
        .unwrap();
    assert!((280..400).contains(&signals_width), "{signals_width}");
    let zoom = format!("*{:.6} -1", view.zoom(signals_width));
    for line in ["[timestart] 2000", "[size] 1600 1000", &zoom] {
        assert!(text.lines().any(|l| l == line), "{line}: {text}");
    }
    let lines: Vec<&str> = text.lines().skip_while(|l| !l.starts_with('@')).collect();
    assert_eq!(
        lines,
        [
            "@800200",
            "-x",
            "@28",
            "+{p03 valid} top.mmu.x.valid",
            "@8024",
            "+{p03  cells  } top.mmu.x.cells[19:0]",
            "@20000",
            "-",
            "-",
            "-",
            "@24",
            "top.mmu.y.wide[63:0]",
            "@1000200",
            "-x",
        ]
    );
}

/// A mask in binary, an enum through a translate filter file written once beside the save
/// file and referenced before each trace that uses it, and the marker on the `*` line.
#[test]
fn masks_enums_and_the_marker() {
    let gtkw = tmp("enum.gtkw");
    let names = wave::Translate::new("state", &[(0, "idle"), (1, "busy")]);
    let groups = [GtkwGroup::new(
        "g",
        [
            GtkwTrace::new("top.mmu.y.gone").binary(),
            GtkwTrace::new("top.mmu.x.cells").translated(names.clone()),
            GtkwTrace::new("top.mmu.y.wide").translated(names),
        ],
    )];
    let view = GtkwView::new(100, 300).with_marker(150);
    write_gtkw(&gtkw, &tmp("enum.vcd"), &groups, &signals(), &view).unwrap();
    let text = std::fs::read_to_string(&gtkw).unwrap();
    let filter = wave::filter_path(&gtkw, "state");
    assert_eq!(filter, tmp("enum.state.txt"));
    assert_eq!(
        std::fs::read_to_string(&filter).unwrap(),
        "0 idle\n1 busy\n"
    );
    let refer = format!("^1 {}", filter.display());
    let expected = format!(
        "@28\ntop.mmu.y.gone[7:0]\n@2024\n{refer}\ntop.mmu.x.cells[19:0]\n{refer}\ntop.mmu.y.wide[63:0]\n"
    );
    assert!(text.contains(&expected), "{text}");
    assert!(
        text.lines()
            .any(|l| l.starts_with('*') && l.ends_with(" 150")),
        "{text}"
    );
    assert!(GtkwView::new(0, 1).marker.is_none());
}
