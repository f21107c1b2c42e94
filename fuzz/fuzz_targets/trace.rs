//! Text traces: Coflow-Benchmark and Sincronia (the first byte picks the reader,
//! or detection), as `coflowkit simulate --trace` reads them.
#![no_main]
use coflowkit_trace::{read_text, Format};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let format = match pick % 3 {
        0 => Some(Format::Benchmark),
        1 => Some(Format::Sincronia),
        _ => None,
    };
    let _ = read_text("fuzz", text, format);
});
