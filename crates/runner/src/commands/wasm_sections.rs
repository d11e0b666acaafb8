//! Reads and appends the wasm custom sections `kwctl annotate` uses: it
//! stores the policy metadata as JSON in the custom section
//! `io.kubewarden.metadata`.
//!
//! The module is walked with `wasmparser` and the section written with
//! `wasm-encoder`, the versions wasmtime builds on, so the runner reads a
//! module as its engine does.

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

/// One custom section found in a module.
#[derive(Debug, PartialEq, Eq)]
pub struct CustomSection<'a> {
    /// The section name.
    pub name: &'a str,
    /// The section payload after the name.
    pub data: &'a [u8],
}

/// Every custom section of `module`, in file order.
pub fn custom_sections(module: &[u8]) -> Result<Vec<CustomSection<'_>>, SectionError> {
    let mut payloads = Parser::new(0).parse_all(module);
    match payloads.next() {
        Some(Ok(Payload::Version {
            encoding: Encoding::Module,
            ..
        })) => {}
        _ => return Err(SectionError::NotWasm),
    }
    let mut sections = Vec::new();
    for payload in payloads {
        let payload = payload.map_err(|e| SectionError::Malformed {
            offset: e.offset(),
            message: e.message().to_owned(),
        })?;
        if let Payload::CustomSection(reader) = payload {
            sections.push(CustomSection {
                name: reader.name(),
                data: reader.data(),
            });
        }
    }
    Ok(sections)
}

/// The data of the first custom section called `name`, if any.
pub fn find_custom_section<'a>(
    module: &'a [u8],
    name: &str,
) -> Result<Option<&'a [u8]>, SectionError> {
    Ok(custom_sections(module)?
        .into_iter()
        .find(|section| section.name == name)
        .map(|section| section.data))
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
    custom_sections(module)?;
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
    fn custom_sections_lists_every_custom_section_in_order() {
        let once = append_custom_section(EMPTY_MODULE, "name", b"1").unwrap();
        let twice = append_custom_section(&once, METADATA_SECTION, b"2").unwrap();

        assert_eq!(
            custom_sections(&twice).unwrap(),
            vec![
                CustomSection {
                    name: "name",
                    data: b"1"
                },
                CustomSection {
                    name: METADATA_SECTION,
                    data: b"2"
                },
            ]
        );
    }

    #[test]
    fn custom_sections_rejects_text_modules() {
        assert_eq!(custom_sections(b"(module)"), Err(SectionError::NotWasm));
    }

    #[test]
    fn custom_sections_rejects_truncated_sections() {
        // type section claims 4 payload bytes, only 2 present
        let truncated = b"\0asm\x01\x00\x00\x00\x01\x04\x01\x60";

        assert!(
            matches!(
                custom_sections(truncated),
                Err(SectionError::Malformed { offset: 10, .. })
            ),
            "{:?}",
            custom_sections(truncated)
        );
    }
}
