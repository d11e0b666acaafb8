//! The edge decodes only the parts of a request's object the policy reads
//! and writes the rest back as text (`Projection::split`). This checks that
//! it answers exactly as decoding the whole object does, on every request
//! and object the repository holds, under every settings file it holds, and
//! on the fuzz corpus when one is present (`fuzz/corpus/validate_bytes`,
//! local only): same verdict, message, warnings, audit annotations, same
//! look-ups with the same masks, and a mutated object equal to the whole
//! decode's, with every member it did not change where it was.

use metadata_propagation_core::evaluate::{Route, evaluate, not_acted_on, route};
use metadata_propagation_core::lookup::MapLookup;
use metadata_propagation_core::outcome::Outcome;
use metadata_propagation_core::request::AdmissionRequest;
use metadata_propagation_core::settings::Settings;
use metadata_propagation_core::wire;
use serde::Deserialize;
use serde_json::{Value, json};
use std::fs;
use std::path::{Path, PathBuf};

/// The answer as the edge gave it before it split objects: the whole object
/// decoded, evaluated, and re-encoded.
fn whole_object_answer(payload: &[u8], lookup: &MapLookup) -> Vec<u8> {
    let Ok(payload) = serde_json::from_slice::<Value>(payload) else {
        return wire::validate_with(payload, lookup);
    };
    let request: AdmissionRequest = match serde_json::from_value(payload["request"].clone()) {
        Ok(request) => request,
        Err(e) => {
            let message = format!("cannot decode the admission request: {e}");
            return wire::encode(Outcome::reject(message), None);
        }
    };
    if route(&request.kind, &request.operation) == Route::NotActedOn {
        return wire::encode(not_acted_on(&request.kind, &request.operation), None);
    }
    let settings = payload.get("settings").unwrap_or(&Value::Null);
    let raw = if settings.is_null() {
        json!({})
    } else {
        settings.clone()
    };
    let raw = raw.to_string();
    let settings = match Settings::parse(raw.as_bytes()) {
        Ok(settings) => settings,
        Err(e) => {
            let message = format!("policy settings are not valid: {e}");
            return wire::encode(Outcome::reject_with_code(message, 500), None);
        }
    };
    let outcome = evaluate(&request, &settings, lookup);
    wire::encode(outcome, Some(request.object))
}

/// Every Kubernetes object the look-ups answer: the parents files (the
/// `parents/` folders, `*_parent.json`, `*.parents.yaml`: YAML or JSON
/// documents, or `List`s, as `policy-runner run --parents` reads them) and
/// the payloads of the replay sessions that remain.
pub(super) fn parents(root: &Path) -> Vec<Value> {
    let mut objects = Vec::new();
    for file in files(root) {
        let text = fs::read_to_string(&file).unwrap();
        let name = file.to_string_lossy();
        let file_name = file.file_name().unwrap().to_string_lossy();
        if name.contains("replay") && name.ends_with(".yml") {
            let Ok(Value::Array(exchanges)) = serde_norway::from_str::<Value>(&text) else {
                continue;
            };
            for exchange in exchanges {
                if let Some(Ok(object)) = exchange["response"]["payload"]
                    .as_str()
                    .map(serde_json::from_str::<Value>)
                    && object.get("metadata").is_some()
                {
                    objects.push(object);
                }
            }
        } else if (name.contains("/parents/")
            || file_name.ends_with("_parent.json")
            || file_name.ends_with(".parents.yaml"))
            && [".yaml", ".yml", ".json"]
                .iter()
                .any(|e| file_name.ends_with(e))
        {
            for document in serde_norway::Deserializer::from_str(&text) {
                let document = Value::deserialize(document)
                    .unwrap_or_else(|e| panic!("{name}: not YAML or JSON: {e}"));
                match document.get("items") {
                    Some(Value::Array(items)) if document["kind"] == "List" => {
                        objects.extend(items.iter().cloned());
                    }
                    _ if document.get("metadata").is_some() => objects.push(document),
                    _ => {}
                }
            }
        }
    }
    objects
}

pub(super) fn lookup(objects: &[Value]) -> MapLookup {
    objects.iter().fold(MapLookup::default(), |lookup, object| {
        lookup.with_object(object.clone())
    })
}

fn files(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// The requests: recorded AdmissionRequests and AdmissionReviews as they
/// are, and bare objects as a CREATE and as an UPDATE.
pub(super) fn requests(root: &Path) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    for file in files(root) {
        let name = file.to_string_lossy().into_owned();
        // The audit's dumps are Lists, not requests (and the scale dump is
        // 23 MB).
        if !name.ends_with(".json") || name.contains("settings") || name.contains("/dumps/") {
            continue;
        }
        let Ok(value) = serde_json::from_str::<Value>(&fs::read_to_string(&file).unwrap()) else {
            continue;
        };
        let request = value.get("request").cloned().unwrap_or(value);
        if request.get("operation").is_some() {
            out.push((name, request));
        } else if request.get("apiVersion").is_some() && request.get("metadata").is_some() {
            for operation in ["CREATE", "UPDATE"] {
                let for_object = AdmissionRequest::for_object(operation, request.clone());
                let kind = &for_object.kind;
                out.push((
                    format!("{name} as {operation}"),
                    json!({"uid": "passthrough", "operation": operation,
                           "kind": {"group": kind.group, "version": kind.version, "kind": kind.kind},
                           "namespace": for_object.namespace, "object": request}),
                ));
            }
        }
    }
    out
}

