//! Structure-aware: real CAPI and Crossplane objects (and the CAPI parents)
//! with arbitrary nodes replaced, removed or extended, evaluated under
//! arbitrary settings, with any of the README's ready-made tag profiles,
//! and CAPI objects of the in-place field family (and their parents) with
//! those fields rewritten, under `capi.inPlaceFields` on or off, and CAPI
//! infrastructure objects of every row of the cloud-tag target table (and
//! their Clusters) with labels, label sets and tag fields rewritten, under
//! `cloudTags.capiInfrastructure` on or off, the Cluster found or not, and
//! Crossplane managed resources (and their XRs) with labels, controller
//! ownerReferences and tag fields rewritten, under
//! `cloudTags.managedResources.families` on or off, the XR found or not.
//! Whatever the input: no panic; an allowed mutation satisfies the core's
//! oracle, `invariants::fuzz_oracles::check_allowed` (`invariants::check_mutation`; on an
//! infrastructure object or a managed resource, once the tag field and the
//! skip annotation are checked and taken out), and is idempotent.
//!
//! Built for speed: under the address sanitizer every allocation is costly,
//! so an execution copies only what its input changes (profile and numbers
//! in `fuzz/README.md`). The fixtures are parsed once and the unedited ones
//! are shared by every execution: an edited object copies only the maps and
//! lists on the way to the edited node ([`Node`]); an unedited child's
//! request, and an unedited parent's answer to each projection, are built
//! once. A node is found by counting, not by listing every node's path.
//! Nothing checked was dropped, and an input means the same edits, the
//! same settings and the same request as before, so saved inputs replay
//! the same cases.
//!
//! The harness is split along its parts, in `mutated_objects/` (a cargo-fuzz
//! target is one binary, so the files are named by `#[path]`): [`node`] is
//! the copy-on-edit object, [`mutation`] what an input does to it,
//! [`fixtures`] what every execution starts from, [`parents`] the
//! look-ups answered from the (possibly edited) parents, [`infra`] the
//! infrastructure inputs and [`mr`] the managed-resource inputs. This file is the
//! input and the checks.
#![no_main]

#[path = "mutated_objects/fixtures.rs"]
mod fixtures;
#[path = "mutated_objects/infra.rs"]
mod infra;
#[path = "mutated_objects/mr.rs"]
mod mr;
#[path = "mutated_objects/mutation.rs"]
mod mutation;
#[path = "mutated_objects/node.rs"]
mod node;
#[path = "mutated_objects/parents.rs"]
mod parents;

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use metadata_propagation_core::evaluate::evaluate;
use metadata_propagation_core::invariants::fuzz_oracles::check_allowed;
use metadata_propagation_core::outcome::Verdict;
use metadata_propagation_core::request::AdmissionRequest;
use metadata_propagation_core::settings::Settings;

use fixtures::{ALL_PARENTS, FIXTURES, PARENTS, child_index, request};
use infra::Infra;
use mr::Mr;
use mutation::{FieldMutation, Mutation, apply, apply_field};
use node::Node;
use parents::{Answer, Parents};

#[derive(Arbitrary, Debug)]
struct Input {
    child: u8,
    operation: bool,
    mutations: Vec<Mutation>,
    propagating: Vec<String>,
    provider_path: Option<String>,
    validate_mode: bool,
    /// After the fields above, so inputs saved before it decode to the same
    /// cases, without ready-made profiles (an exhausted input decodes
    /// `None`).
    ready: Option<Ready>,
    /// Last, for the same reason: `None`, what every input saved before it
    /// decodes, is what they always meant (`inPlaceFields` on, the child
    /// `Input::child` or `Ready::child` picks, mutations of [`PARENTS`]).
    fields: Option<Fields>,
    /// Last, for the same reason: cloud tags on CAPI infrastructure
    /// ([`Infra`]); `None`, what every input saved before it decodes, means
    /// the feature off and the children and parents above.
    infra: Option<Infra>,
    /// Last, for the same reason: `cloudTags.prefix` and `cloudTags.tagKeys`;
    /// `None`, what every input saved before it decodes, means neither.
    tag_keys: Option<TagKeyChoice>,
    /// Last, for the same reason: cloud tags on Crossplane managed
    /// resources ([`Mr`]); `None`, what every input saved before it
    /// decodes, means no `managedResources` in the settings and the
    /// children and parents above.
    mr: Option<Mr>,
}

