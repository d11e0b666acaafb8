//! The label → cloud-tag transformer, profile by profile: every ceiling at
//! and one past its limit, rune vs byte counting, each skip reason and their
//! precedence, the count cap, provider matching.

use super::transform;
use metadata_propagation_core::tags::decision::transform::SkipReason;
use metadata_propagation_core::tags::keys::tag_naming::DEFAULT_PREFIX as TAG_PREFIX;
use metadata_propagation_core::tags::profiles::provider_limits::{
    AWS, GENERIC, HETZNER, OPENSTACK, TagProfile,
};
use rstest::rstest;
use std::collections::BTreeMap;

/// A qualified key whose prefixed tag key is exactly `len` characters of
/// `fill` long (the prefix "plexsphere:" is 11 ASCII characters).
fn key_with_tag_length(len: usize, fill: char) -> String {
    let mut key = String::from("t/");
    while TAG_PREFIX.chars().count() + key.chars().count() < len {
        key.push(fill);
    }
    key
}

/// The skip reason for one label, or `None` when it became a tag.
fn reason(profile: &TagProfile, key: &str, value: &str) -> Option<&'static str> {
    let labels = BTreeMap::from([(key, value)]);
    let out = transform(labels.clone(), profile);
    assert_eq!(out.tags.len() + out.skipped.len(), 1);
    out.skipped.first().map(|s| s.reason.code())
}

#[rstest]
#[case::aws(&AWS, 128)]
#[case::hetzner(&HETZNER, 63)]
#[case::generic(&GENERIC, 63)]
#[case::openstack(&OPENSTACK, 255)]
fn key_length_at_and_one_past_the_ceiling(#[case] profile: &TagProfile, #[case] max: usize) {
    assert_eq!(reason(profile, &key_with_tag_length(max, 'k'), "v"), None);
    assert_eq!(
        reason(profile, &key_with_tag_length(max + 1, 'k'), "v"),
        Some("key-too-long")
    );
}

#[rstest]
#[case::aws(&AWS, 256)]
#[case::hetzner(&HETZNER, 63)]
#[case::generic(&GENERIC, 255)]
#[case::openstack(&OPENSTACK, 255)]
fn value_length_at_and_one_past_the_ceiling(#[case] profile: &TagProfile, #[case] max: usize) {
    assert_eq!(reason(profile, "team/x", &"v".repeat(max)), None);
    assert_eq!(
        reason(profile, "team/x", &"v".repeat(max + 1)),
        Some("value-too-long")
    );
}

#[test]
fn runes_are_counted_on_aws_bytes_on_openstack() {
    // 256 runes of a 2-byte character: 512 bytes.
    let value = "é".repeat(256);
    assert_eq!(reason(&AWS, "team/x", &value), None);
    assert_eq!(
        reason(&AWS, "team/x", &"é".repeat(257)),
        Some("value-too-long")
    );
    // OpenStack: 127 × 2 bytes = 254 bytes fits, 128 × 2 = 256 does not.
    assert_eq!(reason(&OPENSTACK, "team/x", &"é".repeat(127)), None);
    assert_eq!(
        reason(&OPENSTACK, "team/x", &"é".repeat(128)),
        Some("value-too-long")
    );
    // Three-byte characters: 85 × 3 = 255 bytes fits exactly.
    assert_eq!(reason(&OPENSTACK, "team/x", &"日".repeat(85)), None);
    assert_eq!(
        reason(&OPENSTACK, "team/x", &"日".repeat(86)),
        Some("value-too-long")
    );
}

#[test]
fn multibyte_keys_count_runes_on_hetzner_and_bytes_on_openstack() {
    // 63 runes, 115 bytes.
    let key = key_with_tag_length(63, 'ü');
    assert_eq!(reason(&HETZNER, &key, "v"), None);
    assert_eq!(reason(&OPENSTACK, &key, "v"), None);
    let long = key_with_tag_length(140, 'ü');
    assert_eq!(reason(&AWS, &long, "v"), Some("key-too-long"));
    assert_eq!(reason(&OPENSTACK, &long, "v"), Some("key-too-long"));
}

