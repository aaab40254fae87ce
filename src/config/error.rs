use std::fmt;
use std::path::PathBuf;

/// Why a configuration file was refused. Every message names the file, and the JSON path (such as
/// `mcpServers.github.url`) or the line and column, then what was expected. Messages never contain
/// the value of a header, an environment entry or a URL.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The file could not be read.
    #[error("{}: cannot read the configuration file: {source}: check the path (`--config` on the command line)", file.display())]
    Read {
        /// The file.
        file: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The path is not a regular file (a FIFO, a device, a directory, a socket): reading it could
    /// block for ever or never end, so it is refused before anything is read.
    #[error("{}: the configuration path is {kind}, not a regular file: copy a pipe's or a device's contents into a regular file and give its path (`--config` on the command line)", file.display())]
    NotAFile {
        /// The path.
        file: PathBuf,
        /// What it is instead, with its article ("a FIFO (named pipe)", "a directory").
        kind: &'static str,
    },
    /// The file is larger than [`MAX_FILE_BYTES`](super::MAX_FILE_BYTES) (`/dev/zero`, a log
    /// file given by mistake).
    #[error("{}: the configuration file is larger than {limit} bytes: check the path (`--config` on the command line)", file.display())]
    TooLarge {
        /// The file.
        file: PathBuf,
        /// The limit in bytes.
        limit: u64,
    },
    /// The file is not valid JSON.
    #[error("{}:{line}:{column}: invalid JSON: {message}", file.display())]
    Syntax {
        /// The file.
        file: PathBuf,
        /// 1-based line of the error.
        line: usize,
        /// 1-based column of the error.
        column: usize,
        /// What the JSON parser expected.
        message: String,
    },
    /// The JSON is well formed but a value is not what the format expects.
    #[error("{}", Located { file, path, message })]
    Invalid {
        /// The file.
        file: PathBuf,
        /// The JSON path of the offending value, e.g. `mcpServers.github.url` (empty for the
        /// document itself).
        path: String,
        /// What was expected, and what to do.
        message: String,
    },
}

impl ConfigError {
    /// The JSON path of the offending value, when the error is about one.
    pub fn json_path(&self) -> Option<&str> {
        match self {
            ConfigError::Invalid { path, .. } => Some(path),
            _ => None,
        }
    }
}

/// Something legitimate but probably not meant, e.g. a step naming a server that is not configured
/// (it will resolve as `absent`). Shown by the commands, never fatal.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ConfigWarning {
    /// The file.
    pub file: PathBuf,
    /// The JSON path of the value concerned.
    pub path: String,
    /// What looks wrong and what happens because of it.
    pub message: String,
}

impl fmt::Display for ConfigWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        Located {
            file: &self.file,
            path: &self.path,
            message: &self.message,
        }
        .fmt(f)
    }
}

/// `file: path: message`, or `file: message` for the document itself.
struct Located<'a> {
    file: &'a PathBuf,
    path: &'a str,
    message: &'a str,
}

impl fmt::Display for Located<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            write!(f, "{}: {}", self.file.display(), self.message)
        } else {
            write!(
                f,
                "{}: {}: {}",
                self.file.display(),
                self.path,
                self.message
            )
        }
    }
}
