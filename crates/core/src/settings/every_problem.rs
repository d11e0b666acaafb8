//! A refused settings document read again, field by field, so that every
//! type error and unknown field is reported at once, with the problems the
//! checks after parsing find (a bad regex, a seeded label): one round trip
//! to fix them all. Only refused documents come here; accepted ones are
//! parsed once, strictly.
//!
//! Each member is tried alone against its struct (serde's own derive, so
//! the field names, defaults and `deny_unknown_fields` stay in one place);
//! the members that pass make up the settings the later checks run on. The
//! sections, `capi` and `cloudTags`, are read the same way one level down.

use super::{Problem, RawCapiSettings, RawCloudTagSettings, RawSettings};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

/// `document` (an object) read member by member: the settings its valid
/// members give, and a problem for each member that is not valid.
pub(super) fn read(document: &Map<String, Value>) -> (RawSettings, Vec<String>) {
    let mut problems = Vec::new();
    let mut valid = Map::new();
    let mut capi = RawCapiSettings::default();
    let mut cloud_tags = RawCloudTagSettings::default();
    for (key, value) in document {
        match key.as_str() {
            "capi" => capi = section("capi", value, &mut problems),
            "cloudTags" => cloud_tags = section("cloudTags", value, &mut problems),
            _ => {
                if member_is_valid::<RawSettings>("", key, value, &mut problems) {
                    valid.insert(key.clone(), value.clone());
                }
            }
        }
    }
    let mut settings: RawSettings =
        serde_json::from_value(Value::Object(valid)).unwrap_or_default();
    settings.capi = capi;
    settings.cloud_tags = cloud_tags;
    (settings, problems)
}

/// The section `name` read member by member; its defaults when it is not
/// an object.
fn section<T: DeserializeOwned + Default>(
    name: &str,
    value: &Value,
    problems: &mut Vec<String>,
) -> T {
    let Value::Object(members) = value else {
        problems.push(
            Problem::Refused {
                path: name.to_owned(),
                message: format!(
                    "expected an object, found {}",
                    crate::fields::type_name(value)
                ),
            }
            .to_string(),
        );
        return T::default();
    };
    let prefix = format!("{name}.");
    let valid: Map<String, Value> = members
        .iter()
        .filter(|(key, value)| member_is_valid::<T>(&prefix, key, value, problems))
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect();
    serde_json::from_value(Value::Object(valid)).unwrap_or_default()
}

/// Whether `{key: value}` alone is a valid `T`; if not, the problem, its
/// path under `prefix`.
fn member_is_valid<T: DeserializeOwned>(
    prefix: &str,
    key: &str,
    value: &Value,
    problems: &mut Vec<String>,
) -> bool {
    let alone = Value::Object(Map::from_iter([(key.to_owned(), value.clone())]));
    match serde_path_to_error::deserialize::<_, T>(alone) {
        Ok(_) => true,
        Err(e) => {
            let path = e.path().to_string();
            problems.push(
                Problem::Refused {
                    path: format!("{prefix}{path}"),
                    message: e.into_inner().to_string(),
                }
                .to_string(),
            );
            false
        }
    }
}
