//! The wasm custom section `kwctl annotate` stores the policy metadata in,
//! read with `wasmparser` and written with `wasm-encoder`, the versions
//! wasmtime builds on.

use thiserror::Error;
use wasm_encoder::Section as _;
use wasmparser::{Encoding, Parser, Payload};

/// The custom section `kwctl annotate` writes the policy metadata into
/// (policy-evaluator constants.rs `KUBEWARDEN_CUSTOM_SECTION_METADATA`).
pub const METADATA_SECTION: &str = "io.kubewarden.metadata";

/// Why a byte buffer could not be walked as a wasm module.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum SectionError {
    /// The buffer does not start with `\0asm` + version 1 (a text `.wat`
    /// module, a component, or not wasm at all).
    #[error("not a wasm binary module: missing `\\0asm` magic and version 1 header")]
    NotWasm,
    /// A section is truncated or malformed (wasmparser's reason).
    #[error("malformed wasm module at byte {offset}: {message}")]
    Malformed {
        /// Where wasmparser stopped.
        offset: usize,
        /// What it found wrong there.
        message: String,
    },
}

/// The data of the first custom section called `name`, if any. The whole
/// module is walked, so a malformed one is refused wherever it breaks.
pub fn find_custom_section<'a>(
    module: &'a [u8],
    name: &str,
) -> Result<Option<&'a [u8]>, SectionError> {
    let mut payloads = Parser::new(0).parse_all(module);
    let Some(Ok(Payload::Version {
        encoding: Encoding::Module,
        ..
    })) = payloads.next()
    else {
        return Err(SectionError::NotWasm);
    };
    let mut found = None;
    for payload in payloads {
        let payload = payload.map_err(|e| SectionError::Malformed {
            offset: e.offset(),
            message: e.message().to_owned(),
        })?;
        if let Payload::CustomSection(reader) = payload
            && found.is_none()
            && reader.name() == name
        {
            found = Some(reader.data());
        }
    }
    Ok(found)
}

/// `module` with a custom section `name` holding `data` appended at the end.
///
/// Custom sections may appear anywhere, so appending leaves every other byte
/// of the module untouched. The module is walked first so that a truncated or
/// non-wasm input is refused instead of being extended.
pub fn append_custom_section(
    module: &[u8],
    name: &str,
    data: &[u8],
) -> Result<Vec<u8>, SectionError> {
    find_custom_section(module, name)?;
    let mut out = module.to_vec();
    wasm_encoder::CustomSection {
        name: name.into(),
        data: data.into(),
    }
    .append_to(&mut out);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `(module)` as a binary: header only.
    const EMPTY_MODULE: &[u8] = b"\0asm\x01\x00\x00\x00";

    /// A module with one type section `(type (func))` and nothing else.
    const MODULE_WITH_TYPE: &[u8] = b"\0asm\x01\x00\x00\x00\x01\x04\x01\x60\x00\x00";

    #[test]
    fn custom_section_round_trips_through_append_and_find() {
        let annotated =
            append_custom_section(MODULE_WITH_TYPE, METADATA_SECTION, br#"{"mutating":true}"#)
                .unwrap();

        assert_eq!(
            find_custom_section(&annotated, METADATA_SECTION).unwrap(),
            Some(&br#"{"mutating":true}"#[..])
        );
        assert_eq!(&annotated[..MODULE_WITH_TYPE.len()], MODULE_WITH_TYPE);
    }

    #[test]
    fn append_custom_section_writes_id_size_name_and_data() {
        let annotated = append_custom_section(EMPTY_MODULE, "ab", b"xyz").unwrap();

        assert_eq!(
            &annotated[EMPTY_MODULE.len()..],
            &[0u8, 6, 2, b'a', b'b', b'x', b'y', b'z'][..]
        );
    }

    #[test]
    fn append_custom_section_uses_multi_byte_leb128_for_large_payloads() {
        let data = vec![b'x'; 200];
        let annotated = append_custom_section(EMPTY_MODULE, "n", &data).unwrap();

        // payload = 1 (name length) + 1 (name) + 200 = 202 = 0xCA → [0xCA, 0x01]
        assert_eq!(&annotated[8..12], &[0u8, 0xCA, 0x01, 1][..]);
        assert_eq!(
            find_custom_section(&annotated, "n").unwrap(),
            Some(&data[..])
        );
    }

    #[test]
    fn find_custom_section_is_none_when_absent() {
        assert_eq!(
            find_custom_section(MODULE_WITH_TYPE, METADATA_SECTION).unwrap(),
            None
        );
    }

    #[test]
    fn find_custom_section_returns_the_first_of_that_name() {
        let once = append_custom_section(EMPTY_MODULE, "name", b"1").unwrap();
        let twice = append_custom_section(&once, METADATA_SECTION, b"2").unwrap();
        let thrice = append_custom_section(&twice, "name", b"3").unwrap();

        assert_eq!(
            find_custom_section(&thrice, "name").unwrap(),
            Some(&b"1"[..])
        );
        assert_eq!(
            find_custom_section(&thrice, METADATA_SECTION).unwrap(),
            Some(&b"2"[..])
        );
    }

    #[test]
    fn find_custom_section_rejects_text_modules() {
        assert_eq!(
            find_custom_section(b"(module)", METADATA_SECTION),
            Err(SectionError::NotWasm)
        );
    }

    #[test]
    fn find_custom_section_rejects_truncated_sections() {
        // type section claims 4 payload bytes, only 2 present
        let truncated = b"\0asm\x01\x00\x00\x00\x01\x04\x01\x60";

        let result = find_custom_section(truncated, METADATA_SECTION);

        assert!(
            matches!(result, Err(SectionError::Malformed { offset: 10, .. })),
            "{result:?}"
        );
    }
}
