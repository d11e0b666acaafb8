//! Policy settings: what users write in the ClusterAdmissionPolicy, read
//! into each stage's section.
//!
//! Settings are parsed strictly (unknown fields and wrong types are refused,
//! with the path of the offending field); each section is then *prepared*
//! by its stage when a request first reads it (the CAPI patterns compiled,
//! the cloud-tag profiles and keys checked). `validate_settings` prepares
//! every section and collects every problem, so a user fixes all of them in
//! one round trip instead of one per `kubectl apply`.

use crate::capi::CapiSettings;
use crate::json::fields::{self, FieldPath};
use crate::settings_problem::SettingsProblemKind;
#[cfg(feature = "invariants")]
use crate::tags::CloudTagSettings;
use crate::tags::{RawCloudTagSettings, TagSettings};

mod every_problem;
mod raw;
pub(crate) use crate::request::mode::Mode;
pub use crate::settings_problem::SettingsError;
pub(crate) use crate::settings_problem::SettingsProblem;
pub(crate) use raw::RawSettings;
pub(crate) use raw::StrictSettings;

/// Settings ready for evaluation: each stage's section.
///
/// Parsing is strict and cheap; what costs (compiling the node-sync regexes,
/// building the opt-in set) is prepared the first time an evaluation asks
/// for it. policy-server evaluates every request on a fresh instance
/// (README, "Settings"; `rehydrate` in kubewarden-controller
/// `crates/policy-server/src/evaluation/evaluation_environment.rs`), so
/// anything prepared up front would be paid by every request, including the
/// many that never read it: a MachineSet needs no cloud-tag settings and
/// usually no regex, an XR never needs the node-sync regexes.
#[derive(Debug, Default)]
pub struct Settings {
    /// `mutate` or `validate`.
    mode: Mode,
    /// `capi.*`, the CAPI stage's.
    pub(crate) capi: CapiSettings,
    /// `cloudTags.*`, the tag stage's.
    pub(crate) tags: TagSettings,
}

impl Settings {
    /// Parses a settings document (JSON) and prepares every part of it,
    /// reporting every problem at once: what `validate_settings` answers
    /// when the policy is loaded, and what tools and tests start from.
    /// `null` or an empty document means defaults.
    pub fn from_json(raw: &[u8]) -> Result<Self, SettingsError> {
        let (settings, mut problems) = match Self::read(raw) {
            Ok(settings) => (settings, Vec::new()),
            // the checks below run on what the valid members give
            Err(Refused::Members(raw, problems)) => (Self::from(*raw), problems),
            Err(Refused::Document(error)) => return Err(error),
        };
        problems.extend(settings.capi.problems());
        problems.extend(
            settings
                .tags
                .prepared()
                .err()
                .into_iter()
                .flat_map(|e| e.problems),
        );
        if problems.is_empty() {
            Ok(settings)
        } else {
            Err(SettingsError { problems })
        }
    }

    /// Parses a settings document known to be text strictly (unknown
    /// fields and wrong types are refused, naming the field) and prepares
    /// nothing: each part is prepared when an evaluation first reads it.
    /// What `validate` uses, for settings `validate_settings` has already
    /// accepted: the settings of a `validate` payload, which
    /// [`crate::wire`] has checked for UTF-8 as a whole already.
    pub(crate) fn parse_text(raw: &str) -> Result<Self, SettingsError> {
        Self::read_text(raw).map_err(Refused::into_error)
    }

    /// `mode`: whether the policy makes the changes or reports them.
    pub(crate) fn mode(&self) -> Mode {
        self.mode
    }

    /// The same settings in `validate` mode, whatever `mode` they name:
    /// the audit judges every object as validate mode would.
    pub fn validating(self) -> Self {
        self.in_mode(Mode::Validate)
    }

    /// The same settings applied in `mode`.
    fn in_mode(self, mode: Mode) -> Self {
        Self {
            mode,
            tags: self.tags.in_mode(mode),
            ..self
        }
    }

