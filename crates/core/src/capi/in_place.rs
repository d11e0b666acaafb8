//! The in-place fields: one parent field made the child's, by meaning.
//!
//! CAPI applies these fields with server-side apply (reference: CAPI
//! `internal/util/ssa`): a field the parent sets is asserted on the child,
//! a field it does not set is left to whoever set it. Here that becomes
//! one [`FieldDecision`] per field, or per entry of a keyed list, decided
//! once and then applied ([`FieldEdit`]), reported (validate mode) or
//! explained from the same record.

use super::rules::{Endpoint, FieldFlow, Unit};
use crate::json::fields::{self, FieldError, FieldPath, Path, Problem};
use crate::json::go_duration::{self, Nanos};
use crate::json::keyed_list::{self, EntryKey};
use crate::request::plan::FieldEdit;
use serde_json::Value;

/// What the policy decided for one child field (or keyed-list entry).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FieldDecision<'a> {
    /// The field's name (`nodeDrainTimeout`).
    pub(crate) field: &'static str,
    /// Where the parent holds (or would hold) the value; named for people
    /// only when a report or an explanation needs it.
    pub(crate) from: &'static Endpoint,
    /// The child's path.
    pub(crate) path: &'static [&'static str],
    /// For a keyed list, the entry.
    pub(crate) entry: Option<EntryKey>,
    /// The parent's value written as the child holds it; `None` when the
    /// parent does not set the field (the child's value stays);
    /// `Value::Null` when the child holds the parent's value as the field's
    /// absence (a v1beta1 MachineSet's `minReadySeconds` of 0).
    pub(crate) expected: Option<Value>,
    /// The child's value as submitted.
    pub(crate) found: Option<&'a Value>,
    /// True when the child differs from `expected` by meaning.
    pub(crate) differs: bool,
}

impl FieldDecision<'_> {
    /// The change this decision asks for, if any; `source` names where
    /// the value comes from.
    pub(crate) fn edit(&self, source: impl FnOnce(&Endpoint) -> String) -> Option<FieldEdit> {
        let value = self.expected.clone().filter(|_| self.differs)?;
        let source = match value {
            Value::Null => format!(
                "the parent's 0, held as no field, from {}",
                source(self.from)
            ),
            _ => source(self.from),
        };
        Some(FieldEdit {
            path: Path::Static(self.path),
            entry: self.entry.clone(),
            value,
            was: self.found.cloned(),
            source,
        })
    }

    /// `added`, `corrected`, `removed`, `unchanged` or `not set by the
    /// parent`.
    pub(crate) fn change(&self) -> &'static str {
        match (&self.expected, self.differs, &self.found) {
            (None, _, _) => "not set by the parent",
            (Some(_), false, _) => "unchanged",
            (Some(Value::Null), true, _) => "removed",
            (Some(_), true, None) => "added",
            (Some(_), true, Some(_)) => "corrected",
        }
    }

    /// The warning a removal gives (nothing is removed silently): only a
    /// parent value the child holds as the field's absence removes one.
    pub(crate) fn removal_warning(&self) -> Option<String> {
        let was = self.found.filter(|_| self.differs)?;
        (self.expected == Some(Value::Null)).then(|| {
            format!(
                "{} removed (was {was}): the parent's {} is 0, which this apiVersion holds as \
                 the field's absence",
                self.target(),
                self.from.path.join(".")
            )
        })
    }

    /// The child path with the entry key, as reports name it.
    pub(crate) fn target(&self) -> String {
        crate::request::plan::field_target(&Path::Static(self.path), self.entry.as_ref())
    }
}

/// Which object a malformed field belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum MalformedIn {
    /// The parent's field cannot be read as its unit.
    Parent(FieldError),
    /// The child's field cannot be compared.
    Child(FieldError),
}