#[rstest]
#[case::aws_space(&AWS, "team/cost center", None)]
#[case::aws_at(&AWS, "team/owner@acme", None)]
#[case::aws_comma(&AWS, "team/a,b", Some("key-character-class"))]
#[case::hetzner_space(&HETZNER, "team/cost center", Some("key-character-class"))]
#[case::hetzner_at(&HETZNER, "team/owner@acme", Some("key-character-class"))]
#[case::hetzner_colon(&HETZNER, "acme:checkout/owner", None)]
#[case::generic_plus(&GENERIC, "team/a+b", Some("key-character-class"))]
#[case::generic_unicode_letter(&GENERIC, "équipe/propriétaire", None)]
#[case::openstack_comma(&OPENSTACK, "team/a,b;c", None)]
#[case::openstack_control(&OPENSTACK, "team/a\u{1}b", Some("key-character-class"))]
fn key_character_classes(
    #[case] profile: &TagProfile,
    #[case] key: &str,
    #[case] expected: Option<&str>,
) {
    assert_eq!(reason(profile, key, "v"), expected);
}

#[rstest]
#[case::aws_lower("aws:cost-center", Some("reserved-prefix"))]
#[case::aws_upper("AWS:cost-center", Some("reserved-prefix"))]
#[case::inside_key("team/aws:cost", None)]
fn aws_reserved_prefix(#[case] key: &str, #[case] expected: Option<&str>) {
    assert_eq!(reason(&AWS, key, "v"), expected);
    assert_eq!(reason(&HETZNER, key, "v"), None, "only AWS reserves aws:");
}

#[test]
fn reasons_are_checked_in_contract_order() {
    // reserved-prefix beats key-too-long beats value-too-long beats characters.
    let long_reserved = format!("aws:{}", "x".repeat(200));
    assert_eq!(
        reason(&AWS, &long_reserved, &"v".repeat(300)),
        Some("reserved-prefix")
    );
    let long_bad_key = format!("{},", key_with_tag_length(130, 'k'));
    assert_eq!(
        reason(&AWS, &long_bad_key, &"v".repeat(300)),
        Some("key-too-long")
    );
    assert_eq!(
        reason(&AWS, "team/a,b", &"v".repeat(300)),
        Some("value-too-long")
    );
    assert_eq!(reason(&AWS, "team/a,b", "v"), Some("key-character-class"));
}

#[test]
fn skip_reasons_carry_measurements() {
    let labels = BTreeMap::from([("team/x", "日本語")]);
    let tight = TagProfile {
        value_max: 8,
        ..OPENSTACK.clone()
    };
    let out = transform(labels.clone(), &tight);
    assert_eq!(
        out.skipped[0].reason,
        SkipReason::ValueTooLong {
            length: 9,
            limit: 8,
            unit: OPENSTACK.unit
        }
    );
    assert_eq!(
        out.skipped[0].reason.to_string(),
        "the value is 9 bytes, the limit is 8"
    );
}

fn many_labels(n: usize) -> Vec<(String, String)> {
    (0..n)
        .map(|i| (format!("team/label-{i:03}"), format!("value-{i}")))
        .collect()
}

#[test]
fn count_cap_keeps_the_lowest_keys_in_byte_order() {
    let owned = many_labels(55);
    let labels: BTreeMap<&str, &str> = owned
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let out = transform(labels.clone(), &AWS);
    assert_eq!(out.tags.len(), 50);
    assert_eq!(
        out.tags.first().map(|(key, _)| key.as_str()),
        Some("plexsphere:team/label-000")
    );
    assert_eq!(
        out.tags.last().map(|(key, _)| key.as_str()),
        Some("plexsphere:team/label-049")
    );
    let capped: Vec<&str> = out.skipped.iter().map(|s| s.qualified_key).collect();
    assert_eq!(
        capped,
        [
            "team/label-050",
            "team/label-051",
            "team/label-052",
            "team/label-053",
            "team/label-054"
        ]
    );
    assert!(
        out.skipped
            .iter()
            .all(|s| s.reason == SkipReason::CountCap { cap: 50, taken: 0 })
    );
}

