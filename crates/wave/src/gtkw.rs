//! GTKWave save files (`.gtkw`).
//!
//! A save file tells GTKWave which dump to open and which traces to show, so
//! an architect gets a useful view with one command (`gtkwave run.gtkw`)
//! instead of digging through thousands of signals by hand.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::{SignalSpec, WaveError};

/// GTKWave trace flags (`TR_*` in GTKWave's `analyzer.h`: bit `n` of the enum
/// `TraceEntFlagBits`), written as `@<hex>` lines before the traces they apply to.
mod flags {
    /// `TR_HEX` (bit 1).
    #[cfg(test)]
    pub const HEX: u32 = 0x2;
    /// `TR_DEC` (bit 2): unsigned decimal.
    pub const DEC: u32 = 0x4;
    /// `TR_BIN` (bit 3).
    pub const BIN: u32 = 0x8;
    /// `TR_RJUSTIFY` (bit 5): right-justified values, GTKWave's default.
    pub const RJUSTIFY: u32 = 0x20;
    /// `TR_BLANK` (bit 9): a blank/comment row (group titles are blank rows).
    pub const BLANK: u32 = 0x200;
    /// `TR_FTRANSLATED` (bit 13): the value goes through the translate filter file named by
    /// the `^N FILE` line before the trace (pyvcd's `tests/test_gtkw.py`,
    /// `test_gtkw_trace_filter_files`, writes `@2022` for hex, right-justified, translated).
    pub const FTRANSLATED: u32 = 0x2000;
    /// `TR_ANALOG_STEP` (bit 15): draw the value as a staircase plot.
    pub const ANALOG_STEP: u32 = 0x8000;
    /// `TR_ANALOG_BLANK_STRETCH` (bit 17): an empty row that adds its height to the analog
    /// trace above (GTKWave's "Insert Analog Height Extension").
    pub const ANALOG_BLANK_STRETCH: u32 = 0x2_0000;
    /// `TR_GRP_BEGIN` (bit 23).
    pub const GRP_BEGIN: u32 = 0x80_0000;
    /// `TR_GRP_END` (bit 24).
    pub const GRP_END: u32 = 0x100_0000;
}

/// Rows an analog trace spans: itself and this many height extensions.
const ANALOG_EXTRA_ROWS: usize = 3;

/// The hierarchy (SST) pane, and the least width of the signal-name pane, in pixels; the
/// waves get the rest of the window's width, less GTKWave's borders and scroll bar. GTKWave
/// widens the name pane to its longest line (a name, or a group title with ` {`), about 8
/// pixels a character with its default font (measured with 3.3.118); the pane also leaves
/// room for a value of `VALUE_CHARS` after each name (`=12500000000`), shown at the marker.
const SST_WIDTH: u32 = 200;
const MIN_SIGNALS_WIDTH: u32 = 280;
const PIXELS_PER_CHAR: u32 = 8;
const VALUE_CHARS: u32 = 12;
const BORDERS: u32 = 100;

/// GTKWave draws `2^-zoom` time units per 200 pixels (`pixelsperframe` in its `calczoom`;
/// measured with 3.3.118: zoom -7 shows 0.64 time units per pixel).
const PIXELS_PER_FRAME: f64 = 200.0;

/// One trace of a [`GtkwGroup`]: the signal's full dot path, the name GTKWave shows for it,
/// and whether it is drawn as a staircase plot (for occupancies, thresholds and rates, whose
/// shape over time matters more than each value) instead of as values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GtkwTrace {
    /// Full dot path of the signal.
    pub path: String,
    /// The name shown (a GTKWave alias); `None` shows the path's last component.
    pub name: Option<String>,
    /// Draw as an analog staircase, `ANALOG_EXTRA_ROWS + 1` rows high.
    pub analog: bool,
    /// Show a vector in binary (a bit mask), not decimal.
    pub binary: bool,
    /// Show each value under a name (an enum's: an FSM state, a verdict) through a
    /// GTKWave translate filter file written beside the save file.
    pub names: Option<Translate>,
}

/// The names of an enum signal's values, as a GTKWave translate filter file
/// (`VALUE NAME` per line, the value as the trace shows it: in decimal).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Translate {
    /// Distinguishes the file: `<save file stem>.<key>.txt`.
    pub key: String,
    /// Value and name, one per line of the file.
    pub names: Vec<(u64, String)>,
}