/// A parent value, read in its unit.
enum Desired<'a> {
    Duration { nanos: Nanos, whole_seconds: bool },
    Integer(i64),
    Text(&'a str),
    Whole(&'a Value),
    Entries(&'a [Value]),
}

/// Decides one field flow for a child at `child_version` of a parent at
/// `parent_version`, adding its decisions to `out` (none when either
/// version lacks the field; one per entry for a keyed list). `out` is the
/// caller's, reused across flows: most requests decide a dozen fields.
pub(crate) fn decide<'a>(
    flow: &'static FieldFlow,
    parent: &Value,
    parent_version: &str,
    child: &'a Value,
    child_version: &str,
    out: &mut Vec<FieldDecision<'a>>,
) -> Result<(), MalformedIn> {
    let (Some(from), Some(to)) = (flow.from.at(parent_version), flow.to.at(child_version)) else {
        return Ok(());
    };
    let found = fields::get(child, to.path).map_err(MalformedIn::Child)?;
    let decision = |expected: Option<Value>, differs: bool| FieldDecision {
        field: flow.field,
        from,
        path: to.path,
        entry: None,
        expected,
        found,
        differs,
    };
    let Some(desired) = desired(from, parent).map_err(MalformedIn::Parent)? else {
        out.push(decision(None, false));
        return Ok(());
    };
    let child_error =
        |problem: Problem| MalformedIn::Child(FieldError::new(FieldPath::of(to.path), problem));
    match (desired, to.unit) {
        (
            Desired::Duration {
                nanos,
                whole_seconds,
            },
            Unit::Duration | Unit::Seconds,
        ) => {
            let expected = match to.unit {
                Unit::Duration => Value::String(go_duration::format(nanos)),
                _ => Value::from(go_duration::to_seconds(nanos)),
            };
            let differs = match found {
                None => true,
                Some(held) => {
                    let (held, held_whole) = held_duration(held, to.unit).map_err(child_error)?;
                    // Whole seconds are what v1beta2 stores: compare there
                    // unless both sides are v1beta1 durations.
                    if whole_seconds || held_whole {
                        go_duration::to_seconds(held) != go_duration::to_seconds(nanos)
                    } else {
                        held != nanos
                    }
                }
            };
            out.push(decision(Some(expected), differs));
        }
        // A v1beta1 MachineSet holds 0 as the field's absence (`omitempty`),
        // so 0 is never written there. CAPI v1.10 and older (a v1beta1
        // parent) omit a desired 0 from their apply: the child's value
        // stays. v1.11 and later (a v1beta2 parent) store v1beta2 and apply
        // the parent's 0, which this child then shows as no field: another
        // value goes.
        (Desired::Integer(0), Unit::IntegerOmitZero) if parent_version == "v1beta1" => {
            out.push(decision(None, false));
        }
        (Desired::Integer(value), Unit::Integer | Unit::IntegerOmitZero) => {
            let omits_zero = to.unit == Unit::IntegerOmitZero;
            let held = match found {
                None if omits_zero => Some(0),
                None => None,
                Some(held) => Some(
                    held.as_i64()
                        .ok_or_else(|| child_error(Problem::expected("an integer", held)))?,
                ),
            };
            let expected = match (omits_zero, value) {
                (true, 0) => Value::Null,
                _ => Value::from(value),
            };
            out.push(decision(Some(expected), held != Some(value)));
        }
        (Desired::Text(text), Unit::Enum) => {
            let differs = match found {
                None => true,
                Some(held) => {
                    held.as_str()
                        .ok_or_else(|| child_error(Problem::expected("a string", held)))?
                        != text
                }
            };
            out.push(decision(Some(Value::from(text)), differs));
        }
        (Desired::Whole(value), Unit::Object) => {
            out.push(decision(Some(value.clone()), found != Some(value)));
        }
        (Desired::Entries(entries), Unit::KeyedList(keys)) => {
            let held: &[Value] = match found {
                None => &[],
                // Entries are matched by their keys and written back: one
                // that is not an object could be neither (the CRDs declare
                // objects), so it is reported, as on the parent's side.
                Some(Value::Array(held)) => {
                    objects_only(to.path, held).map_err(MalformedIn::Child)?;
                    held
                }
                Some(other) => return Err(child_error(Problem::expected("a list", other))),
            };
            // Each parent entry finds the child's entry with its key in an
            // index of the child's list: a scan per entry would cost
            // parent × child comparisons (keyed_list).
            let index = keyed_list::Index::of(keys, held);
            // A list map has unique keys; should a parent hold a duplicate,
            // the first entry wins, as in CAPI's KCP gates.
            for entry in keyed_list::first_of_each_key(keys, entries) {
                let key = EntryKey::of(keys, entry);
                let current = index.position_of(entry).map(|at| &held[at]);
                let asserted = assert_entry(entry, current);
                let differs = current != Some(&asserted);
                out.push(FieldDecision {
                    entry: Some(key),
                    found: current,
                    ..decision(Some(asserted), differs)
                });
            }
        }
        // The table pairs only convertible units (a unit test checks it).
        _ => {}
    }
    Ok(())
}

/// A keyed-list entry as the child must hold it: the child's entry with
/// each field the parent's entry sets (server-side apply owns list-map
/// entries field by field, so a field the parent leaves out, such as a
/// gate's `polarity` or a taint's `value`, stays as the child has it).
fn assert_entry(parent: &Value, child: Option<&Value>) -> Value {
    match (parent, child) {
        (Value::Object(fields), Some(Value::Object(held))) => {
            let mut entry = held.clone();
            for (field, value) in fields {
                entry.insert(field.clone(), value.clone());
            }
            Value::Object(entry)
        }
        _ => parent.clone(),
    }
}

/// Every entry of the keyed list at `path` is an object; the first that is
/// not is named by its index.
fn objects_only(path: &[&str], entries: &[Value]) -> Result<(), FieldError> {
    match entries.iter().enumerate().find(|(_, e)| !e.is_object()) {
        Some((i, entry)) => Err(FieldError::expected(
            FieldPath::of(&[&format!("{}[{i}]", path.join("."))]),
            "an object",
            entry,
        )),
        None => Ok(()),
    }
}

/// The parent's value at `from`, or `None` when it does not set the field.
fn desired<'a>(from: &Endpoint, parent: &'a Value) -> Result<Option<Desired<'a>>, FieldError> {
    let Some(value) = fields::get(parent, from.path)? else {
        return Ok(None);
    };
    let wrong = |what: &'static str| FieldError::expected(FieldPath::of(from.path), what, value);
    Ok(Some(match from.unit {
        Unit::Duration => {
            let text = value
                .as_str()
                .ok_or_else(|| wrong("a duration string such as \"5m0s\""))?;
            let nanos = go_duration::parse(text)
                .map_err(|invalid| FieldError::new(FieldPath::of(from.path), invalid))?;
            Desired::Duration {
                nanos,
                whole_seconds: false,
            }
        }
        // The CRDs declare these int32: a value outside that range is not
        // one a cluster stores, and written to a child it would not be.
        Unit::Seconds => Desired::Duration {
            nanos: go_duration::from_seconds(
                int32(value).ok_or_else(|| wrong("an int32 number of seconds"))?,
            ),
            whole_seconds: true,
        },
        Unit::Integer | Unit::IntegerOmitZero => {
            Desired::Integer(int32(value).ok_or_else(|| wrong("an int32"))?)
        }
        Unit::Enum => match value.as_str().ok_or_else(|| wrong("a string"))? {
            "" => return Ok(None),
            text => Desired::Text(text),
        },
        // `{}` sets nothing (the CRDs allow it: no field is required), so
        // like `""` for an enum it leaves the child's value alone rather
        // than wiping, say, the child's naming template.
        Unit::Object => match value.as_object() {
            None => return Err(wrong("an object")),
            Some(fields) if fields.is_empty() => return Ok(None),
            Some(_) => Desired::Whole(value),
        },
        Unit::KeyedList(_) => {
            let entries = value.as_array().ok_or_else(|| wrong("a list"))?;
            objects_only(from.path, entries)?;
            Desired::Entries(entries)
        }
    }))
}

