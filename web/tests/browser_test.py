#!/usr/bin/env python3
"""End-to-end test of the explain page (and its audit view) in headless Chromium.

    python3 web/tests/browser_test.py http://127.0.0.1:PORT/

Drives Debian's chromium through chromedriver over the W3C WebDriver protocol
with a small stdlib client (urllib + json): no Selenium, no driver download.
The page must be served (`make web-test` serves web/ and runs this). Expected
values are literal, read by hand from the fixtures the examples come from
(test_data/capi/v1beta2, test_data/xr; see web/examples/index.json).

Environment: CHROMIUM (default /usr/bin/chromium), CHROMEDRIVER
(default /usr/bin/chromedriver).
"""
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.error
import urllib.request

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")
ELEMENT = "element-6066-11e4-a52e-4f735466cecf"  # W3C web element identifier
EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples")
PAGE = None  # set from argv
DRIVER = None  # the WebDriver session, shared by all tests

# The network is closed: without these Chromium stalls on background fetches.
CHROME_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--window-size=1400,1800",
]

MD_1 = "MachineDeployment default/capi-quickstart-md-1 (cluster.x-k8s.io/v1beta2)"
MD_2 = "MachineDeployment default/capi-quickstart-md-2 (cluster.x-k8s.io/v1beta2)"

# The audit example: test_data/dumps/quickstart_v1beta2_drift.yaml, whose
# planted drift test_data/dumps/gen.py documents.
AUDIT_EXAMPLE = "audit-quickstart-v1beta2-drift"
# The first warning on an XR whose provider no profile lists (xr-generic).
FALLBACK_WARNING = ('cloud tags: provider "ibm" at spec.parameters.provider selects no tag profile, so the '
                    "strict generic profile applies; list the provider in a profile of cloudTags.profiles")
DRIFTED_MD = "MachineDeployment default/capi-quickstart-md-0-p6hg9 (cluster.x-k8s.io/v1beta2)"
DRIFTED_MS = "MachineSet default/capi-quickstart-md-1-x7k2p (cluster.x-k8s.io/v1beta2)"
DRIFTED_MACHINE = "Machine default/capi-quickstart-md-1-x7k2p-6nbqt (cluster.x-k8s.io/v1beta2)"
# In-place field drifts (docs/capi.md, "In-place fields: timeouts, minReadySeconds, readiness gates,
# taints"): a drain timeout, a missing readiness gate.
DRIFTED_FIELD_MS = "MachineSet default/capi-quickstart-md-0-p6hg9-v7bqn (cluster.x-k8s.io/v1beta2)"
DRIFTED_FIELD_MACHINE = "Machine default/capi-quickstart-md-1-x7k2p-9ttvz (cluster.x-k8s.io/v1beta2)"


class WebDriverError(Exception):
    pass


class WebDriver:
    """The handful of W3C WebDriver commands the test needs."""

    def __init__(self, url, capabilities):
        self.url = url
        value = self._call("POST", "/session", {"capabilities": capabilities})
        self.session = f"/session/{value['sessionId']}"

    def _call(self, method, path, body=None):
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            self.url + path, data=data, method=method,
            headers={"Content-Type": "application/json; charset=utf-8"})
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return json.load(response)["value"]
        except urllib.error.HTTPError as e:
            value = json.load(e).get("value", {})
            raise WebDriverError(f"{method} {path}: {value.get('error')}: {value.get('message')}") from None

    def cmd(self, method, path, body=None):
        return self._call(method, self.session + path, body)

    def quit(self):
        self.cmd("DELETE", "")

    def get(self, url):
        self.cmd("POST", "/url", {"url": url})

    def find(self, css):
        return self.cmd("POST", "/element", {"using": "css selector", "value": css})[ELEMENT]

    def find_all(self, css):
        return [e[ELEMENT] for e in self.cmd("POST", "/elements", {"using": "css selector", "value": css})]

    def text(self, element):
        return self.cmd("GET", f"/element/{element}/text")

    def click(self, element):
        self.cmd("POST", f"/element/{element}/click", {})

    def clear(self, element):
        self.cmd("POST", f"/element/{element}/clear", {})

    def send_keys(self, element, text):
        self.cmd("POST", f"/element/{element}/value", {"text": text})

    def script(self, source, *args):
        return self.cmd("POST", "/execute/sync", {"script": source, "args": list(args)})


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(condition, what, timeout=20.0):
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def example_text(name):
    with open(os.path.join(EXAMPLES, name), encoding="utf-8") as f:
        return f.read()


# --------------------------------------------------------------------- page helpers