impl Translate {
    pub fn new(key: impl Into<String>, names: &[(u64, &str)]) -> Self {
        Self {
            key: key.into(),
            names: names.iter().map(|&(v, n)| (v, n.to_string())).collect(),
        }
    }

    fn text(&self) -> String {
        self.names
            .iter()
            .map(|(v, n)| format!("{v} {}\n", one_line(n)))
            .collect()
    }
}

impl GtkwTrace {
    /// A digital trace of `path`, shown under its last component.
    pub fn new(path: impl Into<String>) -> Self {
        Self {
            path: path.into(),
            name: None,
            analog: false,
            binary: false,
            names: None,
        }
    }

    /// Shown as `name` (which should be unique within the view) instead of the last path
    /// component.
    pub fn named(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Drawn as an analog staircase.
    pub fn analog(mut self) -> Self {
        self.analog = true;
        self
    }

    /// Shown in binary.
    pub fn binary(mut self) -> Self {
        self.binary = true;
        self
    }

    /// Each value shown under its name from `names`.
    pub fn translated(mut self, names: Translate) -> Self {
        self.names = Some(names);
        self
    }
}

impl From<&str> for GtkwTrace {
    fn from(path: &str) -> Self {
        Self::new(path)
    }
}

impl From<String> for GtkwTrace {
    fn from(path: String) -> Self {
        Self::new(path)
    }
}

/// A group of traces shown together in GTKWave, as a collapsible group titled `name`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GtkwGroup {
    /// Title of the group.
    pub name: String,
    /// The traces, in display order.
    pub traces: Vec<GtkwTrace>,
}

impl GtkwGroup {
    /// Convenience constructor: `traces` are [`GtkwTrace`]s or bare paths.
    pub fn new<T: Into<GtkwTrace>>(
        name: impl Into<String>,
        traces: impl IntoIterator<Item = T>,
    ) -> Self {
        Self {
            name: name.into(),
            traces: traces.into_iter().map(Into::into).collect(),
        }
    }
}

/// The window GTKWave opens: its size in pixels, the interval of dump time shown and
/// where its marker is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GtkwView {
    /// Window width and height in pixels.
    pub size: (u32, u32),
    /// First and last dump time shown (in timescale ticks, as in the dump).
    pub times: (u64, u64),
    /// The primary marker's dump time (its values show in the name pane), if any.
    pub marker: Option<u64>,
}

impl GtkwView {
    /// A 1600 x 1000 window showing dump times `from..=to`, without a marker.
    pub fn new(from: u64, to: u64) -> Self {
        Self {
            size: (1600, 1000),
            times: (from, to),
            marker: None,
        }
    }

    /// The marker at dump time `at`.
    pub fn with_marker(mut self, at: u64) -> Self {
        self.marker = Some(at);
        self
    }

    /// GTKWave's zoom for the interval, with a name pane `signals_width` pixels wide: the
    /// waves pane shows `2^-zoom` time units per 200 pixels.
    pub fn zoom(&self, signals_width: u32) -> f64 {
        let pixels = self
            .size
            .0
            .saturating_sub(signals_width + SST_WIDTH + BORDERS)
            .max(1);
        let span = self.times.1.saturating_sub(self.times.0).max(1);
        -(span as f64 / f64::from(pixels) * PIXELS_PER_FRAME).log2()
    }
}

