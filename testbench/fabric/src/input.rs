//! Reading an input file with a bound on its size, checked before anything is allocated.

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
