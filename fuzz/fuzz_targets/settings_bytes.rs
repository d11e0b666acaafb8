//! Arbitrary bytes as the settings document: `validate_settings` must answer
//! `{"valid": bool, "message": …}`, never panic, whatever the regexes.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let response = metadata_propagation_policy::edge::validate_settings(data);
    let decoded: serde_json::Value =
        serde_json::from_slice(&response).expect("validate_settings always answers JSON");
    assert!(decoded["valid"].is_boolean());
});