/// The settings a request is run under: the defaults, validate mode, and
/// every settings document beside it (the ones its own tests use).
pub(super) fn settings(request: &str) -> Vec<Value> {
    let mut out = vec![Value::Null, json!({"mode": "validate"})];
    let dir = Path::new(request.split(" as ").next().unwrap())
        .parent()
        .unwrap();
    for file in fs::read_dir(dir).unwrap() {
        let file = file.unwrap().path();
        let name = file.to_string_lossy();
        if name.contains("settings") && name.ends_with(".json") {
            out.push(serde_json::from_str(&fs::read_to_string(&file).unwrap()).unwrap());
        }
    }
    out
}

fn compare(name: &str, payload: &[u8], lookup: &MapLookup, reference: &MapLookup) {
    let split = wire::validate_with(payload, lookup);
    let whole = whole_object_answer(payload, reference);
    let (split_value, whole_value): (Value, Value) = (
        serde_json::from_slice(&split).unwrap_or_else(|e| panic!("{name}: {e}")),
        serde_json::from_slice(&whole).unwrap(),
    );
    let undecodable = |answer: &Value| {
        answer["code"] == 400
            && answer["message"]
                .as_str()
                .is_some_and(|m| m.starts_with("cannot decode the admission request: "))
    };
    // The reference reads a malformed payload in other steps, so serde
    // words the error differently; both must refuse it as undecodable.
    if undecodable(&whole_value) {
        assert!(undecodable(&split_value), "{name}: {split_value}");
        return;
    }
    assert_eq!(split_value, whole_value, "{name}");
    assert_eq!(lookup.field_masks(), reference.field_masks(), "{name}");
    assert_eq!(lookup.requests(), reference.requests(), "{name}");
}

