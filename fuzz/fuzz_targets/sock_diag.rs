//! Netlink sock_diag replies as the agent's flow table reads them.
#![no_main]
use coflowkit_runtime::sockdiag::parse_dump;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = parse_dump(data, None);
    let _ = parse_dump(data, Some(7));
});
