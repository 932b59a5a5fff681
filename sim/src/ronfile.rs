//! Reading RON files with errors that name the file, line and column.
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use thiserror::Error;

/// A RON file could not be read or did not match its schema. Fatal for the file.
#[derive(Debug, Error)]
pub enum RonFileError {
    /// The file could not be opened or read.
    #[error("cannot read {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// The text is not valid RON or does not match the schema.
    #[error("{}:{line}:{column}: {message}", path.display())]
    Syntax {
        /// The file.
        path: PathBuf,
        /// 1-based line of the error.
        line: usize,
        /// 1-based column of the error.
        column: usize,
        /// What was wrong, as the RON reader says it.
        message: String,
    },
}

/// Reads `path` as RON into `T`. `implicit_some` is on, so optional fields are written bare.
pub fn read_ron<T: DeserializeOwned>(path: &Path) -> Result<T, RonFileError> {
    let text = std::fs::read_to_string(path).map_err(|source| RonFileError::Io {
        path: path.to_owned(),
        source,
    })?;
    parse_ron(&text, path)
}

/// Parses RON `text`; `path` only names the source in errors.
pub fn parse_ron<T: DeserializeOwned>(text: &str, path: &Path) -> Result<T, RonFileError> {
    let options =
        ron::Options::default().with_default_extension(ron::extensions::Extensions::IMPLICIT_SOME);
    options.from_str(text).map_err(|err| RonFileError::Syntax {
        path: path.to_owned(),
        line: err.span.start.line,
        column: err.span.start.col,
        message: err.code.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Tiny {
        count: u32,
        name: Option<String>,
    }

    #[test]
    fn unknown_field_names_file_line_and_column() {
        let err =
            parse_ron::<Tiny>("(\n  count: 1,\n  colour: 2,\n)", Path::new("x.ron")).unwrap_err();
        let text = err.to_string();
        assert!(text.starts_with("x.ron:3:"), "{text}");
        assert!(text.contains("colour"), "{text}");
    }

    #[test]
    fn implicit_some_accepts_bare_optional_values() {
        let tiny: Tiny = parse_ron("(count: 1, name: \"a\")", Path::new("x.ron")).unwrap();
        assert_eq!(tiny.name.as_deref(), Some("a"));
    }
}
