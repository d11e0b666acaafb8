#!/usr/bin/env python3
"""Checks the policy's answer to one case (e2e-tests/cases.bash lists the keys).

    check_case.py CASE.yaml REQUEST.json RESPONSE.json [PATCHED.json]

RESPONSE is the host's stdout, PATCHED the request's object with the
response's patch applied (by `policy-runner patch`, absent without a patch).
Prints every expectation that does not hold, under the case's file and title,
and exits 1 if any. The jq filters a case names run in jq, as written.
"""

import base64
import json
import subprocess
import sys

import yaml

SKIP_ANNOTATION = "cloud-tags.plexsphere.io/skipped"
VALIDATE_PREFIX = "the object deviates from the metadata propagation contract (validate mode): "
# What `unchanged-except: metadata | cloud-tags | infra-tags` removes before comparing.
NAMED_FILTERS = {
    "metadata": "del(.metadata.labels, .metadata.annotations, .spec.template.metadata,"
    " .spec.machineTemplate.metadata)",
    "cloud-tags": '(if (.spec | type) == "object" then del(.spec.cloudTags) else . end)'
    ' | if (.metadata.annotations | type) == "object" then'
    f' del(.metadata.annotations["{SKIP_ANNOTATION}"])'
    " | if .metadata.annotations == {} then del(.metadata.annotations) else . end"
    " else . end",
    # The CAPI infrastructure kinds' tag fields (crates/core/src/tags/targets.rs) and the skip annotation.
    "infra-tags": '(if (.spec | type) == "object" then del(.spec.additionalTags, .spec.additionalLabels,'
    ' .spec.serverMetadata) else . end)'
    ' | if (.metadata.annotations | type) == "object" then'
    f' del(.metadata.annotations["{SKIP_ANNOTATION}"])'
    " | if .metadata.annotations == {} then del(.metadata.annotations) else . end"
    " else . end",
}


class Failure(Exception):
    pass


def jq(program, value):
    """The single output of jq PROGRAM over VALUE."""
    done = subprocess.run(["jq", "-c", program], input=json.dumps(value), capture_output=True, text=True)
    if done.returncode != 0:
        raise Failure(f"jq {program!r}: {done.stderr.strip()}")
    outputs = [json.loads(line) for line in done.stdout.splitlines() if line]
    if len(outputs) != 1:
        raise Failure(f"jq {program!r} gave {len(outputs)} outputs")
    return outputs[0]


def show(value):
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def expect_equal(what, expected, actual):
    if expected != actual:
        raise Failure(f"{what} differs\n  expected: {show(expected)}\n  actual:   {show(actual)}")


class Answer:
    def __init__(self, request, response, patched):
        self.request = request
        self.response = response
        self._patched = patched
        raw = response.get("patch")
        self.patch = json.loads(base64.b64decode(raw)) if raw is not None else None

    @property
    def patched(self):
        if self._patched is None:
            raise Failure("the response has no patch to apply")
        return self._patched

    def pairs(self):
        if self.response.get("patchType") != "JSONPatch" or self.patch is None:
            raise Failure(f"expected a JSONPatch, got patchType={show(self.response.get('patchType'))}")
        return [f"{op['op']} {op['path']}" for op in self.patch]

    def warnings(self):
        return self.response.get("warnings") or []

    def message(self):
        return (self.response.get("status") or {}).get("message") or ""


def check_allowed(answer, value):
    expect_equal("allowed", value, answer.response.get("allowed"))
    if value and answer.response.get("status") is not None:
        raise Failure(f"allowed, but with a status: {show(answer.response['status'])}")


def check_patch(answer, value):
    if value == "none":
        if answer.response.get("patch") is not None or answer.response.get("patchType") is not None:
            raise Failure(f"expected no patch, got {show(answer.patch)}")
        return
    expect_equal("patch operations (sorted)", sorted(value), sorted(answer.pairs()))


def check_patch_values(answer, value):
    pairs = answer.pairs()
    for pair, expected in value.items():
        found = [op.get("value") for op, p in zip(answer.patch, pairs) if p == pair]
        if len(found) != 1:
            raise Failure(f"{len(found)} patch operations '{pair}' (expected one)")
        expect_equal(f"value of '{pair}'", expected, found[0])


def check_patch_within(answer, value):
    outside = [p for op, p in zip(answer.patch or [], answer.pairs())
               if not any(op["path"] == root or op["path"].startswith(root + "/") for root in value)]
    if outside:
        raise Failure(f"operations outside {show(value)}: {show(outside)}")


def check_patched(answer, value):
    for program, expected in value.items():
        expect_equal(f"patched object at {program}", expected, jq(program, answer.patched))


def check_tags(answer, value):
    spec = answer.patched.get("spec") or {}
    if value == "absent":
        if "cloudTags" in spec:
            raise Failure(f"spec.cloudTags should be absent: {show(spec['cloudTags'])}")
        return
    expect_equal("spec.cloudTags", value, spec.get("cloudTags"))