    /// `cloudTags.*`, checked and prepared on first use (the oracle's and
    /// the tests' way in: the stage reads its own section).
    #[cfg(feature = "invariants")]
    pub(crate) fn cloud_tags(&self) -> Result<&CloudTagSettings, SettingsError> {
        self.tags.prepared()
    }

    fn read(raw: &[u8]) -> Result<Self, Refused> {
        // Checked to be UTF-8 in one pass and read as text, as every decode
        // in the module is (`wire::Payload::decode` says why).
        let text = std::str::from_utf8(raw).map_err(|e| {
            let error = format!("not UTF-8: invalid byte at offset {}", e.valid_up_to());
            Refused::Document(SettingsProblem::document_refused(error).into())
        })?;
        Self::read_text(text)
    }

    fn read_text(raw: &str) -> Result<Self, Refused> {
        let trimmed = raw.trim_ascii();
        if trimmed.is_empty() || trimmed == "null" {
            return Ok(Self::default());
        }
        if !trimmed.starts_with('{') {
            // serde would also accept a struct written as an array of field
            // values, which only produces confusing messages.
            let found = serde_json::from_str::<serde_json::Value>(trimmed)
                .map_or("invalid JSON", |v| fields::type_name(&v));
            let problem = SettingsProblem::new(
                FieldPath::of(&["settings"]),
                SettingsProblemKind::NotAnObject(found),
            );
            return Err(Refused::Document(problem.into()));
        }
        // Reading member by member costs on every request; only a refused
        // document needs it, to name every field at fault.
        let refused = match serde_json::from_str::<StrictSettings>(trimmed) {
            Ok(parsed) => return Ok(parsed.into()),
            Err(refused) => refused,
        };
        match every_problem::read(trimmed) {
            Some((raw, problems)) if !problems.is_empty() => {
                Err(Refused::Members(Box::new(raw), problems))
            }
            // Not JSON at all (serde names the line and column), or refused
            // for what no member shows alone (an object written as a list).
            _ => Err(Refused::Document(
                SettingsProblem::document_refused(refused.to_string()).into(),
            )),
        }
    }
}

/// Why [`Settings::read`] refused a document.
enum Refused {
    /// Not a JSON object: nothing to read further.
    Document(SettingsError),
    /// An object with members at fault: the settings the valid members
    /// give, and a problem for each of the others.
    Members(Box<RawSettings>, Vec<SettingsProblem>),
}

impl Refused {
    /// The problems, without the settings the valid members give.
    fn into_error(self) -> SettingsError {
        match self {
            Refused::Members(_, problems) => SettingsError { problems },
            Refused::Document(error) => error,
        }
    }
}

impl Settings {
    /// The settings the wire assumes while it reads the payload, before the
    /// settings, which come after the request, are read: the defaults,
    /// with the CAPI infrastructure kinds tagged, so that their tag field
    /// is decoded in the same pass when `cloudTags.capiInfrastructure`
    /// turns out on.
    pub(crate) fn before_read() -> Self {
        let tags = RawCloudTagSettings {
            capi_infrastructure: true,
            ..RawCloudTagSettings::default()
        };
        Self {
            mode: Mode::default(),
            capi: CapiSettings::default(),
            tags: TagSettings::new(tags, Mode::default()),
        }
    }
}

impl From<StrictSettings> for Settings {
    fn from(StrictSettings(raw): StrictSettings) -> Self {
        Self::from(raw)
    }
}