/// The payload with the request's `kind` and `operation` first, as
/// policy-server and kwctl write it (serde_json's maps write keys sorted,
/// which puts `object` before `operation`).
fn host_ordered(request: &Value, settings: &Value) -> Vec<u8> {
    let mut rest = request.as_object().unwrap().clone();
    let kind = rest.remove("kind").unwrap_or(Value::Null);
    let operation = rest.remove("operation").unwrap_or(Value::Null);
    let rest = serde_json::to_string(&rest).unwrap();
    let rest = &rest[1..rest.len() - 1];
    let comma = if rest.is_empty() { "" } else { "," };
    format!(r#"{{"request":{{"kind":{kind},"operation":{operation}{comma}{rest}}},"settings":{settings}}}"#)
        .into_bytes()
}

#[test]
fn splitting_the_object_answers_as_decoding_it_whole_on_every_fixture() {
    let root = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    let parents = parents(&root.join("test_data"));
    assert!(parents.len() > 30, "parents found: {}", parents.len());
    let requests = requests(&root.join("test_data"));
    assert!(requests.len() > 80, "requests found: {}", requests.len());
    let (mut compared, mut mutated) = (0, 0);
    for (name, request) in &requests {
        for settings in &settings(name) {
            compared += 1;
            let payload =
                serde_json::to_vec(&json!({"request": request, "settings": settings})).unwrap();
            let (lookup, reference) = (lookup(&parents), lookup(&parents));
            compare(name, &payload, &lookup, &reference);
            // As hosts write it, kind and operation before the object: the
            // object is split as the payload is read, and split again when
            // the settings' projection is not the default settings' one.
            let (host_lookup, host_reference) = (self::lookup(&parents), self::lookup(&parents));
            compare(
                &format!("{name} (host order)"),
                &host_ordered(request, settings),
                &host_lookup,
                &host_reference,
            );
            let answer: Value =
                serde_json::from_slice(&wire::validate_with(&payload, &lookup)).unwrap();
            mutated += usize::from(!answer["mutated_object"].is_null());
        }
    }
    eprintln!(
        "{} requests, {compared} answers compared, {mutated} mutations",
        requests.len()
    );
    assert!(mutated > 100, "mutations compared: {mutated}");
}

#[test]
fn the_fuzz_corpus_answers_the_same_when_present() {
    let corpus =
        Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join("fuzz/corpus/validate_bytes");
    let Ok(entries) = fs::read_dir(&corpus) else {
        return; // the corpus is local to a machine that ran `make fuzz`
    };
    for entry in entries {
        let path = entry.unwrap().path();
        let payload = fs::read(&path).unwrap();
        let name = path.to_string_lossy();
        compare(
            &name,
            &payload,
            &MapLookup::default(),
            &MapLookup::default(),
        );
    }
}

#[test]
fn untouched_members_keep_their_place_and_their_bytes() {
    // Key order as the API server writes it (not sorted), a number serde
    // would rewrite (1.0), and an escape it would rewrite (\u00e9).
    let object = r#"{"apiVersion":"cluster.x-k8s.io/v1beta1","kind":"MachineSet","metadata":{"name":"ms","namespace":"default","labels":{"cluster.x-k8s.io/cluster-name":"c"},"managedFields":[{"manager":"caf\u00e9","time":"2026-11-23T10:00:00Z"}],"ownerReferences":[{"apiVersion":"cluster.x-k8s.io/v1beta1","kind":"MachineDeployment","name":"md","uid":"u","controller":true}]},"spec":{"replicas":1.0,"clusterName":"c","template":{"metadata":{"labels":{}},"spec":{"clusterName":"c","bootstrap":{"dataSecretName":"s"},"infrastructureRef":{"apiVersion":"infrastructure.cluster.x-k8s.io/v1beta1","kind":"DockerMachineTemplate","name":"t"}}}},"status":{"replicas":1}}"#;
    let parent = json!({"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "MachineDeployment",
        "metadata": {"name": "md", "namespace": "default", "annotations": {"team": "a"}},
        "spec": {"template": {"metadata": {"labels": {"env": "prod"}}}}});
    let payload = format!(
        r#"{{"request":{{"uid":"1","kind":{{"group":"cluster.x-k8s.io","version":"v1beta1","kind":"MachineSet"}},"operation":"CREATE","namespace":"default","object":{object}}},"settings":{{}}}}"#
    );
    let lookup = MapLookup::default().with_object(parent);
    let answer = wire::validate_with(payload.as_bytes(), &lookup);
    let text = String::from_utf8(answer).unwrap();
    for untouched in [
        r#""managedFields":[{"manager":"caf\u00e9","time":"2026-11-23T10:00:00Z"}]"#,
        r#""status":{"replicas":1}"#,
        r#""replicas":1.0,"clusterName":"c","template":"#,
        r#""bootstrap":{"dataSecretName":"s"}"#,
    ] {
        assert!(text.contains(untouched), "{untouched} in {text}");
    }
    let answer: Value = serde_json::from_str(&text).unwrap();
    let mutated = &answer["mutated_object"];
    assert_eq!(
        mutated["spec"]["template"]["metadata"]["labels"]["env"],
        "prod"
    );
    assert_eq!(mutated["metadata"]["annotations"]["team"], "a");
    let keys: Vec<&String> = mutated.as_object().unwrap().keys().collect();
    assert_eq!(keys.len(), 5);
}

/// An XR whose provider lives elsewhere (`cloudTags.providerPath`): the
/// object was split through the default settings' projection as the payload
/// was read, so it is split again through the settings' own, and the
/// answer is the one decoding it whole gives, the provider read where the
/// settings say.
#[test]
fn a_provider_path_of_the_settings_is_read_though_the_payload_pass_did_not_project_it() {
    let root = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    let text = fs::read_to_string(root.join("test_data/bench/xr-aws-5.request.json")).unwrap();
    let request: Value = serde_json::from_str(&text).unwrap();
    let request = request.get("request").unwrap_or(&request);
    let opted_in: Vec<String> = (0..5)
        .map(|i| format!("platform.example.org/attr-00{i}"))
        .collect();
    let answer = |settings: &Value| {
        let payload = host_ordered(request, settings);
        compare(
            "xr-aws-5 (host order)",
            &payload,
            &MapLookup::default(),
            &MapLookup::default(),
        );
        let answer = wire::validate_with(&payload, &MapLookup::default());
        serde_json::from_slice::<Value>(&answer).unwrap()
    };
    // A profile selected only by the composition's name, refusing '/'.
    let profiles = json!([{"name": "by-composition", "providers": ["xnetwork-aws"],
        "keyMax": 128, "valueMax": 256, "unit": "bytes", "cap": 50,
        "keyCharacters": {"sets": ["letters", "digits"], "extra": ":.-"}}]);
    let default = answer(&json!({"cloudTags": {"propagatingLabels": opted_in,
        "profiles": profiles}}));
    let elsewhere = answer(&json!({"cloudTags": {"propagatingLabels": opted_in,
        "profiles": profiles, "providerPath": "spec.compositionRef.name"}}));
    let tags = |answer: &Value| answer["mutated_object"]["spec"]["cloudTags"].clone();
    assert_eq!(
        tags(&default)["plexsphere:platform.example.org/attr-000"],
        "prod",
        "{default}"
    );
    assert_eq!(tags(&elsewhere), Value::Null, "{elsewhere}");
    let warning = elsewhere["warnings"][0].as_str().unwrap();
    assert!(
        warning.contains("by-composition: key-character-class"),
        "{warning}"
    );
}