#[test]
fn count_cap_counts_only_labels_that_passed_validation() {
    // 32 valid generic labels plus invalid ones sorting first: the invalid
    // ones do not use up the cap.
    let mut owned = many_labels(32);
    owned.push(("a/bad key".into(), "v".into()));
    owned.push(("a/also+bad".into(), "v".into()));
    let labels: BTreeMap<&str, &str> = owned
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let out = transform(labels.clone(), &GENERIC);
    assert_eq!(out.tags.len(), 32);
    let reasons: Vec<(&str, &str)> = out
        .skipped
        .iter()
        .map(|s| (s.qualified_key, s.reason.code()))
        .collect();
    assert_eq!(
        reasons,
        [
            ("a/also+bad", "key-character-class"),
            ("a/bad key", "key-character-class")
        ]
    );
}

#[test]
fn count_cap_is_independent_of_insertion_order() {
    let owned = many_labels(70);
    let forward: BTreeMap<&str, &str> = owned
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    // Insert in a scrambled order (stride 17 is coprime with 70).
    let mut scrambled = BTreeMap::new();
    for i in 0..owned.len() {
        let (k, v) = &owned[(i * 17) % owned.len()];
        scrambled.insert(k.as_str(), v.as_str());
    }
    assert_eq!(
        transform(forward.clone(), &HETZNER),
        transform(scrambled.clone(), &HETZNER)
    );
}

#[test]
fn byte_order_puts_uppercase_before_lowercase() {
    // Go's string order is byte order: "Z" (0x5A) < "a" (0x61).
    let mut owned: Vec<(String, String)> =
        (0..32).map(|i| (format!("b/{i:02}"), "v".into())).collect();
    owned.push(("Z/upper".into(), "v".into()));
    owned.push(("c/last".into(), "v".into()));
    let labels: BTreeMap<&str, &str> = owned
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let out = transform(labels.clone(), &GENERIC);
    assert!(out.tags.iter().any(|(key, _)| key == "plexsphere:Z/upper"));
    let capped: Vec<&str> = out.skipped.iter().map(|s| s.qualified_key).collect();
    assert_eq!(capped, ["b/31", "c/last"]);
}

#[test]
fn every_skip_names_key_tag_key_and_profile() {
    let labels = BTreeMap::from([("acme:checkout/owner", "team payments"), ("aws:x", "1")]);
    let out = transform(labels.clone(), &AWS);
    assert_eq!(
        out.tags,
        [(
            "plexsphere:acme:checkout/owner".to_owned(),
            "team payments".to_owned()
        )]
    );
    assert_eq!(out.skipped.len(), 1);
    let skip = &out.skipped[0];
    assert_eq!(
        (skip.qualified_key, skip.tag_key.as_str(), skip.provider),
        ("aws:x", "plexsphere:aws:x", "aws")
    );
}

#[test]
fn empty_label_set_gives_no_tags_and_no_skips() {
    let out = transform(BTreeMap::new(), &AWS);
    assert!(out.tags.is_empty() && out.skipped.is_empty());
}

/// Chosen bodies can sort unlike their labels (`a/x` becomes `z`, `b/y`
/// becomes `c`): the tags still come sorted by tag key, each once.
#[test]
fn tags_come_sorted_by_tag_key_when_bodies_reorder_them() {
    use metadata_propagation_core::invariants::transform_with;
    use metadata_propagation_core::tags::keys::tag_naming::TagKeys;
    let bodies = BTreeMap::from([
        ("a/x".to_owned(), "z".to_owned()),
        ("b/y".to_owned(), "c".to_owned()),
    ]);
    let keys = TagKeys::new(&AWS, None, &bodies);
    let out = transform_with([("a/x", "1"), ("b/y", "2"), ("m/n", "3")], &AWS, &keys, 0);
    let tags: Vec<(&str, &str)> = (out.tags.iter())
        .map(|(key, value)| (key.as_str(), value.as_str()))
        .collect();
    assert_eq!(
        tags,
        [
            ("plexsphere:c", "2"),
            ("plexsphere:m/n", "3"),
            ("plexsphere:z", "1")
        ]
    );
}
