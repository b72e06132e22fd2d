//! GTKWave save files (`.gtkw`).
//!
//! A save file tells GTKWave which dump to open and which traces to show, so
//! an architect gets a useful view with one command (`gtkwave run.gtkw`)
//! instead of digging through thousands of signals by hand.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::{SignalSpec, WaveError};

/// GTKWave trace flags (`TR_*` in GTKWave's `savefile.h`/`analyzer.h`),
/// written as `@<hex>` lines before the traces they apply to.
mod flags {
    /// `TR_HEX`.
    #[cfg(test)]
    pub const HEX: u32 = 0x2;
    /// `TR_DEC`: unsigned decimal.
    pub const DEC: u32 = 0x4;
    /// `TR_BIN`.
    pub const BIN: u32 = 0x8;
    /// `TR_RJUSTIFY`: right-justified values, GTKWave's default.
    pub const RJUSTIFY: u32 = 0x20;
    /// `TR_BLANK`: a blank/comment row (group titles are blank rows).
    pub const BLANK: u32 = 0x200;
    /// `TR_GRP_BEGIN`.
    pub const GRP_BEGIN: u32 = 0x80_0000;
    /// `TR_GRP_END`.
    pub const GRP_END: u32 = 0x100_0000;
}

/// A group of signals shown together in GTKWave, as a collapsible group
/// titled `name`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GtkwGroup {
    /// Title of the group.
    pub name: String,
    /// Full dot paths of the signals, in display order.
    pub signals: Vec<String>,
}

impl GtkwGroup {
    /// Convenience constructor.
    pub fn new<S: Into<String>>(
        name: impl Into<String>,
        signals: impl IntoIterator<Item = S>,
    ) -> Self {
        Self {
            name: name.into(),
            signals: signals.into_iter().map(Into::into).collect(),
        }
    }
}

/// Writes a GTKWave save file at `path` that opens `vcd_path` with `groups`
/// shown.
///
/// `signals` are the signals that are in the VCD (e.g.
/// [`SignalFilter::apply`](crate::SignalFilter::apply) of the full list):
/// their widths give the names GTKWave uses (`top.x.y` for 1 bit,
/// `top.x.y[19:0]` for 20 bits), and a group entry that is not among them
/// (filtered out of the dump) is skipped silently, as is a group left empty.
/// Vectors are shown in decimal, single bits in binary.
///
/// The dump file is referenced by bare file name when it is in the same
/// directory as the save file (so the pair can be moved together), else by
/// absolute path. The save file's own absolute path is recorded as
/// `[savefile]`, which GTKWave (checked with 3.3.118) needs to resolve the
/// bare name when started from another directory.
pub fn write_gtkw(
    path: &Path,
    vcd_path: &Path,
    groups: &[GtkwGroup],
    signals: &[SignalSpec],
) -> Result<(), WaveError> {
    let dumpfile = dumpfile_reference(path, vcd_path)?;
    let dumpfile = quotable(&dumpfile, vcd_path)?;
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
    text.push_str("[timestart] 0\n");

    let mut current_flags = None;
    let mut set_flags = |text: &mut String, f: u32| {
        if current_flags != Some(f) {
            let _ = writeln!(text, "@{f:x}");
            current_flags = Some(f);
        }
    };
    for group in groups {
        let traces: Vec<SignalSpec> = group
            .signals
            .iter()
            .filter_map(|p| {
                widths
                    .get(p.as_str())
                    .map(|&w| SignalSpec::new(p.clone(), w))
            })
            .collect();
        if traces.is_empty() {
            continue;
        }
        // A line break in the title would end the `-` line early.
        let title: String = group
            .name
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect();
        set_flags(&mut text, flags::GRP_BEGIN | flags::BLANK);
        let _ = writeln!(text, "-{title}");
        for t in &traces {
            let radix = if t.width == 1 { flags::BIN } else { flags::DEC };
            set_flags(&mut text, radix | flags::RJUSTIFY);
            let _ = writeln!(text, "{}", t.gtkwave_name());
        }
        set_flags(&mut text, flags::GRP_END | flags::BLANK);
        let _ = writeln!(text, "-{title}");
    }
    std::fs::write(path, text)?;
    Ok(())
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
fn dumpfile_reference(gtkw: &Path, vcd: &Path) -> Result<PathBuf, WaveError> {
    let gtkw_abs = std::path::absolute(gtkw)?;
    let vcd_abs = std::path::absolute(vcd)?;
    match (gtkw_abs.parent(), vcd_abs.parent(), vcd_abs.file_name()) {
        (Some(a), Some(b), Some(name)) if a == b => Ok(PathBuf::from(name)),
        _ => Ok(vcd_abs),
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
