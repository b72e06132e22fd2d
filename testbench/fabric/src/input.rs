//! The input files' common ground: reading with a bound on the size, checked before
//! anything is allocated; the records as numbered lines of fields; and the one error style
//! of every format, the line and field and what is allowed.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

/// A file that could not be read, or that is larger than its format allows.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: {bytes} bytes or more, above the limit of {limit} bytes for this file")]
    TooLarge {
        path: PathBuf,
        bytes: u64,
        limit: u64,
    },
    #[error("{path}: not UTF-8 text")]
    NotText { path: PathBuf },
}

/// A bad record: the line (from 1), the field and what is allowed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}, {field}: {problem}")]
pub struct FieldError {
    pub line: usize,
    pub field: &'static str,
    pub problem: String,
}

pub fn field_error(line: usize, field: &'static str, problem: impl Into<String>) -> FieldError {
    FieldError {
        line,
        field,
        problem: problem.into(),
    }
}

/// A file that could not be read or has a bad record.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    #[error(transparent)]
    Read(#[from] ReadError),
    #[error(transparent)]
    Field(#[from] FieldError),
}

/// The non-blank lines' whitespace-separated fields, with their line numbers (from 1).
pub fn numbered_lines(text: &str) -> impl Iterator<Item = (usize, Vec<&str>)> {
    text.lines()
        .enumerate()
        .map(|(index, line)| (index + 1, line.split_whitespace().collect::<Vec<_>>()))
        .filter(|(_, fields)| !fields.is_empty())
}

/// The file's text, if it has at most `limit` bytes.
pub fn read_bounded(path: &Path, limit: u64) -> Result<String, ReadError> {
    let io = |source| ReadError::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = File::open(path).map_err(io)?;
    let declared = file.metadata().map_err(io)?.len();
    let too_large = |bytes| ReadError::TooLarge {
        path: path.to_path_buf(),
        bytes,
        limit,
    };
    if declared > limit {
        return Err(too_large(declared));
    }
    // The length can change under us (a pipe, a growing file): read one byte past the limit.
    let mut bytes = Vec::with_capacity(declared as usize);
    file.take(limit + 1).read_to_end(&mut bytes).map_err(io)?;
    if bytes.len() as u64 > limit {
        return Err(too_large(bytes.len() as u64));
    }
    String::from_utf8(bytes).map_err(|_| ReadError::NotText {
        path: path.to_path_buf(),
    })
}

/// Checks that each bad text gets a [`FieldError`] on the expected line and field whose
/// message contains the expected words.
#[cfg(test)]
pub fn assert_field_errors<T: std::fmt::Debug>(
    cases: &[(&str, usize, &str, &str)],
    parse: impl Fn(&str) -> Result<T, FieldError>,
) {
    for &(text, line, field, needle) in cases {
        let err = parse(text).expect_err(text);
        assert_eq!(
            (err.line, err.field),
            (line, field),
            "{text:?}: {}",
            err.problem
        );
        assert!(
            err.problem.contains(needle),
            "{text:?}: `{}` lacks `{needle}`",
            err.problem
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_above_the_limit_is_refused() {
        let path = std::env::temp_dir().join(format!("fabric-input-{}.txt", std::process::id()));
        std::fs::write(&path, "0123456789").unwrap();
        assert_eq!(read_bounded(&path, 10).unwrap(), "0123456789");
        let err = read_bounded(&path, 9).unwrap_err();
        assert!(
            matches!(
                err,
                ReadError::TooLarge {
                    bytes: 10,
                    limit: 9,
                    ..
                }
            ),
            "{err}"
        );
        std::fs::remove_file(&path).unwrap();
        assert!(matches!(read_bounded(&path, 9), Err(ReadError::Io { .. })));
    }
}
