//! A refused settings document read again, member by member from the
//! user's own text ([`crate::settings_problem::document_members`]), so that every type error, unknown
//! field and key written twice is reported at once, with the problems the
//! checks after parsing find (a bad regex, a seeded label): one round trip
//! to fix them all. Only refused documents come here; accepted ones are
//! parsed once, strictly.
//!
//! Each member is read alone, as a document of its own, against
//! [`RawSettings`] (serde's own derive, so the field names, defaults and
//! `deny_unknown_fields` stay in one place); the members of the sections,
//! `capi` and `cloudTags`, one by one inside their section. The members
//! that pass make up the settings the later checks run on.

use super::raw::RawSettings;
use crate::json::fields::FieldPath;
use crate::settings_problem::document_members::{self, Member, alone, first_of_key};
use crate::settings_problem::{SettingsProblem, SettingsProblemKind};

/// The members of the top level whose own members are read one by one.
const SECTIONS: [&str; 2] = ["capi", "cloudTags"];

/// The object `text` holds read member by member: the settings its valid
/// members give, and a problem for each member that is not valid; `None`
/// when `text` is not an object.
pub(super) fn read(text: &str) -> Option<(RawSettings, Vec<SettingsProblem>)> {
    let mut problems = Vec::new();
    // The valid members, as the text of one document.
    let mut valid = Vec::new();
    let top = document_members::members(text)?;
    for i in 0..top.len() {
        if !first_of_key(&top, i, &FieldPath::of(&[]), &mut problems) {
            continue;
        }
        let Member { key, value } = &top[i];
        // A section written `null` is unset, read whole like any member.
        if !SECTIONS.contains(&key.as_str()) || value.get() == "null" {
            let document = alone(key, value);
            if is_valid(&document, &mut problems) {
                valid.push(member_text(key, value.get()));
            }
            continue;
        }
        let Some(section) = document_members::members(value.get()) else {
            problems.push(SettingsProblem::new(
                FieldPath::of(&[key.as_str()]),
                SettingsProblemKind::SectionNotAnObject(document_members::type_name(value)),
            ));
            continue;
        };
        let at = FieldPath::of(&[key.as_str()]);
        let mut kept = Vec::new();
        for j in 0..section.len() {
            if !first_of_key(&section, j, &at, &mut problems) {
                continue;
            }
            let inner = &section[j];
            let document = format!("{{{}:{}}}", quoted(key), alone(&inner.key, inner.value));
            if is_valid(&document, &mut problems) {
                kept.push(member_text(&inner.key, inner.value.get()));
            }
        }
        valid.push(format!("{}:{{{}}}", quoted(key), kept.join(",")));
    }
    let document = format!("{{{}}}", valid.join(","));
    let settings =
        document_members::read::<RawSettings>(&document, &FieldPath::of(&[])).unwrap_or_default();
    Some((settings, problems))
}

fn quoted(key: &str) -> String {
    serde_json::to_string(key).expect("a string always serialises")
}

fn member_text(key: &str, value: &str) -> String {
    format!("{}:{value}", quoted(key))
}

/// Whether `document` is valid settings; if not, the problem, named by its
/// path.
fn is_valid(document: &str, problems: &mut Vec<SettingsProblem>) -> bool {
    match document_members::read::<RawSettings>(document, &FieldPath::of(&[])) {
        Ok(_) => true,
        Err(problem) => {
            problems.push(problem);
            false
        }
    }
}