def check_skipped(answer, value):
    annotations = answer.patched.get("metadata", {}).get("annotations") or {}
    if value == "absent":
        if SKIP_ANNOTATION in annotations:
            raise Failure(f"annotation {SKIP_ANNOTATION} should be absent: {annotations[SKIP_ANNOTATION]!r}")
        return
    # The records as the annotation's compact JSON text, keys in the order written.
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    expect_equal(f"annotation {SKIP_ANNOTATION}", text, annotations.get(SKIP_ANNOTATION))


def check_unchanged_except(answer, value):
    program = NAMED_FILTERS.get(value, value)
    before, after = jq(program, answer.request["object"]), jq(program, answer.patched)
    if before != after:
        raise Failure(f"the patch changes more than {value!r} allows\n  before: {show(before)}\n  after:  {show(after)}")


def check_warnings(answer, value):
    expect_equal("warnings", value, answer.warnings())


def check_warning_count(answer, value):
    if len(answer.warnings()) != value:
        raise Failure(f"expected {value} warnings, got {len(answer.warnings())}: {show(answer.warnings())}")


def check_warnings_naming(answer, value):
    for texts in value:
        holding = [w for w in answer.warnings() if all(t in w for t in texts)]
        if len(holding) != 1:
            raise Failure(f"{len(holding)} warnings hold all of {show(texts)} (expected one): {show(answer.warnings())}")


def check_warning_mentions(answer, value):
    for text in value:
        if not any(text in w for w in answer.warnings()):
            raise Failure(f"no warning mentions {text!r}: {show(answer.warnings())}")


def check_no_warning_mentions(answer, value):
    for text in value:
        if any(text in w for w in answer.warnings()):
            raise Failure(f"a warning mentions {text!r}: {show(answer.warnings())}")


def check_message_mentions(answer, value):
    for text in value:
        if text not in answer.message():
            raise Failure(f"status.message does not mention {text!r}: {answer.message()!r}")


def check_deviations(answer, value):
    check_allowed(answer, False)
    check_patch(answer, "none")
    if not answer.message().startswith(VALIDATE_PREFIX):
        raise Failure(f"not a validate-mode rejection: {answer.message()!r}")
    if answer.message() != VALIDATE_PREFIX + "; ".join(value):
        expect_equal("deviations", value, answer.message()[len(VALIDATE_PREFIX):].split("; "))
        raise Failure(f"deviations differ: {answer.message()!r}")


def check_audit(answer, value):
    audit = answer.response.get("auditAnnotations") or {}
    for key, expected in value.items():
        if key not in audit:
            raise Failure(f"auditAnnotations has no {key!r}: {show(audit)}")
        expect_equal(f"auditAnnotations[{key!r}]", expected, audit[key])


def check_response(answer, value):
    for program, expected in value.items():
        expect_equal(f"response {program}", expected, jq(program, answer.response))


def check_response_satisfies(answer, value):
    for program in value:
        if jq(program, answer.response) is not True:
            raise Failure(f"the response does not satisfy {program}")


CHECKS = {
    "allowed": check_allowed,
    "patch": check_patch,
    "patch-values": check_patch_values,
    "patch-within": check_patch_within,
    "patched": check_patched,
    "tags": check_tags,
    "skipped": check_skipped,
    "unchanged-except": check_unchanged_except,
    "warnings": check_warnings,
    "warning-count": check_warning_count,
    "warnings-naming": check_warnings_naming,
    "warning-mentions": check_warning_mentions,
    "no-warning-mentions": check_no_warning_mentions,
    "message-mentions": check_message_mentions,
    "deviations": check_deviations,
    "audit": check_audit,
    "response": check_response,
    "response-satisfies": check_response_satisfies,
}


def main(case_path, request_path, response_path, patched_path=None):
    with open(case_path, encoding="utf-8") as f:
        case = yaml.safe_load(f)
    with open(request_path, encoding="utf-8") as f:
        request = json.load(f)
    with open(response_path, encoding="utf-8") as f:
        response = json.load(f)
    patched = None
    if patched_path:
        with open(patched_path, encoding="utf-8") as f:
            patched = json.load(f)
    expect = case.get("expect") if isinstance(case, dict) else None
    if not isinstance(expect, dict) or not expect:
        sys.exit(f"{case_path}: no expectations (an `expect:` map)")
    answer = Answer(request, response, patched)
    failures = []
    for key, value in expect.items():
        check = CHECKS.get(key)
        try:
            if check is None:
                raise Failure(f"unknown expectation (known: {', '.join(CHECKS)})")
            check(answer, value)
        except Failure as failure:
            failures.append(f"  {key}: " + str(failure).replace("\n", "\n    "))
    if failures:
        print(f"{case_path} ({case.get('title', '')})")
        print("\n".join(failures))
        sys.exit(1)


if __name__ == "__main__":
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__)
    main(*sys.argv[1:])
