use std::fmt;

/// An error in a workload: names where (source, line or row, field) and what.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelError {
    /// File name or other source description ("" when unknown).
    pub source: String,
    /// 1-based line (or row) number, 0 when not tied to a line.
    pub line: usize,
    /// The field at fault ("" when not tied to a field).
    pub field: String,
    /// What is wrong.
    pub message: String,
    /// `line` counts table rows (Parquet), not text lines.
    pub is_row: bool,
}

impl ModelError {
    pub fn new(
        source: impl Into<String>,
        line: usize,
        field: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        ModelError {
            source: source.into(),
            line,
            field: field.into(),
            message: message.into(),
            is_row: false,
        }
    }

    /// The same error, with `line` read as a table row.
    pub fn at_row(mut self) -> Self {
        self.is_row = true;
        self
    }

    /// An error about a parameter or option, not tied to a file.
    pub fn param(field: impl Into<String>, message: impl Into<String>) -> Self {
        ModelError::new("", 0, field, message)
    }
}

impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut wrote = false;
        if !self.source.is_empty() {
            write!(f, "{}", self.source)?;
            wrote = true;
        }
        if self.line > 0 {
            if self.is_row {
                if wrote {
                    write!(f, ": ")?;
                }
                write!(f, "row ")?;
            } else if wrote {
                write!(f, ":")?;
            } else {
                write!(f, "line ")?;
            }
            write!(f, "{}", self.line)?;
            wrote = true;
        }
        if !self.field.is_empty() {
            if wrote {
                write!(f, ": ")?;
            }
            write!(f, "{}", self.field)?;
            wrote = true;
        }
        if wrote {
            write!(f, ": ")?;
        }
        write!(f, "{}", self.message)
    }
}

impl std::error::Error for ModelError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_names_file_line_and_field() {
        let e = ModelError::new("t.txt", 3, "arrival", "not a number: 'x'");
        assert_eq!(e.to_string(), "t.txt:3: arrival: not a number: 'x'");
        let p = ModelError::param("gbps", "must be > 0");
        assert_eq!(p.to_string(), "gbps: must be > 0");
        let r = ModelError::new("f.parquet", 7, "bytes", "must be > 0").at_row();
        assert_eq!(r.to_string(), "f.parquet: row 7: bytes: must be > 0");
    }
}
