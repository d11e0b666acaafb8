//! Properties of the transformer over generated label sets: every label ends
//! as exactly one tag or one skip, the result does not depend on input order,
//! and every emitted tag satisfies its profile.

use metadata_propagation_policy::tags::profile::{
    AWS, GENERIC, HETZNER, OPENSTACK, TagProfile, Unit,
};
use metadata_propagation_policy::tags::transform::{TAG_PREFIX, transform};
use proptest::prelude::*;
use std::collections::{BTreeMap, BTreeSet};

const PROFILES: [&TagProfile; 4] = [&AWS, &HETZNER, &OPENSTACK, &GENERIC];

fn label_sets() -> impl Strategy<Value = Vec<(String, String)>> {
    // Keys mix allowed and disallowed characters, multi-byte letters, the
    // reserved aws: prefix and lengths around every ceiling.
    let key = prop_oneof![
        "[a-z]{1,8}/[a-zA-Z0-9._-]{1,20}",
        "(aws|AWS|acme):[a-z]{1,5}/[a-z]{1,10}",
        "[a-z]{1,3}/[a-zé日 @+,\t-]{1,10}",
        "[a-z]{1,3}/[a-zü]{40,140}",
    ];
    let value = prop_oneof!["[a-z0-9 ]{0,20}", "[é日a]{60,300}"];
    proptest::collection::vec((key, value), 0..90)
}

fn length(unit: Unit, text: &str) -> usize {
    match unit {
        Unit::Runes => text.chars().count(),
        Unit::Bytes => text.len(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn every_label_is_one_tag_or_one_skip(pairs in label_sets(), p in 0usize..4) {
        let labels: BTreeMap<&str, &str> = pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let out = transform(&labels, PROFILES[p]);
        prop_assert_eq!(out.tags.len() + out.skipped.len(), labels.len());
        let tagged: BTreeSet<String> = out.tags.keys().map(|k| k[TAG_PREFIX.len()..].to_owned()).collect();
        let skipped: BTreeSet<String> = out.skipped.iter().map(|s| s.qualified_key.to_owned()).collect();
        prop_assert!(tagged.is_disjoint(&skipped));
        let all: BTreeSet<String> = tagged.union(&skipped).cloned().collect();
        let input: BTreeSet<String> = labels.keys().map(|k| (*k).to_owned()).collect();
        prop_assert_eq!(all, input);
        for (tag, value) in &out.tags {
            prop_assert_eq!(Some(value), labels.get(&tag[TAG_PREFIX.len()..]));
        }
    }

    #[test]
    fn output_is_independent_of_input_order(pairs in label_sets(), p in 0usize..4, seed in any::<u64>()) {
        let forward: BTreeMap<&str, &str> = pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let mut shuffled: Vec<&(String, String)> = pairs.iter().collect();
        // Deterministic Fisher-Yates with a tiny LCG: proptest shrinks the seed.
        let mut state = seed;
        for i in (1..shuffled.len()).rev() {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            shuffled.swap(i, (state >> 33) as usize % (i + 1));
        }
        // Later duplicates win in both maps only if the order is the same, so
        // compare on de-duplicated input.
        let dedup: BTreeMap<&str, &str> = forward.clone();
        let reordered: BTreeMap<&str, &str> = shuffled
            .into_iter()
            .filter(|(k, v)| dedup.get(k.as_str()) == Some(&v.as_str()))
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        prop_assert_eq!(transform(&forward, PROFILES[p]), transform(&reordered, PROFILES[p]));
    }

    #[test]
    fn every_tag_satisfies_its_profile(pairs in label_sets(), p in 0usize..4) {
        let profile = PROFILES[p];
        let labels: BTreeMap<&str, &str> = pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let out = transform(&labels, profile);
        prop_assert!(out.tags.len() <= profile.cap);
        for (tag, value) in &out.tags {
            prop_assert!(tag.starts_with(TAG_PREFIX));
            prop_assert!(length(profile.unit, tag) <= profile.key_max, "{tag}");
            prop_assert!(length(profile.unit, value) <= profile.value_max);
            prop_assert!(tag.chars().all(|c| profile.key_characters.admits(c)), "{tag}");
            let qualified = tag[TAG_PREFIX.len()..].to_ascii_lowercase();
            prop_assert!(profile.reserved_prefixes.iter().all(|r| !qualified.starts_with(r)));
        }
        // The cap keeps a prefix of the valid keys: nothing capped sorts
        // below a kept key.
        if let (Some(highest_kept), Some(lowest_capped)) = (
            out.tags.keys().last(),
            out.skipped.iter().find(|s| s.reason.code() == "count-cap"),
        ) {
            prop_assert!(highest_kept.as_str() < lowest_capped.tag_key.as_str());
        }
    }
}
