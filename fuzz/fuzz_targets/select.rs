#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| dptune_fuzz::library::select(data));