/// The settings that name tags: a prefix, and bodies for opted-in labels.
#[derive(Arbitrary, Debug)]
struct TagKeyChoice {
    /// `cloudTags.prefix`; `None`: not set (each profile's default).
    prefix: Option<String>,
    /// `cloudTags.tagKeys`: (an opted-in label, by its position in the
    /// list, modulo its length; the body).
    bodies: Vec<(u8, String)>,
}

/// The README's ready-made tag profiles in the settings, and an XR they
/// select: under GCP labels no tag can ever propagate, which takes the
/// summary-warning path.
#[derive(Arbitrary, Debug)]
struct Ready {
    /// Bit n: the README's n-th ready-made profile is in `cloudTags.profiles`.
    profiles: u8,
    /// Some: the child is an XR on a provider only a ready-made profile
    /// selects (`fixtures::PROFILE_CHILDREN`), instead of `Input::child`.
    child: Option<u8>,
    /// Opt the child's own label keys in as well, so that the profile has
    /// labels to tag or skip without the fuzzer guessing their keys.
    opt_in_its_labels: bool,
}

/// The in-place field family: timeouts, `minReadySeconds`, readiness gates,
/// taints, deletion order and machine naming, flowing from a topology and
/// its ClusterClass, a MachineDeployment, a MachineSet or a control plane.
#[derive(Arbitrary, Debug)]
struct Fields {
    /// Some: the child is one of the family's (`fixtures::FIELDS_CHILDREN`),
    /// instead of `Input::child` or `Ready::child`.
    child: Option<u8>,
    /// `capi.inPlaceFields`.
    in_place_fields: bool,
    /// Applied after `Input::mutations`. They, and `Input::mutations` too,
    /// edit any parent, the family's parents included.
    mutations: Vec<FieldMutation>,
}

