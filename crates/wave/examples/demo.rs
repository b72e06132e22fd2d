//! Writes `demo.vcd` and `demo.gtkw` into the directory given as the first
//! argument (default: the current directory), for checking by eye in GTKWave:
//!
//! ```text
//! cargo run -p wave --example demo -- /tmp/wave-demo
//! gtkwave /tmp/wave-demo/demo.gtkw
//! ```

use std::fs::File;
use std::io::BufWriter;
use std::path::PathBuf;

use wave::{write_gtkw, GtkwGroup, GtkwView, SignalFilter, SignalSpec, VcdWriter, Window};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = PathBuf::from(std::env::args().nth(1).unwrap_or_else(|| ".".to_owned()));
    std::fs::create_dir_all(&dir)?;
    let signals: Vec<SignalSpec> = (0..4)
        .flat_map(|p| {
            [
                SignalSpec::new(format!("top.mmu.ingress.p{p:02}.pause"), 1),
                SignalSpec::new(format!("top.mmu.ingress.p{p:02}.shared_cells"), 20),
                SignalSpec::new(format!("top.mmu.egress.q{p}.bytes"), 64),
            ]
        })
        .collect();
    let filter = SignalFilter::parse(&std::env::args().nth(2).unwrap_or_default())?;
    let vcd_path = dir.join("demo.vcd");
    let out = BufWriter::new(File::create(&vcd_path)?);
    let mut w = VcdWriter::new(out, &signals, 800_000_000, &filter, Window::all())?;
    for cycle in 0..1000u64 {
        w.sample(cycle, |i| {
            let p = (i / 3) as u64;
            match i % 3 {
                0 => u64::from((cycle / (50 + 10 * p)) % 2 == 1),
                1 => (cycle * (p + 1) * 37) % 1_000_000,
                _ => cycle.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (p * 8),
            }
        })?;
    }
    w.finish()?;
    let groups = [
        GtkwGroup::new(
            "Ingress",
            signals
                .iter()
                .filter(|s| s.path.contains("ingress"))
                .map(|s| s.path.clone()),
        ),
        GtkwGroup::new(
            "Egress",
            signals
                .iter()
                .filter(|s| s.path.contains("egress"))
                .map(|s| s.path.clone()),
        ),
    ];
    write_gtkw(
        &dir.join("demo.gtkw"),
        &vcd_path,
        &groups,
        &filter.apply(&signals),
        // 1000 cycles of 125 ticks (800 MHz).
        &GtkwView::new(0, 1000 * 125),
    )?;
    println!("wrote {} and demo.gtkw", vcd_path.display());
    Ok(())
}