def runs():
    return int(DRIVER.script("return Number(document.body.dataset.runs || 0)"))


def settled():
    """True when the page is idle: no debounced run pending."""
    return DRIVER.script("return document.getElementById('status').textContent") in (
        "up to date", "input error")


def after_run(action):
    """Performs `action`, then waits until the page has evaluated again."""
    before = runs()
    action()
    wait_for(lambda: runs() > before and settled(), "the page to re-run the policy")


def choose_example(example_id):
    if DRIVER.script("return document.getElementById('example').value") == example_id:
        # Choosing the selected option changes nothing: deselect it first.
        DRIVER.click(DRIVER.find('#example option[value=""]'))
    option = DRIVER.find(f'#example option[value="{example_id}"]')
    after_run(lambda: DRIVER.click(option))
    wait_for(lambda: DRIVER.script("return location.hash") == f"#{example_id}", "the example to load")


def paste(textarea_id, text):
    """Replaces a textarea's content by typing it, as a user's paste would."""
    element = DRIVER.find(f"#{textarea_id}")
    DRIVER.clear(element)
    after_run(lambda: DRIVER.send_keys(element, text))
    got = DRIVER.script(f"return document.getElementById('{textarea_id}').value")
    assert got == text, f"#{textarea_id} holds other text than typed"


def text_of(element_id):
    return DRIVER.text(DRIVER.find(f"#{element_id}"))


def patch(element_id="patch"):
    return json.loads(DRIVER.script(f"return document.getElementById('{element_id}').textContent"))


def explanation_rows(element_id="explanation"):
    """The explanation tables (of the explain view, or of `element_id`) as lists of cell texts."""
    return DRIVER.script(
        f"return [...document.querySelectorAll('#{element_id} tbody tr')]"
        ".map((tr) => [...tr.cells].map((td) => td.textContent));")


def hetzner_tag(tag_key):
    """A tag's cell under the hetzner profile: the key, and the caution that
    Hetzner's API refuses the ':' of the prefix plexsphere:."""
    return (f'{tag_key} (fails at the provider: "{tag_key}" holds \':\': Hetzner\'s API refuses \':\' in '
            "label keys, and '/' but once after a DNS-name prefix; set a prefix without it "
            "(cloudTags.prefix, or a profile of your own listing hetzner))")


def explanation_text():
    return DRIVER.script("return document.getElementById('explanation-text').textContent")


def profile_line():
    """The explanation's "Profile: <origin> (<why>)" line, and its <origin> alone."""
    return DRIVER.script(
        "const p = [...document.querySelectorAll('#explanation p.rule')]"
        ".find((e) => e.textContent.startsWith('Profile: '));"
        "return p ? [p.textContent, p.querySelector('strong').textContent] : null;")


def no_tag_can_propagate_shown():
    """The cloud-tag section's "no tag can ever propagate" paragraphs' texts."""
    return DRIVER.script(
        "return [...document.querySelectorAll('#explanation p.skipped')].map((p) => p.textContent);")


def error_shown(element_id="error"):
    return DRIVER.script(f"const e = document.getElementById('{element_id}'); return e.hidden ? null : e.textContent")


def audits():
    return int(DRIVER.script("return Number(document.body.dataset.audits || 0)"))


def run_audit():
    """Clicks Audit and waits until the page has rendered the report."""
    before = audits()
    DRIVER.click(DRIVER.find("#audit-run"))
    wait_for(lambda: audits() > before, "the page to audit the dump")


def tree_nodes(css="button.node"):
    """(id, text) of the audit tree's objects matching `css`, in tree order."""
    return [tuple(n) for n in DRIVER.script(
        f"return [...document.querySelectorAll('#audit-tree {css}')]"
        ".map((b) => [b.dataset.id, b.textContent]);")]


def visible(element_id):
    return DRIVER.script(f"return document.getElementById('{element_id}').offsetParent !== null")


# ---------------------------------------------------------------------------- tests

