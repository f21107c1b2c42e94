//! Reading a peer's payload: a cursor that checks every length against the
//! bytes present, and the error that ends a session. Shared by the master
//! protocol's payloads (`wire`) and the agents' own (`peer`).

use std::fmt;

/// What was wrong with the bytes a peer sent; the session ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WireError(pub String);

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for WireError {}

pub(crate) fn err<T>(msg: impl Into<String>) -> Result<T, WireError> {
    Err(WireError(msg.into()))
}

/// A little-endian cursor over a payload; every read names what it was reading.
pub(crate) struct Cursor<'a> {
    p: &'a [u8],
    off: usize,
    what: &'static str,
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(p: &'a [u8], what: &'static str) -> Self {
        Cursor { p, off: 0, what }
    }

    pub(crate) fn take(&mut self, n: usize, field: &str) -> Result<&'a [u8], WireError> {
        match self.off.checked_add(n) {
            Some(end) if end <= self.p.len() => {
                let s = &self.p[self.off..end];
                self.off = end;
                Ok(s)
            }
            _ => err(format!(
                "{} {field}: truncated ({} bytes, need {})",
                self.what,
                self.p.len(),
                self.off.saturating_add(n)
            )),
        }
    }

    pub(crate) fn u8(&mut self, field: &str) -> Result<u8, WireError> {
        Ok(self.take(1, field)?[0])
    }
    pub(crate) fn u16(&mut self, field: &str) -> Result<u16, WireError> {
        Ok(u16::from_le_bytes(self.take(2, field)?.try_into().unwrap()))
    }
    pub(crate) fn u32(&mut self, field: &str) -> Result<u32, WireError> {
        Ok(u32::from_le_bytes(self.take(4, field)?.try_into().unwrap()))
    }
    pub(crate) fn u64(&mut self, field: &str) -> Result<u64, WireError> {
        Ok(u64::from_le_bytes(self.take(8, field)?.try_into().unwrap()))
    }
    pub(crate) fn f64(&mut self, field: &str) -> Result<f64, WireError> {
        Ok(f64::from_le_bytes(self.take(8, field)?.try_into().unwrap()))
    }
    pub(crate) fn ipv4(&mut self, field: &str) -> Result<[u8; 4], WireError> {
        Ok(self.take(4, field)?.try_into().unwrap())
    }

    /// A count of records of `size` bytes each, checked against the bytes left
    /// before anything is allocated for them.
    pub(crate) fn count(&mut self, size: usize, field: &str) -> Result<usize, WireError> {
        let n = self.u32(field)? as usize;
        let left = self.p.len() - self.off;
        if n.saturating_mul(size) > left {
            return err(format!(
                "{} {field}: {n} records need {} bytes, {left} left",
                self.what,
                n.saturating_mul(size)
            ));
        }
        Ok(n)
    }

    pub(crate) fn end(&self) -> Result<(), WireError> {
        if self.off != self.p.len() {
            return err(format!(
                "{}: {} trailing bytes",
                self.what,
                self.p.len() - self.off
            ));
        }
        Ok(())
    }
}
