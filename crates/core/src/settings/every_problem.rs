//! A refused settings document read again, field by field, so that every
//! type error and unknown field is reported at once, with the problems the
//! checks after parsing find (a bad regex, a seeded label): one round trip
//! to fix them all. Only refused documents come here; accepted ones are
//! parsed once, strictly.
//!
//! Each member is tried alone, as a document of its own, against
//! [`RawSettings`] (serde's own derive, so the field names, defaults and
//! `deny_unknown_fields` stay in one place); the members of the sections,
//! `capi` and `cloudTags`, one by one inside their section. The members
//! that pass make up the settings the later checks run on. Everything goes
//! through the one deserializer `Settings::parse` already uses (JSON text
//! into `RawSettings`): another one, from a `serde_json::Value`, would add
//! its whole copy of the derive to the module, every request's download.

use super::problem::{SettingsProblem, SettingsProblemKind};
use super::raw::RawSettings;
use super::refused_at::{self, object};
use crate::fields::FieldPath;
use serde_json::{Map, Value};

/// The members of the top level whose own members are read one by one.
const SECTIONS: [&str; 2] = ["capi", "cloudTags"];

/// `document` (an object) read member by member: the settings its valid
/// members give, and a problem for each member that is not valid.
pub(super) fn read(document: &Map<String, Value>) -> (RawSettings<'static>, Vec<SettingsProblem>) {
    let mut problems = Vec::new();
    let mut valid = Map::new();
    for (key, value) in document {
        match (SECTIONS.contains(&key.as_str()), value) {
            (true, Value::Object(members)) => {
                // Through a Vec: the map is built by the one instantiation
                // the policy's other (String, Value) maps use
                // (crate::sorted_map says why).
                let kept: Vec<(String, Value)> = members
                    .iter()
                    .filter(|(member, value)| {
                        let alone = object(member, (*value).clone());
                        is_valid(object(key, alone), &mut problems)
                    })
                    .map(|(member, value)| (member.clone(), value.clone()))
                    .collect();
                let kept: Map<String, Value> = kept.into_iter().collect();
                valid.insert(key.clone(), Value::Object(kept));
            }
            (true, other) => problems.push(SettingsProblem::new(
                FieldPath::of(&[key.as_str()]),
                SettingsProblemKind::SectionNotAnObject(crate::fields::type_name(other)),
            )),
            (false, _) => {
                if is_valid(object(key, value.clone()), &mut problems) {
                    valid.insert(key.clone(), value.clone());
                }
            }
        }
    }
    let settings = parse(&Value::Object(valid)).unwrap_or_default();
    (settings, problems)
}

/// Whether `document` is valid settings; if not, the problem, named by its
/// path.
fn is_valid(document: Value, problems: &mut Vec<SettingsProblem>) -> bool {
    match parse(&document) {
        Ok(_) => true,
        Err(problem) => {
            problems.push(problem);
            false
        }
    }
}

fn parse(document: &Value) -> Result<RawSettings<'static>, SettingsProblem> {
    refused_at::parse(document, &FieldPath::of(&[]), |text| {
        serde_json::from_str::<RawSettings>(text).map(RawSettings::into_owned)
    })
}