/// The value as an `int32`, the type the CRDs declare for counts and seconds.
fn int32(value: &Value) -> Option<i64> {
    value.as_i64().filter(|n| i32::try_from(*n).is_ok())
}

/// A child's duration field: its nanoseconds, and whether it is whole
/// seconds (v1beta2).
fn held_duration(held: &Value, unit: Unit) -> Result<(Nanos, bool), Problem> {
    match unit {
        Unit::Duration => {
            let text = held
                .as_str()
                .ok_or_else(|| Problem::expected("a duration string such as \"5m0s\"", held))?;
            Ok((go_duration::parse(text)?, false))
        }
        _ => held
            .as_i64()
            .map(|seconds| (go_duration::from_seconds(seconds), true))
            .ok_or_else(|| Problem::expected("an integer number of seconds", held)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capi::rules::machine_fields::MACHINE_SET_FIELDS;
    use crate::capi::rules::{CAPI_RULES, Flow};
    use serde_json::json;

    fn source(from: &Endpoint) -> String {
        from.path.join(".")
    }

    fn flow(name: &str) -> &'static FieldFlow {
        MACHINE_SET_FIELDS
            .iter()
            .find_map(|f| match f {
                Flow::Field(f) if f.field == name => Some(f),
                _ => None,
            })
            .unwrap()
    }

    /// The decisions on the child `ms`, which they borrow.
    fn run<'a>(
        name: &str,
        md: Value,
        md_version: &str,
        ms: &'a Value,
        ms_version: &str,
    ) -> Vec<FieldDecision<'a>> {
        let mut out = Vec::new();
        decide(flow(name), &md, md_version, ms, ms_version, &mut out).unwrap();
        out
    }

    /// Whether a value in `from` can be written as `to`: the table's
    /// pairs, which `decide` converts between.
    fn converts(from: Unit, to: Unit) -> bool {
        use Unit::*;
        match (from, to) {
            (Duration | Seconds, Duration | Seconds) => true,
            (Integer | IntegerOmitZero, Integer | IntegerOmitZero) => true,
            (a, b) => a == b,
        }
    }

    #[test]
    fn every_flow_pairs_convertible_units() {
        for rule in CAPI_RULES {
            for flow in rule.flows() {
                if let Flow::Field(field) = flow {
                    for from in field.from.endpoints() {
                        for to in field.to.endpoints() {
                            assert!(
                                converts(from.unit, to.unit),
                                "{} {}: {:?} -> {:?}",
                                rule.family,
                                field.field,
                                from.unit,
                                to.unit
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn durations_compare_by_value_across_versions() {
        let md =
            json!({"spec": {"template": {"spec": {"deletion": {"nodeDrainTimeoutSeconds": 300}}}}});
        let child = json!({"spec": {"template": {"spec": {"nodeDrainTimeout": "5m"}}}});
        let equal = run("nodeDrainTimeout", md.clone(), "v1beta2", &child, "v1beta1");
        assert!(!equal[0].differs);
        assert_eq!(equal[0].edit(source), None);
        let child = json!({"spec": {"template": {"spec": {"nodeDrainTimeout": "10s"}}}});
        let drifted = run("nodeDrainTimeout", md, "v1beta2", &child, "v1beta1");
        assert_eq!(drifted[0].edit(source).unwrap().value, json!("5m0s"));
        assert_eq!(drifted[0].change(), "corrected");
        let v1 = json!({"spec": {"template": {"spec": {"nodeDrainTimeout": "1m30s"}}}});
        let empty = json!({});
        let to_seconds = run("nodeDrainTimeout", v1, "v1beta1", &empty, "v1beta2");
        assert_eq!(to_seconds[0].edit(source).unwrap().value, json!(90));
        assert_eq!(to_seconds[0].change(), "added");
    }

    #[test]
    fn an_unset_parent_field_leaves_the_child_alone() {
        let child =
            json!({"spec": {"template": {"spec": {"deletion": {"nodeDrainTimeoutSeconds": 7}}}}});
        let decisions = run(
            "nodeDrainTimeout",
            json!({"spec": {}}),
            "v1beta2",
            &child,
            "v1beta2",
        );
        assert_eq!(decisions[0].expected, None);
        assert_eq!(decisions[0].change(), "not set by the parent");
        assert_eq!(decisions[0].edit(source), None);
        let child = json!({"spec": {"deletion": {"order": "Oldest"}}});
        let order = run(
            "deletionOrder",
            json!({"spec": {"deletion": {"order": ""}}}),
            "v1beta2",
            &child,
            "v1beta2",
        );
        assert_eq!(order[0].edit(source), None);
        let child = json!({"spec": {"machineNamingStrategy": {"template": "{{ .machineSet.name }}-{{ .random }}"}}});
        let naming = run(
            "machineNaming",
            json!({"spec": {"machineNamingStrategy": {}}}),
            "v1beta1",
            &child,
            "v1beta1",
        );
        assert_eq!(naming[0].change(), "not set by the parent");
        assert_eq!(naming[0].edit(source), None);
    }

    #[test]
    fn a_v1beta1_machineset_holds_min_ready_seconds_zero_as_absent() {
        let child = json!({"spec": {}});
        let zero = run(
            "minReadySeconds",
            json!({"spec": {"minReadySeconds": 0}}),
            "v1beta1",
            &child,
            "v1beta1",
        );
        assert_eq!(zero[0].edit(source), None);
        let v2 = run(
            "minReadySeconds",
            json!({"spec": {"minReadySeconds": 0}}),
            "v1beta1",
            &child,
            "v1beta2",
        );
        assert_eq!(v2[0].edit(source).unwrap().value, json!(0));
        // A v1beta1 parent's 0 (CAPI v1.10 omits it from its apply): the
        // child's value stays.
        let held = json!({"spec": {"minReadySeconds": 10}});
        let v1_parent = json!({"spec": {"minReadySeconds": 0}});
        let kept = run("minReadySeconds", v1_parent, "v1beta1", &held, "v1beta1");
        assert_eq!(
            (kept[0].edit(source), kept[0].change()),
            (None, "not set by the parent")
        );
        // A v1beta2 parent's 0 (v1.11 and later apply it): asserted as the
        // field's absence, with a warning; an absent or explicit 0 is the
        // same value; an unset parent field leaves the child alone.
        let v2_parent = |value: Value| json!({"spec": {"template": {"spec": value}}});
        let zero = v2_parent(json!({"minReadySeconds": 0}));
        let removed = run("minReadySeconds", zero.clone(), "v1beta2", &held, "v1beta1");
        assert_eq!(removed[0].change(), "removed");
        let edit = removed[0].edit(source).unwrap();
        assert_eq!((edit.value, edit.was), (Value::Null, Some(json!(10))));
        assert_eq!(
            removed[0].removal_warning().unwrap(),
            "spec.minReadySeconds removed (was 10): the parent's \
             spec.template.spec.minReadySeconds is 0, which this apiVersion holds as the \
             field's absence"
        );
        for child in [json!({"spec": {"minReadySeconds": 0}}), json!({"spec": {}})] {
            let same = run(
                "minReadySeconds",
                zero.clone(),
                "v1beta2",
                &child,
                "v1beta1",
            );
            assert_eq!(
                (same[0].edit(source), same[0].change()),
                (None, "unchanged")
            );
            assert_eq!(same[0].removal_warning(), None);
        }
        let unset = run(
            "minReadySeconds",
            v2_parent(json!({})),
            "v1beta2",
            &held,
            "v1beta1",
        );
        assert_eq!(unset[0].edit(source), None);
    }

    #[test]
    fn keyed_lists_assert_each_parent_entry_and_keep_the_rest() {
        let md = json!({"spec": {"template": {"spec": {"readinessGates": [
            {"conditionType": "A"}, {"conditionType": "B", "polarity": "Negative"}, {"conditionType": "A", "polarity": "Negative"}]}}}});
        let ms = json!({"spec": {"template": {"spec": {"readinessGates": [
            {"conditionType": "Mine"}, {"conditionType": "B"}, {"conditionType": "A"}]}}}});
        let decisions = run("readinessGates", md, "v1beta2", &ms, "v1beta2");
        let edits: Vec<_> = decisions.iter().filter_map(|d| d.edit(source)).collect();
        assert_eq!(decisions.len(), 2, "duplicate parent key: the first wins");
        assert_eq!(edits.len(), 1);
        assert_eq!(
            edits[0].target(),
            "spec.template.spec.readinessGates[conditionType=\"B\"]"
        );
        assert_eq!(edits[0].was, Some(json!({"conditionType": "B"})));
    }

    #[test]
    fn an_entry_field_the_parent_leaves_out_stays_as_the_child_has_it() {
        let md = json!({"spec": {"template": {"spec": {"taints": [
            {"key": "dedicated", "effect": "NoSchedule", "propagation": "Always"}],
            "readinessGates": [{"conditionType": "X"}]}}}});
        let ms = json!({"spec": {"template": {"spec": {"taints": [
            {"key": "dedicated", "effect": "NoSchedule", "propagation": "OnInitialization", "value": "gpu"}],
            "readinessGates": [{"conditionType": "X", "polarity": "Positive"}]}}}});
        let gates = run("readinessGates", md.clone(), "v1beta2", &ms, "v1beta2");
        assert_eq!(gates[0].edit(source), None, "polarity is not the parent's");
        let taints = run("taints", md, "v1beta2", &ms, "v1beta2");
        assert_eq!(
            taints[0].edit(source).unwrap().value,
            json!({"key": "dedicated", "effect": "NoSchedule", "propagation": "Always", "value": "gpu"})
        );
    }

    // Found by the mutated_objects fuzz target: a parent count outside
    // int32 was copied to the child, which its CRD would refuse.
    #[test]
    fn a_parent_count_outside_int32_is_malformed() {
        let md =
            json!({"spec": {"template": {"spec": {"minReadySeconds": 6582955728264977243_i64}}}});
        let mut out = Vec::new();
        let error = decide(
            flow("minReadySeconds"),
            &md,
            "v1beta2",
            &json!({}),
            "v1beta2",
            &mut out,
        );
        assert!(matches!(error, Err(MalformedIn::Parent(e)) if e.to_string()
            == "spec.template.spec.minReadySeconds: expected an int32, found a number"));
    }

    #[test]
    fn malformed_values_are_named_on_their_side() {
        let parent = decide(
            flow("nodeDrainTimeout"),
            &json!({"spec": {"template": {"spec": {"nodeDrainTimeout": "soon"}}}}),
            "v1beta1",
            &json!({}),
            "v1beta1",
            &mut Vec::new(),
        );
        assert!(
            matches!(parent, Err(MalformedIn::Parent(e)) if e.to_string()
            == "spec.template.spec.nodeDrainTimeout: \"soon\" is not a duration such as \"5m0s\" or \"90s\"")
        );
        let child = decide(
            flow("minReadySeconds"),
            &json!({"spec": {"template": {"spec": {"minReadySeconds": 5}}}}),
            "v1beta2",
            &json!({"spec": {"template": {"spec": {"minReadySeconds": "5"}}}}),
            "v1beta2",
            &mut Vec::new(),
        );
        assert!(matches!(child, Err(MalformedIn::Child(e)) if e.to_string()
            == "spec.template.spec.minReadySeconds: expected an integer, found a string"));
        // Found by the mutated_objects fuzz target (crash-9e10c842): a
        // child's keyed list with an entry that is not an object.
        let gates =
            json!({"spec": {"template": {"spec": {"readinessGates": [{"conditionType": "A"}]}}}});
        let child_list = decide(
            flow("readinessGates"),
            &gates,
            "v1beta2",
            &json!({"spec": {"template": {"spec": {"readinessGates": [{"conditionType": "B"}, null]}}}}),
            "v1beta2",
            &mut Vec::new(),
        );
        assert!(
            matches!(child_list, Err(MalformedIn::Child(e)) if e.to_string()
            == "spec.template.spec.readinessGates[1]: expected an object, found null")
        );
    }
}