impl From<RawSettings> for Settings {
    fn from(raw: RawSettings) -> Self {
        Self {
            mode: raw.mode,
            capi: raw.capi.into(),
            tags: TagSettings::new(raw.cloud_tags, raw.mode),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tags::profiles::provider_limits::Origin;
    use rstest::rstest;

    // The tests' way in: here, where `read` is in reach.
    impl Settings {
        /// [`Settings::parse_text`] for a document given as bytes, checked
        /// for UTF-8 as `validate_settings` checks it.
        pub(crate) fn parse(raw: &[u8]) -> Result<Self, SettingsError> {
            Self::read(raw).map_err(Refused::into_error)
        }
    }

    fn problems(json: &str) -> Vec<String> {
        rendered(Settings::from_json(json.as_bytes()).unwrap_err())
    }

    fn rendered(error: SettingsError) -> Vec<String> {
        error.problems.iter().map(ToString::to_string).collect()
    }

    #[rstest]
    #[case::empty_object("{}")]
    #[case::null("null")]
    #[case::empty_document("")]
    #[case::explicit_defaults(
        r#"{"capi":{"additionalSyncMachineLabels":[],"additionalSyncMachineAnnotations":[]},
            "cloudTags":{"propagatingLabels":[],"providerPath":"spec.parameters.provider"}}"#
    )]
    fn settings_defaults_are_valid_and_propagate_nothing(#[case] json: &str) {
        let s = Settings::from_json(json.as_bytes()).unwrap();
        let tags = s.cloud_tags().unwrap();
        assert!(tags.propagating_labels.is_empty());
        assert!(s.capi.sync_machine_labels().unwrap().is_empty());
        assert_eq!(tags.provider_path, ["spec", "parameters", "provider"]);
        assert_eq!(tags.provider_path, ["spec", "parameters", "provider"]);
    }

    #[test]
    fn settings_full_document_is_prepared() {
        let s = Settings::from_json(
            br#"{"capi":{"additionalSyncMachineLabels":["^example\\.com/"],
                 "additionalSyncMachineAnnotations":["team"]},
                 "cloudTags":{"propagatingLabels":["platform/env","acme:checkout/owner","platform/env"],
                 "providerPath":"spec.provider.name"}}"#,
        )
        .unwrap();
        assert!(s.capi.sync_machine_labels().unwrap()[0].is_match("example.com/zone"));
        assert!(s.capi.sync_machine_annotations().unwrap()[0].is_match("my-team-name"));
        let tags = s.cloud_tags().unwrap();
        assert_eq!(
            tags.propagating_labels.iter().collect::<Vec<_>>(),
            ["acme:checkout/owner", "platform/env"]
        );
        assert_eq!(tags.provider_path, ["spec", "provider", "name"]);
    }

    /// A key written with an escape is unescaped, and the prepared set is
    /// sorted, each key once.
    #[test]
    fn settings_opted_in_keys_are_unescaped_sorted_and_once() {
        let text = br#"{"cloudTags":{"propagatingLabels":["team","platform\/env","team"]}}"#;
        let settings = Settings::parse(text).unwrap();
        let prepared = settings.cloud_tags().unwrap().propagating_labels.clone();
        assert_eq!(*prepared, ["platform/env", "team"]);
    }

    /// A document that is not JSON names serde's first complaint, with its
    /// line and column in the document.
    #[rstest]
    #[case::truncated(
        r#"{"mode": "mutate", "capi": "#,
        "settings: EOF while parsing a value at line 1 column 26"
    )]
    #[case::type_error_before_the_syntax_error(
        r#"{"mode": 5, oops}"#,
        "settings: invalid type: integer `5`, expected `mutate` or `validate` at line 1 column 10"
    )]
    fn settings_not_json_names_the_line_and_column(#[case] json: &str, #[case] problem: &str) {
        assert_eq!(problems(json), [problem]);
    }

    #[test]
    fn settings_unknown_field_names_the_path() {
        assert_eq!(
            problems(r#"{"cloudTags":{"propagatingLabel":["a"]}}"#),
            [
                "cloudTags.propagatingLabel: unknown field `propagatingLabel`, expected one of `propagatingLabels`, `providerPath`, `profiles`, `capiInfrastructure`, `prefix`, `tagKeys`, `managedResources`"
            ]
        );
    }

    #[test]
    fn settings_wrong_type_names_the_element() {
        assert_eq!(
            problems(r#"{"cloudTags":{"propagatingLabels":["a", 3]}}"#),
            ["cloudTags.propagatingLabels[1]: invalid type: integer `3`, expected a string"]
        );
        // A label key is named in brackets, as the checks after parsing name it.
        assert_eq!(
            problems(r#"{"cloudTags":{"propagatingLabels":["env"],"tagKeys":{"env":3}}}"#),
            ["cloudTags.tagKeys[\"env\"]: invalid type: integer `3`, expected a string"]
        );
    }

    #[test]
    fn settings_type_errors_unknown_fields_and_checks_are_reported_together() {
        // One round trip for every problem: a wrong type does not hide an
        // unknown field elsewhere, nor the bad regex and the seeded label the
        // checks after parsing find in the members that did parse.
        assert_eq!(
            problems(
                r#"{"mode":"mutate","mod":"validate",
                    "capi":{"additionalSyncMachineLabels":["(unclosed"],"inPlaceFields":"yes"},
                    "cloudTags":{"propagatingLabels":"platform/env","providerPath":"spec..provider",
                                 "profile":[]}}"#
            ),
            // members in key order, then the checks' problems
            [
                "capi.inPlaceFields: invalid type: string \"yes\", expected a boolean",
                "cloudTags.profile: unknown field `profile`, expected one of `propagatingLabels`, `providerPath`, `profiles`, `capiInfrastructure`, `prefix`, `tagKeys`, `managedResources`",
                "cloudTags.propagatingLabels: invalid type: string \"platform/env\", expected a sequence",
                "mod: unknown field `mod`, expected one of `mode`, `capi`, `cloudTags`",
                "capi.additionalSyncMachineLabels[0]: invalid regex \"(unclosed\": found open group without closing ')'",
                "cloudTags.providerPath: \"spec..provider\" is not a dotted field path; use e.g. \"spec.parameters.provider\" (the default) or omit the field",
            ]
        );
    }

    #[test]
    fn settings_section_that_is_not_an_object_is_named() {
        assert_eq!(
            problems(r#"{"capi":["x"],"cloudTags":{"propagatingLabels":["platform/origin"]}}"#),
            [
                "capi: expected an object, found an array",
                "cloudTags.propagatingLabels[0]: \"platform/origin\" is a seeded platform label and can never be opted into cloud-tag propagation; remove it from the list",
            ]
        );
    }

    #[test]
    fn settings_refused_at_evaluation_name_every_member_at_fault() {
        let err =
            Settings::parse(br#"{"mode":"audit","capi":{"inPlaceFields":"no"}}"#).unwrap_err();
        assert_eq!(
            rendered(err),
            [
                "capi.inPlaceFields: invalid type: string \"no\", expected a boolean",
                "mode: unknown variant `audit`, expected `mutate` or `validate`",
            ]
        );
    }

    #[test]
    fn settings_not_an_object_is_refused() {
        assert_eq!(
            problems(r#"["capi"]"#),
            ["settings: expected an object such as {\"cloudTags\": {…}}, found an array"]
        );
    }

    #[test]
    fn settings_collects_every_problem_in_field_order() {
        assert_eq!(
            problems(
                r#"{"capi":{"additionalSyncMachineLabels":["ok", "("],
                    "additionalSyncMachineAnnotations":["[z-a]"]},
                    "cloudTags":{"propagatingLabels":["platform/origin","", "platform/domain","platform/env"],
                    "providerPath":"spec..provider"}}"#
            ),
            [
                "capi.additionalSyncMachineLabels[1]: invalid regex \"(\": found open group without closing ')'",
                "capi.additionalSyncMachineAnnotations[0]: invalid regex \"[z-a]\": invalid range in character class",
                "cloudTags.propagatingLabels[0]: \"platform/origin\" is a seeded platform label and can never be opted into cloud-tag propagation; remove it from the list",
                "cloudTags.propagatingLabels[1]: empty label key; list exact qualified keys such as \"platform/env\"",
                "cloudTags.propagatingLabels[2]: \"platform/domain\" is a seeded platform label and can never be opted into cloud-tag propagation; remove it from the list",
                "cloudTags.providerPath: \"spec..provider\" is not a dotted field path; use e.g. \"spec.parameters.provider\" (the default) or omit the field",
            ]
        );
    }

    #[test]
    fn settings_problems_quote_what_they_name_as_json() {
        assert_eq!(
            problems(r#"{"cloudTags":{"providerPath":"spec..\"provider\""}}"#),
            [
                r#"cloudTags.providerPath: "spec..\"provider\"" is not a dotted field path; use e.g. "spec.parameters.provider" (the default) or omit the field"#
            ]
        );
        assert_eq!(
            problems(r#"{"capi":{"additionalSyncMachineLabels":["\"(\u0001"]}}"#),
            [
                r#"capi.additionalSyncMachineLabels[0]: invalid regex "\"(\u0001": found open group without closing ')'"#
            ]
        );
    }

    #[rstest]
    #[case::mesh_ip("platform/mesh-ip")]
    #[case::origin("platform/origin")]
    #[case::domain("platform/domain")]
    fn settings_seeded_label_is_refused(#[case] key: &str) {
        let p = problems(&format!(
            r#"{{"cloudTags":{{"propagatingLabels":["{key}"]}}}}"#
        ));
        assert_eq!(p.len(), 1);
        assert!(
            p[0].starts_with("cloudTags.propagatingLabels[0]: \""),
            "{p:?}"
        );
        assert!(p[0].contains("seeded platform label"), "{p:?}");
    }

    #[test]
    fn settings_mode_defaults_to_mutate_and_accepts_validate() {
        assert_eq!(Settings::from_json(b"{}").unwrap().mode, Mode::Mutate);
        let s = Settings::from_json(br#"{"mode":"validate"}"#).unwrap();
        assert_eq!(s.mode, Mode::Validate);
    }

    #[test]
    fn settings_capi_infrastructure_is_off_by_default_and_a_boolean() {
        assert!(
            !Settings::from_json(b"{}")
                .unwrap()
                .tags
                .capi_infrastructure()
        );
        let on = Settings::from_json(br#"{"cloudTags":{"capiInfrastructure":true}}"#).unwrap();
        assert!(on.tags.capi_infrastructure());
        assert_eq!(
            problems(r#"{"cloudTags":{"capiInfrastructure":"yes"}}"#),
            ["cloudTags.capiInfrastructure: invalid type: string \"yes\", expected a boolean"]
        );
    }

    #[test]
    fn settings_unknown_mode_lists_the_valid_ones() {
        assert_eq!(
            problems(r#"{"mode":"audit"}"#),
            ["mode: unknown variant `audit`, expected `mutate` or `validate`"]
        );
        for (value, found) in [("1", "integer `1`"), ("true", "boolean `true`")] {
            assert_eq!(
                problems(&format!(r#"{{"mode":{value}}}"#)),
                [format!(
                    "mode: invalid type: {found}, expected `mutate` or `validate`"
                )]
            );
        }
    }

    /// A wrongly typed object of the settings is described as the user
    /// writes it, never by the policy's own type names.
    #[test]
    fn settings_a_wrongly_typed_object_is_described_by_its_shape() {
        assert_eq!(
            problems(r#"{"cloudTags":{"managedResources":"aws"}}"#),
            [
                "cloudTags.managedResources: invalid type: string \"aws\", expected an object with `families` and `kinds`"
            ]
        );
        assert_eq!(
            problems(r#"{"cloudTags":{"managedResources":{"families":["aws"],"kinds":["VPC"]}}}"#),
            [
                "cloudTags.managedResources.kinds[0]: invalid type: string \"VPC\", expected a row such as {\"group\": \"ec2.aws.upbound.io\", \"kind\": \"VPC\", \"field\": \"spec.forProvider.tags\"}"
            ]
        );
    }

    #[test]
    fn settings_empty_provider_path_is_refused() {
        assert_eq!(
            problems(r#"{"cloudTags":{"providerPath":""}}"#),
            [
                "cloudTags.providerPath: \"\" is not a dotted field path; use e.g. \"spec.parameters.provider\" (the default) or omit the field"
            ]
        );
    }

    #[test]
    fn parse_prepares_nothing_until_asked_and_then_reports_only_that_part() {
        let s = Settings::parse(
            br#"{"capi":{"additionalSyncMachineLabels":["("]},
                 "cloudTags":{"propagatingLabels":["platform/origin"]}}"#,
        )
        .unwrap();
        assert!(!s.capi.labels_compiled());
        assert!(!s.tags.is_prepared());
        assert_eq!(
            rendered(s.capi.sync_machine_labels().unwrap_err()),
            [
                "capi.additionalSyncMachineLabels[0]: invalid regex \"(\": found open group without closing ')'"
            ]
        );
        assert!(!s.tags.is_prepared());
        assert!(s.capi.sync_machine_annotations().unwrap().is_empty());
        assert_eq!(s.cloud_tags().unwrap_err().problems.len(), 1);
    }

    #[test]
    fn parse_is_as_strict_as_from_json_about_the_document() {
        for json in [
            r#"{"capi":{"additionalSyncMachineLabel":[]}}"#,
            r#"["capi"]"#,
            r#"{"mode":"audit"}"#,
        ] {
            assert_eq!(
                Settings::parse(json.as_bytes()).unwrap_err(),
                Settings::from_json(json.as_bytes()).unwrap_err(),
                "{json}"
            );
        }
    }

    const AZURE: &str = r#"{"name":"azure","providers":["azure","AzureRM"],"keyMax":512,
        "valueMax":256,"unit":"runes","cap":50,
        "keyCharacters":{"sets":["printable"],"except":"<>%&\\?/"},
        "reservedPrefixes":[{"prefix":"microsoft","ignoreCase":true}]}"#;

    #[test]
    fn settings_profiles_are_prepared_and_tried_first() {
        let text = format!(
            r#"{{"cloudTags":{{"profiles":[{AZURE},
                {{"name":"aws","providers":["aws"],"keyMax":128,"valueMax":256,"unit":"runes",
                  "cap":47,"keyCharacters":{{"sets":["letters","digits"],"extra":" +-=._:/@"}}}}]}}}}"#
        );
        let s = Settings::from_json(text.as_bytes()).unwrap();
        let profiles = &s.cloud_tags().unwrap().profiles;
        let (azure, origin) = profiles.resolve(Some("azurerm"));
        assert_eq!(
            (&*azure.name, azure.key_max, origin),
            ("azure", 512, Origin::UserDefined { index: 0 })
        );
        assert!(!azure.key_characters.admits('/'));
        assert_eq!(azure.reserved_prefix_of("MICROSOFT.x"), Some("microsoft"));
        let (aws, origin) = profiles.resolve(Some("AWS"));
        assert_eq!((aws.cap, origin), (47, Origin::UserDefined { index: 1 }));
        assert_eq!(profiles.resolve(Some("hetzner")).1, Origin::BuiltIn);
    }

    #[test]
    fn settings_every_profile_problem_is_reported_at_once() {
        let doc = format!(
            r#"{{"cloudTags":{{"profiles":[{AZURE},
            {{"name":"Azure","providers":["AZURE",""],"keyMax":0,"valueMax":70000,"unit":"bytes",
              "cap":5000,"keyCharacters":{{"extra":"ab","except":"b"}},
              "reservedPrefixes":[{{"prefix":"","ignoreCase":false}}]}},
            {{"name":"hetzner","providers":["hcloud"],"keyMax":63,"valueMax":63,"unit":"runes",
              "cap":64,"keyCharacters":{{}}}},
            {{"name":"generic","providers":["x","X"],"keyMax":63,"valueMax":63,"unit":"runes",
              "cap":64,"keyCharacters":{{"sets":["digits"]}}}},
            {{"name":"gcp labels","providers":[],"keyMax":63,"valueMax":63,"unit":"runes",
              "cap":64,"keyCharacters":{{"sets":["digits"]}}}}]}}}}"#
        );
        assert_eq!(
            problems(&doc),
            [
                "cloudTags.profiles[1].name: \"Azure\" is already the name of cloudTags.profiles[0]; give each profile its own name",
                "cloudTags.profiles[1].providers[0]: \"AZURE\" is already listed in cloudTags.profiles[0].providers (ignoring case); a provider value selects one profile, remove one of them",
                "cloudTags.profiles[1].providers[1]: empty provider value; write the value the XR carries, e.g. \"azure\"",
                "cloudTags.profiles[1].keyMax: 0 is out of bounds; use a number from 1 to 4096",
                "cloudTags.profiles[1].valueMax: 70000 is out of bounds; use a number from 1 to 65536",
                "cloudTags.profiles[1].cap: 5000 is out of bounds; use a number from 1 to 1024",
                "cloudTags.profiles[1].keyCharacters: \"b\" is both in extra and in except; keep it in one of them",
                "cloudTags.profiles[1].reservedPrefixes[0].prefix: 0 characters; a reserved prefix has 1 to 253, e.g. \"azure\"",
                "cloudTags.profiles[2].name: \"hetzner\" is the name of the built-in profile for provider \"hetzner\", which still applies; list \"hetzner\" in providers to replace it, or choose another name",
                "cloudTags.profiles[2].keyCharacters: admits no character; name sets such as [\"letters\", \"digits\"] and/or list characters in extra",
                "cloudTags.profiles[3].name: \"generic\" is the fallback profile's name and skip records must tell the two apart; choose another name",
                "cloudTags.profiles[3].providers[1]: \"X\" is already listed in cloudTags.profiles[3].providers (ignoring case); a provider value selects one profile, remove one of them",
                "cloudTags.profiles[4].name: \"gcp labels\" is not a profile name; use 1 to 63 ASCII letters, digits, \"-\", \"_\" or \".\", e.g. \"azure\"",
                "cloudTags.profiles[4].providers: empty; list the provider values that select this profile, e.g. [\"azure\"]",
            ]
        );
    }

    #[rstest]
    #[case::unknown_field(
        r#"{"cloudTags":{"profiles":[{"name":"a","providers":["a"],"keyMax":9,"valueMax":9,"unit":"runes","cap":9,"keyCharacters":{"sets":["digits"]},"keymax":1}]}}"#,
        "cloudTags.profiles[0].keymax: unknown field `keymax`, expected one of `name`, `providers`, `keyMax`, `valueMax`, `unit`, `cap`, `keyCharacters`, `valueCharacters`, `reservedPrefixes`, `prefix`"
    )]
    #[case::unknown_set(
        r#"{"cloudTags":{"profiles":[{"name":"a","providers":["a"],"keyMax":9,"valueMax":9,"unit":"runes","cap":9,"keyCharacters":{"sets":["alnum"]}}]}}"#,
        "cloudTags.profiles[0].keyCharacters.sets[0]: unknown variant `alnum`, expected one of `letters`, `lowercase-letters`, `ascii-letters`, `ascii-lowercase-letters`, `digits`, `ascii-digits`, `non-control`, `printable`"
    )]
    #[case::unknown_unit(
        r#"{"cloudTags":{"profiles":[{"name":"a","providers":["a"],"keyMax":9,"valueMax":9,"unit":"chars","cap":9,"keyCharacters":{"sets":["digits"]}}]}}"#,
        "cloudTags.profiles[0].unit: unknown variant `chars`, expected `runes` or `bytes`"
    )]
    #[case::negative(
        r#"{"cloudTags":{"profiles":[{"name":"a","providers":["a"],"keyMax":-1,"valueMax":9,"unit":"runes","cap":9,"keyCharacters":{"sets":["digits"]}}]}}"#,
        "cloudTags.profiles[0].keyMax: invalid value: integer `-1`, expected u64"
    )]
    #[case::missing_field(
        r#"{"cloudTags":{"profiles":[{"name":"a","providers":["a"],"valueMax":9,"unit":"runes","cap":9,"keyCharacters":{"sets":["digits"]}}]}}"#,
        "cloudTags.profiles[0]: missing field `keyMax`"
    )]
    fn settings_profile_shape_errors_name_the_field(#[case] json: &str, #[case] expected: &str) {
        // one mistake each: every mistake of a profile is reported
        assert_eq!(problems(json), [expected]);
    }

    #[test]
    fn settings_shape_errors_do_not_hide_other_profiles_problems() {
        assert_eq!(
            problems(
                r#"{"cloudTags":{"propagatingLabels":["platform/origin"],"profiles":["azure",
                   {"name":"","providers":["a"],"keyMax":9,"valueMax":9,"unit":"runes","cap":9,
                    "keyCharacters":{"sets":["digits"]}}, {"name":"b"}]}}"#
            ),
            [
                "cloudTags.propagatingLabels[0]: \"platform/origin\" is a seeded platform label and can never be opted into cloud-tag propagation; remove it from the list",
                "cloudTags.profiles[0]: invalid type: string \"azure\", expected a profile object such as {\"name\": \"azure\", \"providers\": [\"azure\"], …}",
                "cloudTags.profiles[1].name: \"\" is not a profile name; use 1 to 63 ASCII letters, digits, \"-\", \"_\" or \".\", e.g. \"azure\"",
                "cloudTags.profiles[2]: missing field `providers`",
                "cloudTags.profiles[2]: missing field `keyMax`",
                "cloudTags.profiles[2]: missing field `valueMax`",
                "cloudTags.profiles[2]: missing field `unit`",
                "cloudTags.profiles[2]: missing field `cap`",
                "cloudTags.profiles[2]: missing field `keyCharacters`",
            ]
        );
    }

    #[test]
    fn settings_profile_refusing_the_prefix_is_accepted() {
        // The user's call (docs/settings.md, "User-defined tag profiles"): explained
        // and summarised at evaluation, not refused.
        let s = Settings::from_json(
            br#"{"cloudTags":{"profiles":[{"name":"gcp-labels","providers":["gcp"],"keyMax":63,
                 "valueMax":63,"unit":"bytes","cap":64,
                 "keyCharacters":{"sets":["lowercase-letters","digits"],"extra":"_-"}}]}}"#,
        )
        .unwrap();
        let cloud_tags = s.cloud_tags().unwrap();
        let (profile, _) = cloud_tags.profiles.resolve(Some("gcp"));
        let prefix = cloud_tags.tag_keys(profile).prefix;
        assert!(profile.blocks_every_tag(prefix).is_some());
    }

    #[test]
    fn a_regex_go_refuses_is_refused_with_go_s_reason() {
        let p = problems(
            r#"{"capi":{"additionalSyncMachineLabels":["ok", "a**"],
                "additionalSyncMachineAnnotations":["(a{2}){1000}"]}}"#,
        );
        assert_eq!(
            p,
            [
                "capi.additionalSyncMachineLabels[1]: invalid regex \"a**\": Go refuses a \
                 repetition operator after another (**); write one, or group the first: (x*)*; \
                 Cluster API compiles these patterns with Go's regexp",
                "capi.additionalSyncMachineAnnotations[0]: invalid regex \"(a{2}){1000}\": Go \
                 allows at most 1000 copies through nested repeat counts, not 2000; Cluster API \
                 compiles these patterns with Go's regexp",
            ]
        );
    }

    #[test]
    fn settings_pathologically_large_regex_is_refused() {
        // 200,000 copies of `\w`, in repeat counts Go accepts.
        let pattern = r"\w{1000}".repeat(200);
        let p = problems(&format!(
            r#"{{"capi":{{"additionalSyncMachineLabels":["{}"]}}}}"#,
            pattern.replace('\\', r"\\")
        ));
        assert_eq!(
            p,
            [format!(
                "capi.additionalSyncMachineLabels[0]: invalid regex \"{}\": compiled regex \
                 exceeded size limit (1048576 bytes); simplify it, e.g. fewer counted repetitions",
                pattern.replace('\\', r"\\")
            )]
        );
    }

    /// A member written twice is refused by the parse every request makes
    /// and by `validate_settings` alike, naming it: never accepted when
    /// loaded and then refused with no reason on every request.
    #[test]
    fn a_member_written_twice_is_refused_by_both_parses() {
        for document in [
            r#"{"mode":"mutate","mode":"validate"}"#,
            r#"{"cloudTags":{"prefix":"a:","prefix":"b:"}}"#,
        ] {
            let parsed = Settings::parse(document.as_bytes()).unwrap_err();
            let loaded = Settings::from_json(document.as_bytes()).unwrap_err();
            assert_eq!(parsed, loaded, "{document}");
            assert_eq!(parsed.problems.len(), 1, "{document}");
            assert!(parsed.to_string().contains("duplicate field"), "{parsed}");
        }
    }
}
