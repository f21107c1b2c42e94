//! The master-agent protocol: frames cut from a byte stream (in chunks the
//! input chooses), every payload decoder, and re-encoding of what decodes.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    coflowkit_runtime::wire::exercise(data);
});