class ExplainPage(unittest.TestCase):
    maxDiff = None

    def setUp(self):
        DRIVER.get(PAGE)
        wait_for(lambda: DRIVER.script("return document.body.dataset.ready === 'true'"),
                 "the page to load the policy module and the examples")

    def test_1_machineset_example(self):
        choose_example("machineset")
        self.assertIsNone(error_shown())
        self.assertEqual(text_of("decision"), "Allowed, with 7 patch operations")
        self.assertEqual(
            DRIVER.text(DRIVER.find("#explanation .rule")),
            "Rule: MachineSet from " + MD_1 + " (mirrors CAPI machinedeployment computeDesiredMS"
            " + mdutil MachineSetAnnotationsFromMachineDeployment)")
        rows = explanation_rows()
        # metadata.labels, then spec.template.metadata.labels: the same four keys.
        labels = [
            ["cluster.x-k8s.io/cluster-name", "kept: CAPI bookkeeping", 'the child keeps "capi-quickstart"'],
            ["cluster.x-k8s.io/deployment-name", "kept: CAPI bookkeeping", 'the child keeps "capi-quickstart-md-1"'],
            ["node-role.kubernetes.io/worker", "flows (added)", f'= "" from {MD_1} spec.template.metadata.labels'],
            ["nodepool", "flows (added)", f'= "pool1" from {MD_1} spec.template.metadata.labels'],
        ]
        never = ("never copied along this path (machinedeployment computeDesiredMS"
                 " + mdutil MachineSetAnnotationsFromMachineDeployment)")
        self.assertEqual(rows, [
            ["cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size", "flows (added)",
             f'= "5" from {MD_1} metadata.annotations'],
            ["cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size", "flows (added)",
             f'= "1" from {MD_1} metadata.annotations'],
            ["kubectl.kubernetes.io/last-applied-configuration", "not propagated", never],
            ["machinedeployment.clusters.x-k8s.io/revision", "not propagated", never],
            *labels,
            *labels,
            ["pre-drain.delete.hook.machine.cluster.x-k8s.io/wait-for-volumes", "flows (added)",
             f'= "storage-operator" from {MD_1} spec.template.metadata.annotations'],
            # The one in-place field md-1 sets, which the MachineSet already holds.
            ["spec.deletion.order", "unchanged", f'= "Random" from {MD_1} spec.deletion.order (child had "Random")'],
        ])
        self.assertIn(f'"nodepool" = "pool1": flows from {MD_1} spec.template.metadata.labels (added)',
                      explanation_text())
        self.assertEqual(patch(), [
            {"op": "add", "path": "/metadata/annotations/cluster.x-k8s.io~1cluster-api-autoscaler-node-group-max-size", "value": "5"},
            {"op": "add", "path": "/metadata/annotations/cluster.x-k8s.io~1cluster-api-autoscaler-node-group-min-size", "value": "1"},
            {"op": "add", "path": "/metadata/labels/node-role.kubernetes.io~1worker", "value": ""},
            {"op": "add", "path": "/metadata/labels/nodepool", "value": "pool1"},
            {"op": "add", "path": "/spec/template/metadata/annotations",
             "value": {"pre-drain.delete.hook.machine.cluster.x-k8s.io/wait-for-volumes": "storage-operator"}},
            {"op": "add", "path": "/spec/template/metadata/labels/node-role.kubernetes.io~1worker", "value": ""},
            {"op": "add", "path": "/spec/template/metadata/labels/nodepool", "value": "pool1"},
        ])
        # The MachineDeployment's own label environment=staging is not a template label.
        self.assertNotIn("environment", text_of("patch"))
        self.assertEqual(text_of("warnings"), "none")

    def test_1b_machineset_in_place_fields(self):
        choose_example("machineset-fields")
        self.assertIsNone(error_shown())
        self.assertEqual(text_of("decision"), "Allowed, with 3 patch operations")
        headings = DRIVER.script("return [...document.querySelectorAll('#explanation h3')].map((h) => h.textContent)")
        self.assertIn("In-place fields", headings)
        rows = [r for r in explanation_rows() if r[0].startswith("spec.")]
        gate = '{"conditionType":"network.platform.example.com/CNIReady","polarity":"Positive"}'
        taint = ('{"effect":"NoSchedule","key":"workload.example.com/dedicated","propagation":"Always",'
                 '"value":"%s"}')
        self.assertEqual(rows, [
            ["spec.template.spec.minReadySeconds", "corrected",
             f"= 30 from {MD_2} spec.template.spec.minReadySeconds (child had 10)"],
            ["spec.deletion.order", "unchanged", f'= "Oldest" from {MD_2} spec.deletion.order (child had "Oldest")'],
            ["spec.machineNaming", "corrected",
             '= {"template":"{{ .machineSet.name }}-{{ .random }}"} from ' + MD_2 + ' spec.machineNaming'
             ' (child had {"template":"{{ .machineSet.name }}-old-{{ .random }}"})'],
            ['spec.template.spec.readinessGates[conditionType="network.platform.example.com/CNIReady"]', "unchanged",
             f"= {gate} from {MD_2} spec.template.spec.readinessGates (child had {gate})"],
            ["spec.template.spec.deletion.nodeDrainTimeoutSeconds", "unchanged",
             f"= 600 from {MD_2} spec.template.spec.deletion.nodeDrainTimeoutSeconds (child had 600)"],
            ["spec.template.spec.deletion.nodeDeletionTimeoutSeconds", "unchanged",
             f"= 30 from {MD_2} spec.template.spec.deletion.nodeDeletionTimeoutSeconds (child had 30)"],
            ['spec.template.spec.taints[key="workload.example.com/dedicated",effect="NoSchedule"]', "corrected",
             f"= {taint % 'payments'} from {MD_2} spec.template.spec.taints (child had {taint % 'batch'})"],
        ])
        self.assertIn("not set by the parent, so the child's value stays: "
                      "spec.template.spec.deletion.nodeVolumeDetachTimeoutSeconds", text_of("explanation"))
        self.assertEqual(patch(), [
            {"op": "replace", "path": "/spec/machineNaming/template", "value": "{{ .machineSet.name }}-{{ .random }}"},
            {"op": "replace", "path": "/spec/template/spec/minReadySeconds", "value": 30},
            {"op": "replace", "path": "/spec/template/spec/taints/0/value", "value": "payments"},
        ])

    def test_2_xr_skipped_labels(self):
        choose_example("xr-hetzner")
        self.assertIn(["acme:checkout/on call", "annotation cloud-tags.plexsphere.io/labels",
                       "skipped: key-character-class", "the tag key contains ' ' (U+0020)"],
                      explanation_rows())
        self.assertIn(["platform/env", "metadata.labels", "tag", hetzner_tag("plexsphere:platform/env")],
                      explanation_rows())
        self.assertEqual(text_of("warnings"),
                         'cloud tag skipped: label "acme:checkout/on call" did not become tag '
                         '"plexsphere:acme:checkout/on call" on provider profile hetzner: '
                         "key-character-class (the tag key contains ' ' (U+0020))")
        self.assertEqual(patch(), [
            {"op": "add", "path": "/metadata/annotations/cloud-tags.plexsphere.io~1skipped",
             "value": '[{"qualifiedKey":"acme:checkout/on call","tagKey":"plexsphere:acme:checkout/on call",'
                      '"provider":"hetzner","reason":"key-character-class"}]'},
            {"op": "add", "path": "/spec/cloudTags",
             "value": {"plexsphere:acme:checkout/owner": "Zoë Dupré",
                       "plexsphere:platform/env": "prod", "plexsphere:platform/team": "payments"}},
        ])

        # The other providers' examples, one skip reason each at least.
        expected = {
            "xr-aws": [
                ["aws:cost-center", "skipped: reserved-prefix", 'the key starts with the reserved prefix "aws:"'],
                ["acme:checkout/owner,backup", "skipped: key-character-class", "the tag key contains ',' (U+002C)"],
            ],
            "xr-openstack": [
                ["acme:checkout/motto", "skipped: value-too-long", "the value is 258 bytes, the limit is 255"],
                ["acme:checkout/on\tcall", "skipped: key-character-class", "the tag key contains '\\t' (U+0009)"],
            ],
            "xr-generic": [
                ["acme:checkout/on-call@night", "skipped: key-character-class", "the tag key contains '@' (U+0040)"],
                ["acme:checkout/owner+backup", "skipped: key-character-class", "the tag key contains '+' (U+002B)"],
            ],
        }
        profiles = {"xr-aws": "aws", "xr-openstack": "openstack", "xr-generic": "generic"}
        for example_id, skips in expected.items():
            with self.subTest(example_id):
                choose_example(example_id)
                rows = [[r[0], r[2], r[3]] for r in explanation_rows()]
                for skip in skips:
                    self.assertIn(skip, rows)
                self.assertIn(f"Cloud tags: profile {profiles[example_id]}", text_of("explanation"))
                warnings = DRIVER.find_all("#warnings li:not(.none)")
                # An unknown provider's fallback to generic is warned of first.
                fallback = 1 if example_id == "xr-generic" else 0
                self.assertEqual(len(warnings), len(skips) + fallback)
                if fallback:
                    self.assertEqual(DRIVER.text(warnings[0]), FALLBACK_WARNING)
                skipped_op = patch()[0]
                self.assertEqual(skipped_op["path"], "/metadata/annotations/cloud-tags.plexsphere.io~1skipped")
                self.assertEqual(sorted(s["qualifiedKey"] for s in json.loads(skipped_op["value"])),
                                 sorted(s[0] for s in skips))

    def test_2a_infra_tags(self):
        # Cloud tags on CAPI infrastructure (cloudTags.capiInfrastructure): the
        # Cluster's labels on an AWSCluster under profile capa, its non-ASCII
        # value skipped; an OpenStackMachine's CAPI metadata and CAPO
        # serverMetadata in one patch.
        cluster = "Cluster default/aws-prod (cluster.x-k8s.io/v1beta2)"
        choose_example("infra-awscluster")
        self.assertIsNone(error_shown())
        self.assertIn("Cloud tags: profile capa", text_of("explanation"))
        rows = explanation_rows()
        self.assertIn(["environment", f"{cluster} metadata.labels", "tag", "plexsphere:environment"], rows)
        self.assertIn(["acme:billing/owner", f"{cluster} annotation cloud-tags.plexsphere.io/labels",
                       "skipped: value-character-class", "the value contains 'ü' (U+00FC)"], rows)
        self.assertEqual(len(DRIVER.find_all("#warnings li:not(.none)")), 1)
        self.assertEqual(sorted(op["path"] for op in patch()), [
            "/metadata/annotations",
            "/spec/additionalTags/plexsphere:acme.io~1team",
            "/spec/additionalTags/plexsphere:cost-center",
            "/spec/additionalTags/plexsphere:environment",
        ])

        choose_example("infra-openstackmachine")
        self.assertIsNone(error_shown())
        self.assertIn("Cloud tags: profile capo", text_of("explanation"))
        self.assertIn({"op": "add", "path": "/spec/serverMetadata/1",
                       "value": {"key": "plexsphere:cost-center", "value": "cc-0042"}}, patch())
        self.assertIn({"op": "add", "path": "/metadata/labels/nodepool", "value": "md-0"}, patch())

    def test_2b_xr_profile_origin_and_why(self):
        # Which profile applied and why (tags.rs why_profile; docs/settings.md,
        # "User-defined tag profiles"): built-in, fallback, user-defined.
        expected = {
            "xr-aws": ("built-in", 'provider "aws" selects the built-in profile aws'),
            "xr-generic": ("fallback", 'provider "ibm" is listed by no profile, so the fallback generic applies'),
        }
        for example_id, (origin, why) in expected.items():
            with self.subTest(example_id):
                choose_example(example_id)
                self.assertEqual(profile_line(), [f"Profile: {origin} ({why})", origin])
                self.assertIn(f"  profile {origin}: {why}\n", explanation_text())
                self.assertEqual(no_tag_can_propagate_shown(), [])

        # The README's ready-made gcp-labels profile (test_data/xr/settings_ready_profiles.json):
        # gcp is listed in profiles[1].providers; ':' of "plexsphere:" is refused, so every
        # opted-in label is skipped and the page says why once.
        choose_example("xr-gcp-labels")
        self.assertIsNone(error_shown())
        settings = json.loads(example_text("xr-gcp-labels.settings.json"))
        self.assertEqual(settings["cloudTags"]["profiles"][1]["name"], "gcp-labels")
        self.assertIn("gcp", settings["cloudTags"]["profiles"][1]["providers"])
        why = 'provider "gcp" is listed in cloudTags.profiles[1].providers'
        self.assertEqual(profile_line(), [f"Profile: user-defined ({why})", "user-defined"])
        self.assertIn("Cloud tags: profile gcp-labels", text_of("explanation"))
        self.assertIn('provider: spec.parameters.provider = "gcp"', text_of("explanation"))
        never = ("no tag can ever propagate under provider profile gcp-labels: its key characters"
                 ' (lowercase-letters, digits and "_-") refuse ":" of the mandated prefix "plexsphere:"')
        self.assertEqual(no_tag_can_propagate_shown(), [never])
        self.assertIn(f"  profile user-defined: {why}\n  {never}\n", explanation_text())
        colon = ["skipped: key-character-class", "the tag key contains ':' (U+003A)"]
        self.assertEqual(explanation_rows(), [
            ["acme:cost-center", "annotation cloud-tags.plexsphere.io/labels", *colon],
            ["acme:owner", "annotation cloud-tags.plexsphere.io/labels", *colon],
            ["platform/env", "metadata.labels", *colon],
            ["platform/team", "metadata.labels", *colon],
        ])
        # One summary warning, not one per label; the skip annotation lists all four.
        self.assertEqual(text_of("warnings"),
                         f"cloud tags skipped: {never}; 4 opted-in label(s) skipped,"
                         " each recorded in annotation cloud-tags.plexsphere.io/skipped")
        self.assertEqual(text_of("decision"), "Allowed, with 1 patch operation")
        skip = '{"qualifiedKey":"%s","tagKey":"plexsphere:%s","provider":"gcp-labels","reason":"key-character-class"}'
        keys = ["acme:cost-center", "acme:owner", "platform/env", "platform/team"]
        self.assertEqual(patch(), [
            {"op": "add", "path": "/metadata/annotations/cloud-tags.plexsphere.io~1skipped",
             "value": "[" + ",".join(skip % (k, k) for k in keys) + "]"},
        ])

    def test_3_pasted_edits_update_the_result(self):
        # A MachineSet whose nodepool label drifted, with a label of its own.
        choose_example("machineset")
        machineset = json.loads(example_text("machineset.object.json"))
        machineset["metadata"]["labels"]["nodepool"] = "pool0"
        machineset["metadata"]["labels"]["owner"] = "team-x"
        paste("object", json.dumps(machineset, indent=2))
        self.assertIn(["nodepool", "flows (corrected)", f'= "pool1" from {MD_1} spec.template.metadata.labels'],
                      explanation_rows())
        ops = patch()
        self.assertIn({"op": "replace", "path": "/metadata/labels/nodepool", "value": "pool1"}, ops)
        self.assertNotIn("owner", text_of("patch"))
        self.assertEqual(text_of("decision"), "Allowed, with 7 patch operations")

        # The parent's new value flows on the next run.
        parents = example_text("machineset.parents.yaml").replace("nodepool: pool1", "nodepool: pool9")
        DRIVER.script("const p = document.getElementById('parents');"
                      "p.value = arguments[0]; p.dispatchEvent(new Event('input'));", parents)
        wait_for(lambda: '"pool9"' in text_of("patch"), "the patch to show the parent's new value")
        self.assertIn({"op": "replace", "path": "/metadata/labels/nodepool", "value": "pool9"}, patch())

        # An XR with an edited label value and a new label, then opting it in.
        choose_example("xr-hetzner")
        xr = json.loads(example_text("xr-hetzner.object.json"))
        xr["metadata"]["labels"]["platform/env"] = "qa"
        xr["metadata"]["labels"]["platform/tier"] = "gold"
        paste("object", json.dumps(xr, indent=2, ensure_ascii=False))
        self.assertIn(["platform/tier", "metadata.labels", "not opted in", "not in cloudTags.propagatingLabels"],
                      explanation_rows())
        cloud_tags = next(op for op in patch() if op["path"] == "/spec/cloudTags")["value"]
        self.assertEqual(cloud_tags["plexsphere:platform/env"], "qa")
        self.assertNotIn("plexsphere:platform/tier", cloud_tags)

        paste("settings", "cloudTags:\n  propagatingLabels: [platform/env, platform/tier]\n")
        self.assertIn(["platform/tier", "metadata.labels", "tag", hetzner_tag("plexsphere:platform/tier")],
                      explanation_rows())
        self.assertEqual(next(op for op in patch() if op["path"] == "/spec/cloudTags")["value"],
                         {"plexsphere:platform/env": "qa", "plexsphere:platform/tier": "gold"})

        # YAML works as well as JSON; the operation select re-runs.
        choose_example("machineset")
        paste("object", "apiVersion: cluster.x-k8s.io/v1beta2\nkind: MachineSet\nmetadata:\n"
                        "  name: ms-yaml\n  namespace: default\n  labels:\n    nodepool: pool7\n"
                        "  ownerReferences:\n  - apiVersion: cluster.x-k8s.io/v1beta2\n"
                        "    kind: MachineDeployment\n    name: capi-quickstart-md-1\n"
                        "    uid: 4b691dc1-e237-5ec3-bf12-a86b6e2ee54a\n    controller: true\n")
        self.assertIn({"op": "replace", "path": "/metadata/labels/nodepool", "value": "pool1"}, patch())
        operation = DRIVER.find('#operation option[value="DELETE"]')
        after_run(lambda: DRIVER.click(operation))
        self.assertEqual(text_of("decision"), "Allowed, unchanged")
        self.assertEqual(text_of("patch"), "[]")
        self.assertIn("DELETE requests are allowed unchanged", text_of("explanation"))

    def test_4_invalid_input_shows_an_error(self):
        choose_example("machineset")
        paste("object", "kind: [\n")
        self.assertEqual(error_shown(), "object: not valid YAML or JSON: did not find expected node content"
                                        " at line 2 column 1, while parsing a flow node")
        self.assertEqual(text_of("decision"), "not evaluated: fix the input")
        self.assertEqual(text_of("patch"), "")
        self.assertEqual(explanation_rows(), [])

        paste("object", '{"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": ')
        self.assertTrue(error_shown().startswith("object: not valid YAML or JSON: EOF while parsing a value"),
                        error_shown())

        # The module keeps working after errors: a valid object evaluates again.
        paste("object", example_text("machineset.object.json"))
        self.assertIsNone(error_shown())
        self.assertEqual(text_of("decision"), "Allowed, with 7 patch operations")

        # Settings are checked by the policy's own code.
        paste("settings", '{"cloudTags": {"propagatingLabels": ["platform/origin"]}}')
        self.assertEqual(error_shown(), 'settings are not valid: cloudTags.propagatingLabels[0]: "platform/origin"'
                                        " is a seeded platform label and can never be opted into cloud-tag"
                                        " propagation; remove it from the list")

    def test_5_audit_the_example_dump(self):
        DRIVER.click(DRIVER.find("#view-audit"))
        self.assertTrue(visible("dump"))
        self.assertFalse(visible("object"))
        self.assertTrue(visible("settings"))

        DRIVER.click(DRIVER.find("#audit-example"))
        dump = example_text(f"{AUDIT_EXAMPLE}.dump.yaml")
        wait_for(lambda: DRIVER.script("return document.getElementById('dump').value") == dump,
                 "the example dump to load")
        run_audit()
        self.assertIsNone(error_shown("audit-error"))
        self.assertEqual(text_of("audit-summary"), "27 objects audited, 5 deviate"
                         " (2 more not evaluated: the policy does not act on their kind)")

        # Every object is in the tree; the five drifted ones are marked, as the CLI marks them.
        nodes = tree_nodes()
        self.assertEqual(len(nodes), 29)
        self.assertEqual(nodes[0], ("ClusterClass default/quick-start (cluster.x-k8s.io/v1beta2)",
                                    "ClusterClass default/quick-start (cluster.x-k8s.io/v1beta2): not evaluated"))
        self.assertEqual(tree_nodes("button.deviates"), [
            (DRIFTED_MD, f"{DRIFTED_MD}: ✗ DEVIATES"),
            (DRIFTED_FIELD_MS, f"{DRIFTED_FIELD_MS}: ✗ DEVIATES"),
            (DRIFTED_MS, f"{DRIFTED_MS}: ✗ DEVIATES"),
            (DRIFTED_MACHINE, f"{DRIFTED_MACHINE}: ✗ DEVIATES;"
                              " Node labels: node-role.kubernetes.io/worker; Node annotations: none"),
            (DRIFTED_FIELD_MACHINE, f"{DRIFTED_FIELD_MACHINE}: ✗ DEVIATES;"
                                    " Node labels: node-role.kubernetes.io/worker; Node annotations: none"),
        ])
        self.assertEqual(tree_nodes("button.rejected"), [])
        self.assertEqual(len(tree_nodes("button.compliant")), 22)
        # The drifted Machine sits under its MachineSet.
        self.assertEqual(DRIVER.script(
            "return document.querySelector(`#audit-tree button[data-id='${arguments[0]}']`)"
            ".closest('ul').closest('li').querySelector('button').dataset.id", DRIFTED_MACHINE), DRIFTED_MS)

        # Clicking a drifted object shows its deviation, explanation and patch.
        self.assertFalse(visible("audit-detail"))
        DRIVER.click(DRIVER.find(f"#audit-tree button[data-id='{DRIFTED_MS}']"))
        self.assertTrue(visible("audit-detail"))
        self.assertEqual(text_of("audit-verdict"), f"{DRIFTED_MS}: ✗ DEVIATES")
        self.assertEqual(text_of("audit-deviations"), 'metadata.labels: missing "nodepool" (expected "pool1")')
        self.assertEqual(text_of("audit-lookups"), f"{MD_1}: found")
        self.assertEqual(patch("audit-patch"), [{"op": "add", "path": "/metadata/labels/nodepool", "value": "pool1"}])
        rows = explanation_rows("audit-explanation")
        self.assertIn(["nodepool", "flows (added)", f'= "pool1" from {MD_1} spec.template.metadata.labels'], rows)
        self.assertIn(["nodepool", "flows (unchanged)", f'= "pool1" from {MD_1} spec.template.metadata.labels'], rows)
        self.assertIn(f"Rule: MachineSet from {MD_1}", text_of("audit-explanation"))

        DRIVER.click(DRIVER.find(f"#audit-tree button[data-id='{DRIFTED_MACHINE}']"))
        self.assertEqual(text_of("audit-deviations"), 'metadata.labels: "nodepool" is "pool0" (expected "pool1")')
        self.assertEqual(patch("audit-patch"), [{"op": "replace", "path": "/metadata/labels/nodepool", "value": "pool1"}])
        self.assertIn(["nodepool", "flows (corrected)",
                       '= "pool1" from MachineSet default/capi-quickstart-md-1-x7k2p (cluster.x-k8s.io/v1beta2)'
                       ' spec.template.metadata.labels'], explanation_rows("audit-explanation"))
        self.assertEqual(len(DRIVER.find_all("#audit-tree button.selected")), 1)

        # A field drift: the value found, the one expected and where it comes from.
        DRIVER.click(DRIVER.find(f"#audit-tree button[data-id='{DRIFTED_FIELD_MS}']"))
        self.assertEqual(text_of("audit-deviations"),
                         "spec.template.spec.deletion.nodeDrainTimeoutSeconds: is 300 (expected 600, from"
                         f" {DRIFTED_MD} spec.template.spec.deletion.nodeDrainTimeoutSeconds)")
        self.assertEqual(patch("audit-patch"), [
            {"op": "replace", "path": "/spec/template/spec/deletion/nodeDrainTimeoutSeconds", "value": 600}])

        # A compliant object: nothing to patch.
        compliant = tree_nodes("button.compliant")[0][0]
        DRIVER.click(DRIVER.find(f"#audit-tree button[data-id='{compliant}']"))
        self.assertEqual(text_of("audit-deviations"), "none")
        self.assertEqual(patch("audit-patch"), [])

        # Bad input names the document, in the CLI's words.
        DRIVER.script("document.getElementById('dump').value = arguments[0];", "kind: List\nitems: []\n---\nkind: [\n")
        run_audit()
        self.assertTrue(error_shown("audit-error").startswith("dump document 2: not valid YAML or JSON: "),
                        error_shown("audit-error"))
        self.assertEqual(text_of("audit-summary"), "not audited: fix the input")
        self.assertEqual(tree_nodes(), [])

        # The explain view is still there, with the shared settings.
        DRIVER.click(DRIVER.find("#view-explain"))
        self.assertTrue(visible("object"))
        self.assertFalse(visible("dump"))
        self.assertIsNone(error_shown())

    def test_6_an_audit_example_in_the_address_opens_the_audit_view(self):
        # A query string makes it a new page load, not a jump within this one.
        DRIVER.get(f"{PAGE}?view#{AUDIT_EXAMPLE}")
        wait_for(lambda: DRIVER.script("return document.body.dataset.ready === 'true'") and audits() == 1,
                 "the page to load and audit the example dump")
        self.assertEqual(DRIVER.script("return document.body.dataset.view"), "audit")
        self.assertTrue(visible("dump"))
        self.assertEqual([n[0] for n in tree_nodes("button.deviates")],
                         [DRIFTED_MD, DRIFTED_FIELD_MS, DRIFTED_MS, DRIFTED_MACHINE, DRIFTED_FIELD_MACHINE])