/// Writes a GTKWave save file at `path` that opens `dump_path` (a VCD or an FST) on `view`
/// with `groups` shown.
///
/// `signals` are the signals that are in the dump (e.g.
/// [`SignalFilter::apply`](crate::SignalFilter::apply) of the full list): their widths give
/// the names GTKWave uses (`top.x.y` for 1 bit, `top.x.y[19:0]` for 20 bits), and a trace
/// that is not among them (filtered out of the dump) is skipped silently, as is a group left
/// empty. Digital vectors are shown in decimal, single bits in binary, analog traces as a
/// staircase four rows high.
///
/// The dump file is referenced by bare file name when it is in the same directory as the
/// save file (so the pair can be moved together), else by absolute path. The save file's own
/// absolute path is recorded as `[savefile]`, which GTKWave (checked with 3.3.118) needs to
/// resolve the bare name when started from another directory.
pub fn write_gtkw(
    path: &Path,
    dump_path: &Path,
    groups: &[GtkwGroup],
    signals: &[SignalSpec],
    view: &GtkwView,
) -> Result<(), WaveError> {
    let dumpfile = dumpfile_reference(path, dump_path)?;
    let dumpfile = quotable(&dumpfile, dump_path)?;
    let savefile = std::path::absolute(path)?;
    let savefile = quotable(&savefile, path)?;

    let widths: HashMap<&str, u32> = signals.iter().map(|s| (s.path.as_str(), s.width)).collect();
    let mut text = String::new();
    text.push_str("[*]\n[*] GTKWave save file written by the `wave` crate\n[*]\n");
    // `writeln!` into a String cannot fail.
    let _ = writeln!(text, "[dumpfile] \"{dumpfile}\"");
    // GTKWave resolves a relative [dumpfile] against the current directory,
    // unless [savefile] says where the save file was written: then it finds
    // the dump relative to the save file, even after both were moved.
    let _ = writeln!(text, "[savefile] \"{savefile}\"");
    let longest = groups
        .iter()
        .flat_map(|g| {
            let title = g.name.chars().count() + 2;
            g.traces.iter().map(move |t| {
                t.name
                    .as_ref()
                    .map_or(t.path.len() + 8, |n| n.chars().count())
                    .max(title)
            })
        })
        .max()
        .unwrap_or(0);
    let signals_width =
        MIN_SIGNALS_WIDTH.max(PIXELS_PER_CHAR * (longest as u32 + VALUE_CHARS) + 24);
    text.push_str(&view_lines(view, signals_width));

    // One translate filter file per enum, beside the save file, numbered in order of use.
    let mut filters: Vec<&str> = Vec::new();

    let mut current_flags = None;
    let mut set_flags = |text: &mut String, f: u32| {
        if current_flags != Some(f) {
            let _ = writeln!(text, "@{f:x}");
            current_flags = Some(f);
        }
    };
    for group in groups {
        let traces: Vec<(&GtkwTrace, SignalSpec)> = group
            .traces
            .iter()
            .filter_map(|t| {
                widths
                    .get(t.path.as_str())
                    .map(|&w| (t, SignalSpec::new(t.path.clone(), w)))
            })
            .collect();
        if traces.is_empty() {
            continue;
        }
        let title = one_line(&group.name);
        set_flags(&mut text, flags::GRP_BEGIN | flags::BLANK);
        let _ = writeln!(text, "-{title}");
        for (t, spec) in &traces {
            let radix = if spec.width == 1 || t.binary {
                flags::BIN
            } else {
                flags::DEC
            };
            let analog = if t.analog { flags::ANALOG_STEP } else { 0 };
            let translated = if t.names.is_some() {
                flags::FTRANSLATED
            } else {
                0
            };
            set_flags(&mut text, radix | flags::RJUSTIFY | analog | translated);
            if let Some(names) = &t.names {
                let file = filter_path(path, &names.key);
                let n = match filters.iter().position(|k| *k == names.key) {
                    Some(i) => i + 1,
                    None => {
                        std::fs::write(&file, names.text())?;
                        filters.push(&names.key);
                        filters.len()
                    }
                };
                let file = std::path::absolute(&file)?;
                let _ = writeln!(text, "^{n} {}", quotable(&file, &file)?);
            }
            match &t.name {
                Some(name) => {
                    let _ = writeln!(text, "+{{{}}} {}", one_line(name), spec.gtkwave_name());
                }
                None => {
                    let _ = writeln!(text, "{}", spec.gtkwave_name());
                }
            }
            if t.analog {
                set_flags(&mut text, flags::ANALOG_BLANK_STRETCH);
                text.push_str(&"-\n".repeat(ANALOG_EXTRA_ROWS));
            }
        }
        set_flags(&mut text, flags::GRP_END | flags::BLANK);
        let _ = writeln!(text, "-{title}");
    }
    std::fs::write(path, text)?;
    Ok(())
}

/// The translate filter file of enum `key` for the save file at `gtkw`:
/// `<stem>.<key>.txt` beside it.
pub fn filter_path(gtkw: &Path, key: &str) -> PathBuf {
    let stem = gtkw
        .file_stem()
        .map_or("view".into(), |s| s.to_string_lossy());
    gtkw.with_file_name(format!("{stem}.{key}.txt"))
}

