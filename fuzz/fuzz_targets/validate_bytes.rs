//! Arbitrary bytes as the `validate` payload: the policy must answer with a
//! decodable ValidationResponse, never panic.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let response = metadata_propagation_policy::validate(data);
    let decoded: serde_json::Value =
        serde_json::from_slice(&response).expect("validate always answers JSON");
    assert!(decoded["accepted"].is_boolean());
});
