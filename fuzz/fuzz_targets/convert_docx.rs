//! Fuzzes the Docx converter: any bytes give Markdown or an error, never a panic or a hang.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ragdown_convert::{ConvertError, Format, Limits, convert_with};

fuzz_target!(|data: &[u8]| {
    let limits = Limits {
        timeout: std::time::Duration::from_secs(10),
        ..Limits::default()
    };
    // The guarded converter turns a converter panic into an error; the fuzzer hunts those.
    if let Err(ConvertError::Panicked(_)) = convert_with(Format::Docx, data, &limits) {
        panic!("the Docx converter panicked");
    }
});