def main():
    global PAGE, DRIVER
    if len(sys.argv) < 2:
        sys.exit(__doc__.strip().splitlines()[2].strip())
    PAGE = sys.argv[1]
    for tool in (CHROMIUM, CHROMEDRIVER):
        if not os.path.exists(tool):
            sys.exit(f"browser_test: {tool} not found; apt-get install chromium chromium-driver")

    profile = tempfile.mkdtemp(prefix="explain-web-chromium-")
    port = free_port()
    log = open(os.path.join(profile, "chromedriver.log"), "w")
    driver = subprocess.Popen([CHROMEDRIVER, f"--port={port}", "--allowed-ips=127.0.0.1"],
                              stdout=log, stderr=subprocess.STDOUT)
    try:
        url = f"http://127.0.0.1:{port}"
        wait_for(lambda: _ready(url), "chromedriver to start")
        DRIVER = WebDriver(url, {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {"binary": CHROMIUM, "args": CHROME_ARGS + [f"--user-data-dir={profile}/profile"]},
        }})
        try:
            program = unittest.main(argv=[sys.argv[0], "-v"], exit=False)
        finally:
            DRIVER.quit()
        return 0 if program.result.wasSuccessful() else 1
    finally:
        driver.terminate()
        try:
            driver.wait(timeout=10)
        except subprocess.TimeoutExpired:
            driver.kill()
        log.close()
        shutil.rmtree(profile, ignore_errors=True)


def _ready(url):
    try:
        with urllib.request.urlopen(url + "/status", timeout=2) as response:
            return json.load(response)["value"]["ready"]
    except OSError:
        return False


if __name__ == "__main__":
    sys.exit(main())
