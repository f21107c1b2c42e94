//! A whitespace tokenizer that remembers the line of every token, for the two
//! text formats (whose records may be split across lines).

use coflowkit_model::ModelError;

pub(crate) struct Tokens<'a> {
    source: &'a str,
    toks: Vec<(&'a str, usize)>,
    pos: usize,
    last_line: usize,
}

impl<'a> Tokens<'a> {
    pub fn new(source: &'a str, text: &'a str) -> Self {
        let mut toks = Vec::new();
        let mut last_line = 0;
        for (i, line) in text.lines().enumerate() {
            for t in line.split_whitespace() {
                toks.push((t, i + 1));
                last_line = i + 1;
            }
        }
        Tokens {
            source,
            toks,
            pos: 0,
            last_line,
        }
    }

    pub fn done(&self) -> bool {
        self.pos >= self.toks.len()
    }

    pub fn err(&self, line: usize, field: &str, msg: impl Into<String>) -> ModelError {
        ModelError::new(self.source, line, field, msg)
    }

    /// The next raw token, or an error naming the missing field.
    pub fn next(&mut self, field: &str) -> Result<(&'a str, usize), ModelError> {
        match self.toks.get(self.pos) {
            Some(&t) => {
                self.pos += 1;
                Ok(t)
            }
            None => Err(self.err(self.last_line, field, "missing (the file ends here)")),
        }
    }

    pub fn uint(&mut self, field: &str) -> Result<(u64, usize), ModelError> {
        let (t, line) = self.next(field)?;
        t.parse::<u64>().map(|v| (v, line)).map_err(|_| {
            self.err(
                line,
                field,
                format!("expected a whole number ≥ 0, got '{t}'"),
            )
        })
    }

    pub fn float(&mut self, field: &str) -> Result<(f64, usize), ModelError> {
        let (t, line) = self.next(field)?;
        parse_f64(t)
            .map(|v| (v, line))
            .map_err(|m| self.err(line, field, m))
    }
}

/// A finite number.
pub(crate) fn parse_f64(t: &str) -> Result<f64, String> {
    match t.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        _ => Err(format!("expected a number, got '{t}'")),
    }
}
