//! Reads and appends wasm custom sections without a wasm parser crate.
//!
//! A wasm binary is the magic `\0asm`, a little-endian version (1), then a
//! sequence of sections: one id byte, a LEB128 `u32` payload size, the
//! payload. Custom sections have id 0 and their payload starts with a LEB128
//! name length and the UTF-8 name; the rest is opaque data. That is all
//! `kwctl annotate` needs: it stores the policy metadata as JSON in the custom
//! section `io.kubewarden.metadata`.

use thiserror::Error;

/// The custom section `kwctl annotate` writes the policy metadata into
/// (policy-evaluator constants.rs `KUBEWARDEN_CUSTOM_SECTION_METADATA`).
pub const METADATA_SECTION: &str = "io.kubewarden.metadata";

const MAGIC: &[u8; 4] = b"\0asm";
const VERSION_1: &[u8; 4] = &[1, 0, 0, 0];
const CUSTOM_SECTION_ID: u8 = 0;

/// Why a byte buffer could not be walked as a wasm module.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum SectionError {
    /// The buffer does not start with `\0asm` + version 1 (a text `.wat`
    /// module, a component, or not wasm at all).
    #[error("not a wasm binary module: missing `\\0asm` magic and version 1 header")]
    NotWasm,
    /// A section header or payload runs past the end of the buffer.
    #[error("truncated wasm module: section at byte {offset} runs past the end")]
    Truncated {
        /// Offset of the section's id byte.
        offset: usize,
    },
    /// A LEB128 size is longer than 5 bytes or overflows `u32`.
    #[error("malformed wasm module: bad LEB128 size at byte {offset}")]
    BadLeb128 {
        /// Offset of the first byte of the LEB128 number.
        offset: usize,
    },
    /// A custom section name is not UTF-8.
    #[error("malformed wasm module: custom section name at byte {offset} is not UTF-8")]
    BadName {
        /// Offset of the name's first byte.
        offset: usize,
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
    if module.len() < 8 || &module[0..4] != MAGIC || &module[4..8] != VERSION_1 {
        return Err(SectionError::NotWasm);
    }
    let mut sections = Vec::new();
    let mut pos = 8;
    while pos < module.len() {
        let section_start = pos;
        let id = module[pos];
        pos += 1;
        let (size, after_size) = read_leb128_u32(module, pos)?;
        let payload_end = after_size
            .checked_add(size as usize)
            .filter(|end| *end <= module.len())
            .ok_or(SectionError::Truncated {
                offset: section_start,
            })?;
        if id == CUSTOM_SECTION_ID {
            let (name_len, name_start) = read_leb128_u32(module, after_size)?;
            let name_end = name_start
                .checked_add(name_len as usize)
                .filter(|end| *end <= payload_end)
                .ok_or(SectionError::Truncated {
                    offset: section_start,
                })?;
            let name = std::str::from_utf8(&module[name_start..name_end])
                .map_err(|_| SectionError::BadName { offset: name_start })?;
            sections.push(CustomSection {
                name,
                data: &module[name_end..payload_end],
            });
        }
        pos = payload_end;
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
    let mut payload = Vec::with_capacity(5 + name.len() + data.len());
    write_leb128_u32(&mut payload, len_u32(name.len()));
    payload.extend_from_slice(name.as_bytes());
    payload.extend_from_slice(data);

    let mut out = Vec::with_capacity(module.len() + 6 + payload.len());
    out.extend_from_slice(module);
    out.push(CUSTOM_SECTION_ID);
    write_leb128_u32(&mut out, len_u32(payload.len()));
    out.extend_from_slice(&payload);
    Ok(out)
}

/// Lengths above 4 GiB cannot be encoded in a wasm section; a module that
/// large cannot exist, so this is an invariant, not an input error.
fn len_u32(len: usize) -> u32 {
    u32::try_from(len).expect("wasm section payloads are smaller than 4 GiB")
}

fn read_leb128_u32(bytes: &[u8], start: usize) -> Result<(u32, usize), SectionError> {
    let mut result: u64 = 0;
    for (i, byte) in bytes.iter().skip(start).take(5).enumerate() {
        result |= u64::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            let value =
                u32::try_from(result).map_err(|_| SectionError::BadLeb128 { offset: start })?;
            return Ok((value, start + i + 1));
        }
    }
    if bytes.len() < start + 5 {
        Err(SectionError::Truncated { offset: start })
    } else {
        Err(SectionError::BadLeb128 { offset: start })
    }
}

fn write_leb128_u32(out: &mut Vec<u8>, mut value: u32) {
    loop {
        let byte = (value & 0x7f) as u8;
        value >>= 7;
        if value == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
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

        assert_eq!(
            custom_sections(truncated),
            Err(SectionError::Truncated { offset: 8 })
        );
    }
}