/// The lines that size the window, open it on the view's interval and set its marker
/// (the second field of the `*` line; -1 for none).
fn view_lines(view: &GtkwView, signals_width: u32) -> String {
    format!(
        "[timestart] {}\n[size] {} {}\n[pos] -1 -1\n*{:.6} {}\n[sst_width] {SST_WIDTH}\n[signals_width] {signals_width}\n[sst_expanded] 1\n",
        view.times.0,
        view.size.0,
        view.size.1,
        view.zoom(signals_width),
        view.marker.map_or(-1, |m| m as i64)
    )
}

/// `s` without line breaks (which would end a save-file line early) or braces (which end an
/// alias).
fn one_line(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_control() || c == '{' || c == '}' {
                ' '
            } else {
                c
            }
        })
        .collect()
}

/// `p` as text that can go between quotes in a save file; errors name `orig`.
fn quotable<'a>(p: &'a Path, orig: &Path) -> Result<&'a str, WaveError> {
    let text = p.to_str().ok_or_else(|| WaveError::BadPath {
        path: orig.to_string_lossy().into_owned(),
        reason: "is not valid UTF-8".to_owned(),
    })?;
    if text.contains(['"', '\n', '\r']) {
        return Err(WaveError::BadPath {
            path: text.to_owned(),
            reason: "contains a quote or line break, which a .gtkw file cannot hold".to_owned(),
        });
    }
    Ok(text)
}

/// The dump file as the save file should name it: bare file name if both are
/// in the same directory, else absolute.
fn dumpfile_reference(gtkw: &Path, dump: &Path) -> Result<PathBuf, WaveError> {
    let gtkw_abs = std::path::absolute(gtkw)?;
    let dump_abs = std::path::absolute(dump)?;
    match (gtkw_abs.parent(), dump_abs.parent(), dump_abs.file_name()) {
        (Some(a), Some(b), Some(name)) if a == b => Ok(PathBuf::from(name)),
        _ => Ok(dump_abs),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flag_values_match_gtkwave() {
        // GTKWave writes these for hex, decimal, binary, group begin/end.
        assert_eq!(format!("{:x}", flags::HEX | flags::RJUSTIFY), "22");
        assert_eq!(format!("{:x}", flags::DEC | flags::RJUSTIFY), "24");
        assert_eq!(format!("{:x}", flags::BIN | flags::RJUSTIFY), "28");
        assert_eq!(format!("{:x}", flags::GRP_BEGIN | flags::BLANK), "800200");
        assert_eq!(format!("{:x}", flags::GRP_END | flags::BLANK), "1000200");
        assert_eq!(
            format!("{:x}", flags::ANALOG_STEP | flags::DEC | flags::RJUSTIFY),
            "8024"
        );
        assert_eq!(format!("{:x}", flags::ANALOG_BLANK_STRETCH), "20000");
    }

    #[test]
    fn zoom_fits_the_interval_into_the_waves_pane() {
        // 1020 pixels of waves: 1020 time units shown at 1 per pixel, 2^-zoom per 200 px.
        let v = GtkwView::new(0, 1020);
        assert!(
            (v.zoom(280) + 200f64.log2()).abs() < 1e-9,
            "{}",
            v.zoom(280)
        );
        let v = GtkwView::new(1000, 1000 + 1020 * 4);
        assert!((v.zoom(280) + 800f64.log2()).abs() < 1e-9);
        // A wider name pane leaves fewer pixels for the same interval.
        let v = GtkwView::new(0, 510);
        assert!((v.zoom(790) + 200f64.log2()).abs() < 1e-9);
    }

    #[test]
    fn dumpfile_same_dir_is_relative() {
        let r = dumpfile_reference(Path::new("/a/b/x.gtkw"), Path::new("/a/b/x.vcd")).unwrap();
        assert_eq!(r, PathBuf::from("x.vcd"));
        let r = dumpfile_reference(Path::new("x.gtkw"), Path::new("x.vcd")).unwrap();
        assert_eq!(r, PathBuf::from("x.vcd"));
        let r = dumpfile_reference(Path::new("/a/x.gtkw"), Path::new("/a/b/x.vcd")).unwrap();
        assert_eq!(r, PathBuf::from("/a/b/x.vcd"));
        let r = dumpfile_reference(Path::new("/a/x.gtkw"), Path::new("b/x.vcd")).unwrap();
        assert!(r.is_absolute(), "{r:?}");
        assert!(r.ends_with("b/x.vcd"), "{r:?}");
    }
}
