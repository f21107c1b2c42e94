//! Trace formats: readers and writers with precise errors, and format detection.
//!
//! | format      | unit conversions at the edge                          | flow index             |
//! |-------------|-------------------------------------------------------|------------------------|
//! | `benchmark` | arrival ms → s; reducer MB (1 MB = 2^20 B) ÷ mappers  | mapper-major           |
//! | `sincronia` | arrival ms → s; flow MB → bytes                        | file order             |
//! | `flows`     | none (bytes, seconds)                                  | ascending `flow_id`    |
//!
//! Every reader validates the whole input before anything is simulated: a reader
//! either returns a complete [`Workload`] or one [`ModelError`] naming the file, the
//! line (or row) and the field.

mod benchmark;
mod flowtable;
mod sincronia;
pub mod synthetic;
mod tokens;

pub use benchmark::{read_benchmark, write_benchmark};
pub use flowtable::{read_flow_csv, write_flow_csv, FlowColumns};
pub use sincronia::{read_sincronia, write_sincronia};

use coflowkit_model::{ModelError, Workload};

/// A trace format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Benchmark,
    Sincronia,
    Flows,
}

impl Format {
    pub fn parse(s: &str) -> Result<Format, ModelError> {
        match s {
            "benchmark" => Ok(Format::Benchmark),
            "sincronia" => Ok(Format::Sincronia),
            "flows" | "csv" => Ok(Format::Flows),
            other => Err(ModelError::param(
                "format",
                format!(
                    "unknown trace format '{other}'; valid formats: benchmark, sincronia, flows"
                ),
            )),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Format::Benchmark => "benchmark",
            Format::Sincronia => "sincronia",
            Format::Flows => "flows",
        }
    }
}

/// Detects the format of a text trace from its content.
pub fn detect(source: &str, text: &str) -> Result<Format, ModelError> {
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let first = match lines.next() {
        Some(l) => l,
        None => return Err(ModelError::new(source, 0, "", "the file is empty")),
    };
    if first.contains(',') {
        return Ok(Format::Flows);
    }
    match lines.next() {
        Some(second) if second.contains(':') => Ok(Format::Benchmark),
        Some(_) => Ok(Format::Sincronia),
        None => Err(ModelError::new(
            source,
            1,
            "",
            "cannot tell the format from a header alone; the trace has no coflow lines",
        )),
    }
}

/// Reads a text trace in `format` (or the detected one when `None`).
pub fn read_text(source: &str, text: &str, format: Option<Format>) -> Result<Workload, ModelError> {
    let format = match format {
        Some(f) => f,
        None => detect(source, text)?,
    };
    match format {
        Format::Benchmark => read_benchmark(source, text),
        Format::Sincronia => read_sincronia(source, text),
        Format::Flows => read_flow_csv(source, text),
    }
}

/// Reads a trace file. Parquet flow tables are read by the Python package.
pub fn read_path(path: &str, format: Option<Format>) -> Result<Workload, ModelError> {
    let bytes = std::fs::read(path)
        .map_err(|e| ModelError::new(path, 0, "", format!("cannot read the file: {e}")))?;
    if bytes.starts_with(b"PAR1") {
        return Err(ModelError::new(
            path,
            0,
            "",
            "this is a Parquet file; read it with the Python package (coflowkit.load_trace)",
        ));
    }
    let text = String::from_utf8(bytes)
        .map_err(|e| ModelError::new(path, 0, "", format!("the file is not UTF-8 text: {e}")))?;
    read_text(path, &text, format)
}

/// Writes a workload in a text format.
pub fn write_text(w: &Workload, format: Format) -> Result<String, ModelError> {
    match format {
        Format::Benchmark => write_benchmark(w),
        Format::Sincronia => Ok(write_sincronia(w)),
        Format::Flows => Ok(write_flow_csv(w)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_each_format() {
        assert_eq!(
            detect("t", "2 1\n1 0 1 0 1 1:2.0\n").unwrap(),
            Format::Benchmark
        );
        assert_eq!(
            detect("t", "2 1\n1 0 1 1 1\n0 1 2.0\n").unwrap(),
            Format::Sincronia
        );
        assert_eq!(detect("t", "coflow_id,flow_id\n").unwrap(), Format::Flows);
        assert_eq!(
            detect("t", "\n\n").unwrap_err().to_string(),
            "t: the file is empty"
        );
        assert!(detect("t", "2 1\n").is_err());
    }
}