fuzz_target!(|input: Input| {
    let fixtures = &*FIXTURES;
    let ready = input.ready.as_ref();
    let fields = input.fields;
    let child_index = child_index(
        input.child,
        ready.and_then(|r| r.child),
        fields.as_ref().and_then(|f| f.child),
        input.infra.as_ref().map(|i| i.child),
        input.mr.as_ref().map(|m| m.child),
    );
    let mut child = Node::Shared(&fixtures.children[child_index]);
    let mut parents: Vec<Node> = fixtures.parents.iter().map(Node::Shared).collect();
    // Without `Fields` or `Infra`, the parents an input edits are the ones
    // it always did.
    let editable = match (&input.infra, &fields) {
        _ if input.mr.is_some() => parents.len(),
        (Some(_), _) => parents.len(),
        (None, Some(_)) => ALL_PARENTS,
        (None, None) => PARENTS.len(),
    };
    // The infrastructure edits come first, so that the other mutations can
    // undo them; the Cluster the child names is looked up by that name.
    let mut capi_infrastructure = false;
    let mut opt_in = false;
    let mut cluster_answer = Answer::Found;
    let mut cluster = None;
    if let Some(infra) = input.infra {
        capi_infrastructure = infra.capi_infrastructure;
        opt_in = infra.opt_in;
        let name = infra::cluster_name(&child).map(str::to_owned);
        let is_cluster = |parent: &Node| {
            parent.text(&["kind"]) == Some("Cluster")
                && name.is_some()
                && parent.text(&["metadata", "name"]) == name.as_deref()
        };
        cluster_answer = infra.apply(&mut child, &mut parents, is_cluster);
        cluster = name;
    }
    // The managed-resource edits come next, for the same reason; the XR is
    // the one the fixture names.
    let mut managed = None;
    let mut mr_opt_in = false;
    if let Some(mr) = input.mr {
        mr_opt_in = mr.opt_in;
        let fixture = &fixtures.children[child_index];
        let xr = parents.iter_mut().find(|p| mr::names_xr(fixture, p));
        managed = Some(mr.apply(&mut child, xr));
    }
    for mutation in input.mutations.into_iter().take(8) {
        let target = match mutation.in_parent() {
            Some(i) => &mut parents[i as usize % editable],
            None => &mut child,
        };
        apply(target, mutation);
    }
    let (in_place_fields, field_mutations) = match fields {
        Some(fields) => (fields.in_place_fields, fields.mutations),
        None => (true, Vec::new()),
    };
    for mutation in field_mutations.into_iter().take(8) {
        let target = match mutation.in_parent() {
            Some(i) => &mut parents[i as usize % editable],
            None => &mut child,
        };
        apply_field(target, mutation);
    }

    // What `Settings::from_json` makes of the same document: parsed, then
    // every part prepared; a document it refuses ends the case.
    let mut propagating = input.propagating;
    if opt_in {
        propagating.extend(infra::opted_in());
    }
    if mr_opt_in {
        propagating.extend(mr::opted_in());
    }
    let mut profiles = Vec::new();
    if let Some(ready) = ready {
        if ready.opt_in_its_labels {
            propagating.extend(fixtures.label_keys[child_index].iter().cloned());
        }
        let chosen = (fixtures.ready_profiles.iter().take(8).enumerate())
            .filter(|(n, _)| ready.profiles >> n & 1 == 1)
            .map(|(_, profile)| profile.clone());
        profiles.extend(chosen);
    }
    let mut prefix = None;
    let mut tag_keys = serde_json::Map::new();
    if let Some(choice) = input.tag_keys {
        prefix = choice.prefix;
        for (label, body) in choice.bodies.into_iter().take(4) {
            if let Some(label) = propagating.get(usize::from(label) % propagating.len().max(1)) {
                tag_keys.insert(label.clone(), body.into());
            }
        }
    }
    // The settings as a user writes them, prepared whole: a document the
    // policy refuses is not one it evaluates with.
    let mut cloud_tags = serde_json::json!({
        "propagatingLabels": propagating,
        "profiles": profiles,
        "capiInfrastructure": capi_infrastructure,
        "tagKeys": tag_keys,
    });
    if let Some(path) = input.provider_path {
        cloud_tags["providerPath"] = path.into();
    }
    if let Some(prefix) = prefix {
        cloud_tags["prefix"] = prefix.into();
    }
    let (xr_answer, stored) = match managed {
        Some(applied) => {
            cloud_tags["managedResources"] = applied.settings;
            (applied.answer, applied.stored)
        }
        None => (Answer::Found, None),
    };
    let document = serde_json::json!({
        "mode": if input.validate_mode { "validate" } else { "mutate" },
        "capi": {"inPlaceFields": in_place_fields},
        "cloudTags": cloud_tags,
    });
    let Ok(settings) = Settings::from_json(document.to_string().as_bytes()) else {
        return;
    };
    let mut lookup = Parents::new(parents);
    if cluster_answer != Answer::Found {
        // The Cluster the child named before the other mutations; the
        // policy reads the name from the object as they left it.
        lookup.answer(|key| {
            if key.kind == "Cluster" && Some(&key.name) == cluster.as_ref() {
                cluster_answer
            } else {
                Answer::Found
            }
        });
    }
    if xr_answer != Answer::Found {
        lookup.answer(|key| match mr::is_xr(&key.kind) {
            true => xr_answer,
            false => Answer::Found,
        });
    }
    // An UPDATE of a managed resource may carry its old object, with the
    // tag field the input stores.
    let old = (stored.filter(|_| !input.operation))
        .map(|stored| mr::stored_object(&fixtures.children[child_index], stored));
    let edited;
    let request = match (child, old) {
        (Node::Shared(_), None) => &fixtures.requests[child_index][input.operation as usize],
        (child, old) => {
            let mut built = request(child.into_value(), input.operation);
            if let Some(old) = old {
                built.old_object = old;
            }
            edited = built;
            &edited
        }
    };

    let outcome = evaluate(request, &settings, &lookup);
    let Verdict::Allow(plan) = outcome.verdict else {
        return;
    };
    // An empty plan changes nothing: the object after it is the request's.
    let mutated;
    let after = if plan.is_empty() {
        request
    } else {
        let mut object = request.object.clone();
        plan.apply(&mut object);
        mutated = AdmissionRequest {
            uid: request.uid.clone(),
            kind: request.kind.clone(),
            operation: request.operation.clone(),
            namespace: request.namespace.clone(),
            object,
            old_object: request.old_object.clone(),
        };
        &mutated
    };
    if let Err(e) = check_allowed(request, &settings, &after.object, &outcome.warnings) {
        panic!("invariant violated: {e}");
    }
    let second = evaluate(after, &settings, &lookup);
    assert!(
        matches!(&second.verdict, Verdict::Allow(p) if p.is_empty()),
        "not idempotent: {:?}",
        second.verdict
    );
});
