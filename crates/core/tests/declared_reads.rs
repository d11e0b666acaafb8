//! What each stage declares it reads of a request's objects is all it
//! reads: on every request the repository holds (the fixtures, the bench
//! scenarios and the e2e suites' cases, under the settings beside them and
//! the cases' own), each stage alone decides the same over the objects cut
//! down to its declaration as over the whole objects. The expectation is
//! the whole objects' decision, not the declaration: a path a stage reads
//! and does not declare changes a decision here. Every look-up they make
//! is of an object and through a mask one of their declared look-ups
//! covers.

use super::passthrough;
use super::support;
use metadata_propagation_core::evaluate::{
    declared_lookups, evaluate_routed, object_projection, old_object_projection, route, stages,
};
use metadata_propagation_core::outcome::{Outcome, Verdict};
use metadata_propagation_core::request::AdmissionRequest;
use metadata_propagation_core::settings::Settings;
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::path::Path;

/// Each e2e case (`test_data/**/cases/*.yaml`) as a request and the
/// settings it runs under.
fn cases(root: &Path) -> Vec<(String, Value, Value)> {
    let mut out = Vec::new();
    let mut suites = vec![root.to_path_buf()];
    while let Some(dir) = suites.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if !path.is_dir() {
                continue;
            }
            if path.file_name().is_some_and(|name| name == "cases") {
                out.extend(suite_cases(&path));
            } else {
                suites.push(path);
            }
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

fn suite_cases(cases: &Path) -> Vec<(String, Value, Value)> {
    let suite = cases.parent().unwrap();
    let read = |path: &Path| std::fs::read_to_string(path).unwrap();
    let mut out = Vec::new();
    for entry in std::fs::read_dir(cases).unwrap() {
        let path = entry.unwrap().path();
        let case: Value = serde_norway::from_str(&read(&path)).unwrap();
        let Some(request) = case["request"].as_str() else {
            continue;
        };
        let request: Value = serde_json::from_str(&read(&suite.join(request))).unwrap();
        let settings = match case["settings-file"].as_str() {
            Some(file) => serde_json::from_str(&read(&suite.join(file))).unwrap(),
            None => case["settings"].clone(),
        };
        let request = request.get("request").cloned().unwrap_or(request);
        out.push((path.to_string_lossy().into_owned(), request, settings));
    }
    out
}

/// `object` cut down to what `projection` keeps; `null` stays `null`.
fn cut(
    object: &Value,
    projection: Option<&metadata_propagation_core::projection::Projection>,
) -> Value {
    match projection {
        Some(projection) if !object.is_null() => {
            projection.decode(object.to_string().as_bytes()).unwrap()
        }
        _ => Value::Null,
    }
}

/// Each stage's decision on `request` under `settings`, alone, over the
/// objects cut down to its declaration and over the whole objects; and
/// all the stages' together over the union of their declarations.
fn decisions(
    request: &AdmissionRequest,
    settings: &Settings,
    parents: &[Value],
) -> Vec<(String, Outcome, Outcome)> {
    let route = route(&request.kind, &request.operation);
    let count = stages(&request.kind, route, settings).len();
    let runs = (0..count).map(|at| (format!("stage {at}"), at..at + 1));
    let runs = runs.chain(std::iter::once(("every stage".to_owned(), 0..count)));
    let mut out = Vec::new();
    for (name, range) in runs {
        let mut declared = request.clone();
        {
            let stages = &stages(&request.kind, route, settings)[range.clone()];
            declared.object = cut(&request.object, Some(&object_projection(stages)));
            let old = old_object_projection(stages);
            declared.old_object = cut(&request.old_object, old.as_ref());
        }
        let run = |request: &AdmissionRequest, range: std::ops::Range<usize>| {
            let stages = &stages(&request.kind, route, settings)[range];
            evaluate_routed(
                request,
                route,
                stages,
                settings,
                &passthrough::lookup(parents),
            )
        };
        let cut = run(&declared, range.clone());
        let whole = run(request, range);
        out.push((name, cut, whole));
    }
    out
}

/// Each look-up the stages make on `request`, as `object (mask)`, that the
/// look-ups they declare do not cover: every path of its mask kept by the
/// mask of a declared look-up that names the object's group and kind (two
/// stages that read one object read it once, through both their masks);
/// with how many look-ups were made.
fn undeclared_lookups(
    request: &AdmissionRequest,
    settings: &Settings,
    parents: &[Value],
) -> (Vec<String>, usize) {
    let route = route(&request.kind, &request.operation);
    let stages = stages(&request.kind, route, settings);
    let lookup = passthrough::lookup(parents);
    evaluate_routed(request, route, &stages, settings, &lookup);
    let declared = declared_lookups(&request.kind, settings);
    let kept = |declared: &BTreeSet<String>, path: &String| {
        (declared.iter()).any(|d| d.is_empty() || path == d || path.starts_with(&format!("{d}.")))
    };
    let made = lookup.requests().into_iter().zip(lookup.field_masks());
    let mut undeclared = Vec::new();
    let mut count = 0;
    for (object, masks) in made {
        count += 1;
        let naming: BTreeSet<String> = (declared.iter())
            .filter(|d| d.names(object.group(), &object.kind))
            .flat_map(|d| d.projection.field_masks())
            .collect();
        let covered = masks.iter().all(|path| kept(&naming, path));
        if !covered {
            undeclared.push(format!("{object} ({masks:?})"));
        }
    }
    (undeclared, count)
}

#[test]
fn each_stage_decides_the_same_over_its_declared_paths_as_over_the_whole_object() {
    let root = support::repo_path("test_data");
    let parents = passthrough::parents(&root);
    let mut runs: Vec<(String, Value, Value)> = Vec::new();
    for (name, request) in passthrough::requests(&root) {
        for settings in passthrough::settings(&name) {
            runs.push((name.clone(), request.clone(), settings));
        }
    }
    let cases = cases(&root);
    assert!(cases.len() > 100, "e2e cases found: {}", cases.len());
    runs.extend(cases);
    let (mut compared, mut changed, mut lookups) = (0, 0, 0);
    for (name, request, settings) in &runs {
        let Ok(request) = serde_json::from_value::<AdmissionRequest>(request.clone()) else {
            continue;
        };
        let text = match settings {
            Value::Null => json!({}).to_string(),
            settings => settings.to_string(),
        };
        let Ok(settings) = Settings::parse(text.as_bytes()) else {
            continue;
        };
        let (undeclared, made) = undeclared_lookups(&request, &settings, &parents);
        assert!(
            undeclared.is_empty(),
            "{name} under {text}: looked up beyond what the stages declare: {undeclared:?}"
        );
        lookups += made;
        for (stage, cut, whole) in decisions(&request, &settings, &parents) {
            assert_eq!(
                cut, whole,
                "{name} under {text}: {stage} over its declared paths"
            );
            compared += 1;
            let edits = |outcome: &Outcome| match &outcome.verdict {
                Verdict::Allow(plan) => !plan.edits.is_empty(),
                _ => outcome.refused_plan.is_some(),
            };
            changed += usize::from(edits(&whole));
        }
    }
    eprintln!(
        "{} runs, {compared} decisions compared, {changed} with edits, {lookups} look-ups",
        runs.len()
    );
    assert!(changed > 100, "decisions with edits compared: {changed}");
    assert!(lookups > 100, "look-ups held to the declaration: {lookups}");
}
