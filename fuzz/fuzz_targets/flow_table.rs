//! CSV flow tables (`flow_id, src, dst, start_s, bytes, ...`).
#![no_main]
use coflowkit_trace::read_flow_csv;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = read_flow_csv("fuzz", text);
    }
});
