#!/usr/bin/env python3
"""Checks the user docs (README.md and docs/*.md) against the repository.

- README.md is at most 250 lines: a ten-minute read; the depth is in docs/.
- Every relative link of README.md, docs/*.md and BENCHMARKS.md names a file
  that exists, and a heading that exists when it has an #anchor.
- Every file git tracks (crds/ aside) cites only sections that exist: a
  Markdown file followed by a quoted section title (`README, "Settings"`,
  `docs/capi.md's "Machine → Node"`, `docs/settings.md ("User-defined tag
  profiles")`, across comment line breaks) names one of its headings, or the
  start of one up to a colon or a parenthesis; a `docs/….md#anchor` outside
  a Markdown link names a heading's anchor.
- The RBAC follows the grants: examples/capi-rbac.yaml's ClusterRole gives
  `get`, and nothing else, on exactly the kinds in the contextAwareResources
  of policy-metadata.yml and of the CAPI and validate-mode example policies,
  and examples/mr-rbac.yaml's on exactly the XR kinds in those of
  examples/mr-policy.yaml; and every sentence of the docs, the examples and
  the metadata that tells to add a kind to `contextAwareResources` also
  names the ClusterRole.
- The fixer's RBAC follows the rules: examples/fixer-rbac.yaml's ClusterRole
  (what `policy-runner audit --cluster --fix` needs) gives `get`, `list` and
  `patch` on every resource the rules of the CAPI, XR and MR example policies
  match, `get` on the kinds of their contextAwareResources no rule matches
  and on clusteradmissionpolicies, and nothing else: no other verb or
  resource, no wildcard. A rule matching `*` (the MR example's) is read
  with its matchConditions; the ClusterRole names kinds it matches, at
  least one, with the same three verbs.
- The fixer's CronJob fits its RBAC: examples/fixer-cronjob.yaml holds one
  CronJob, in a Namespace fixer-rbac.yaml defines with Pod Security
  `restricted` enforced, as the ServiceAccount fixer-rbac.yaml binds; its
  image is the runner's (policy-metadata.yml's ociUrl + `-runner`) at
  policy-metadata.yml's version; each `--policy-name` names a policy of
  FIXER_POLICIES whose rules match no `*`; its podFailurePolicy names its
  container.
- The list of what `make check` runs, in docs/development.md's table and in
  README.md's sentence, is the Makefile's `check:` prerequisites, in order.
- Every shell block of README.md and docs/*.md (info string `console`, `sh`,
  `bash` or `shell`) runs, or says why it cannot after the language:
    console             run with bash -e -o pipefail; must exit 0
    console exit=N      run; must exit N (an audit that finds drift exits 1)
    console cluster     needs a Kubernetes cluster: not run
    console registry    needs a package or OCI registry: not run
    console slow        `make` lines that build or test for minutes: each is
                        checked with `make -n` (the target exists)
  Blocks run in a scratch directory that links the repository's top-level
  entries, so the files they write stay out of the checkout. They need
  target/host/policy-runner and annotated-policy.wasm (`make check-docs`
  builds both); `kwctl` is the runner when no kwctl is installed.

Usage: python3 scripts/check_docs.py [--no-run]   (--no-run: skip running blocks)
"""

import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
README = "README.md"
MAX_README_LINES = 250
SHELLS = {"console", "sh", "bash", "shell"}
NOT_RUN = {"cluster", "registry"}
RUNNER = "target/host/policy-runner"
MODULE = "annotated-policy.wasm"
BLOCK_TIMEOUT = 300


def read(path):
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        return f.read()


def doc_files():
    docs = sorted(f"docs/{name}" for name in os.listdir(os.path.join(ROOT, "docs")) if name.endswith(".md"))
    return [README] + docs


def fenced_blocks(text):
    """(line number, info string, body) of every fenced code block."""
    blocks, lines, i = [], text.split("\n"), 0
    while i < len(lines):
        m = re.match(r"^(\s*)(`{3,})(.*)$", lines[i])
        if not m:
            i += 1
            continue
        indent, fence, info = m.group(1), m.group(2), m.group(3).strip()
        start, body = i + 1, []
        i += 1
        while i < len(lines) and not re.match(rf"^\s*{fence}\s*$", lines[i]):
            line = lines[i]
            body.append(line[len(indent):] if line.startswith(indent) else line)
            i += 1
        blocks.append((start, info, "\n".join(body) + "\n"))
        i += 1
    return blocks


def prose(text, code_spans=False):
    """The text outside fenced blocks, and outside inline code spans unless
    `code_spans` (a heading's anchor keeps their text)."""
    out, in_block = [], False
    for line in text.split("\n"):
        if re.match(r"^\s*`{3,}", line):
            in_block = not in_block
            out.append("")
            continue
        if in_block:
            out.append("")
        else:
            out.append(line if code_spans else re.sub(r"`+[^`]*`+", "", line))
    return "\n".join(out)


def slug(heading):
    """GitHub's anchor for a heading."""
    text = re.sub(r"`", "", heading.strip().lower())
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path):
    seen, out = {}, set()
    for line in prose(read(path), code_spans=True).split("\n"):
        m = re.match(r"^#{1,6}\s+(.*)$", line)
        if not m:
            continue
        base = slug(m.group(1))
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return out


def check_links(paths, problems):
    for path in paths:
        for lineno, line in enumerate(prose(read(path)).split("\n"), 1):
            for target in re.findall(r"\]\(([^)\s]+)\)", line):
                if re.match(r"^[a-z]+:", target):
                    continue
                file_part, _, anchor = target.partition("#")
                resolved = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
                if resolved.startswith(".."):
                    problems.append(f"{path}:{lineno}: {target} leaves the repository")
                    continue
                if not os.path.exists(os.path.join(ROOT, resolved)):
                    problems.append(f"{path}:{lineno}: {target}: {resolved} does not exist")
                    continue
                if anchor and resolved.endswith(".md") and anchor not in anchors(resolved):
                    problems.append(f"{path}:{lineno}: {target}: {resolved} has no heading #{anchor}")


# A Markdown file as prose and comments name it: README (the top-level one),
# README.md, BENCHMARKS.md, docs/capi.md, … Not part of a longer path or URL
# (`$source/blob/v1/docs/releasing.md`).
CITED_FILE = r"(?<![\w$/.{}:-])(?P<file>README(?:\.md)?|[\w./-]*\.md)"
# `FILE, "Title"`, `FILE's "Title"`, `FILE "Title"`, `FILE ("Title")`: a title
# starts with a capital or a code span and holds no shell expansion.
SECTION_REF = re.compile(CITED_FILE + r"(?:'s)?,?\s*\(?\s*[\"“](?P<title>[A-Z`][^\"”$]{0,119}?)[\"”]")
ANCHOR_REF = re.compile(CITED_FILE + r"#(?P<anchor>[\w-]+)")
# A line break and the comment marker that continues the text on the next
# line (`#`, `//`, `///`, `//!`, ` *`, `--`), read as one space.
CONTINUATION = re.compile(r"\n[ \t]*(?:#+|//[/!]?|\*|--)?[ \t]*")


def tracked_text_files():
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, check=True, stdout=subprocess.PIPE).stdout
    for path in listed.decode().split("\0"):
        if not path or path.startswith("crds/") or not os.path.isfile(os.path.join(ROOT, path)):
            continue
        try:
            yield path, read(path)
        except UnicodeDecodeError:
            continue


def heading_texts(path):
    """Every heading of the Markdown file at `path`, as plain lower-case text."""
    out = []
    for line in prose(read(path), code_spans=True).split("\n"):
        m = re.match(r"^#{1,6}\s+(.*)$", line)
        if m:
            out.append(plain(m.group(1)))
    return out


def plain(title):
    title = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", title)
    return " ".join(title.replace("`", "").split()).rstrip(".").lower()


def cited_file(source, name):
    """The repository path a citation in `source` means, or None."""
    name = "README.md" if name == "README" else name
    for candidate in (name, os.path.normpath(os.path.join(os.path.dirname(source), name))):
        if os.path.isfile(os.path.join(ROOT, candidate)):
            return candidate
    return None


def check_section_references(problems):
    headings = {}
    for path, text in tracked_text_files():
        joined = CONTINUATION.sub(" ", text)
        for m in SECTION_REF.finditer(joined):
            where = f"{path}:{text.count(chr(10), 0, _offset(text, m.start())) + 1}"
            target = cited_file(path, m.group("file"))
            title = " ".join(m.group("title").split())
            if target is None:
                problems.append(f"{where}: cites {m.group('file')}, \"{title}\": no such file")
                continue
            if target not in headings:
                headings[target] = heading_texts(target)
            wanted = plain(title)
            if not any(h == wanted or h.startswith((wanted + ":", wanted + " (")) for h in headings[target]):
                problems.append(f"{where}: cites {target}, \"{title}\": {target} has no such section")
        if path.endswith(".md"):
            continue  # its links are check_links'
        for m in ANCHOR_REF.finditer(text):
            target = cited_file(path, m.group("file"))
            if target and m.group("anchor") not in anchors(target):
                line = text.count("\n", 0, m.start()) + 1
                problems.append(f"{path}:{line}: {m.group(0)}: {target} has no heading #{m.group('anchor')}")


def _offset(text, at):
    """The offset in `text` of offset `at` of CONTINUATION.sub(" ", text)."""
    shift = 0
    for m in CONTINUATION.finditer(text):
        if m.start() - shift >= at:
            break
        shift += len(m.group(0)) - 1
    return at + shift


# Each example ClusterRole's file, and the files whose contextAwareResources
# it grants.
GRANTS = [
    ("examples/capi-rbac.yaml",
     ["policy-metadata.yml", "examples/capi-policy.yaml", "examples/validate-mode-policy.yaml"]),
    ("examples/mr-rbac.yaml", ["examples/mr-policy.yaml"]),
]


def plural(kind):
    """The resource of a kind (CAPI's, an example XR's), as its CRD names it."""
    kind = kind.lower()
    return kind + ("es" if kind.endswith("s") else "s")


def sentences(text):
    """The sentences of `text`, each paragraph's lines (comment markers and
    all) joined into one."""
    for paragraph in re.split(r"\n[ \t]*(?:#+|//[/!]?)?[ \t]*\n", text):
        joined = CONTINUATION.sub(" ", paragraph)
        yield from re.split(r"(?<=[.!?])\s+(?=[A-Z\[`(*])", joined)


def check_grants(problems):
    """What the policy may read (contextAwareResources) and what its
    ServiceAccount may read (the ClusterRole) are the same kinds, and the
    docs that say how to add a kind to one say to add it to the other."""
    for rbac, granting in GRANTS:
        check_grant(rbac, granting, problems)
    docs = [(path, prose(read(path), code_spans=True)) for path in doc_files()]
    examples = sorted(os.path.relpath(os.path.join(d, f), ROOT)
                      for d, _, files in os.walk(os.path.join(ROOT, "examples")) for f in files if f.endswith(".yaml"))
    # In YAML, the comments: a line of YAML ends the paragraph of comments above it.
    comments = [(path, "\n".join(line if line.lstrip().startswith("#") else "" for line in read(path).split("\n")))
                for path in examples + ["policy-metadata.yml"]]
    for path, text in docs + comments:
        for sentence in sentences(text):
            tells = re.search(r"\badd\b.*contextAwareResources", sentence, re.I | re.S)
            if tells and not re.search(r"ClusterRole|capi-rbac|mr-rbac", sentence):
                problems.append(f"{path}: \"{' '.join(sentence.split())[:160]}\" says to add a kind to "
                                "contextAwareResources, not that the ClusterRole (examples/capi-rbac.yaml, "
                                "examples/mr-rbac.yaml) "
                                "must grant `get` on it too")


def check_grant(rbac, granting, problems):
    """The ClusterRole of `rbac` grants `get` on exactly the kinds the
    contextAwareResources of `granting` list."""
    needed = set()
    for path in granting:
        for document in yaml.safe_load_all(read(path)):
            resources = (document.get("spec") or document).get("contextAwareResources") or []
            for resource in resources:
                group = resource["apiVersion"].rpartition("/")[0]
                needed.add((group, plural(resource["kind"])))
    granted = set()
    for document in yaml.safe_load_all(read(rbac)):
        if document.get("kind") != "ClusterRole":
            continue
        for rule in document.get("rules", []):
            if rule.get("verbs") != ["get"]:
                problems.append(f"{rbac}: a rule grants {rule.get('verbs')}; the policy only uses get")
            granted |= {(g, r) for g in rule.get("apiGroups", []) for r in rule.get("resources", [])}
    for group, resource in sorted(needed - granted):
        problems.append(f"{rbac}: the ClusterRole does not grant get on {resource} ({group or 'core'}), "
                        f"which the contextAwareResources of {', '.join(granting)} list")
    for group, resource in sorted(granted - needed):
        problems.append(f"{rbac}: the ClusterRole grants get on {resource} ({group or 'core'}), "
                        "which no contextAwareResources list")


# What `policy-runner audit --cluster --fix` needs (docs/validate-and-audit.md,
# "Objects that were there first"): the ClusterRole's file, and the policies
# it fixes.
FIXER_RBAC = "examples/fixer-rbac.yaml"
FIXER_POLICIES = ["examples/capi-policy.yaml", "examples/xr-policy.yaml", "examples/mr-policy.yaml"]
# List and page through a kind, read an object again, write it (a merge patch).
FIXER_VERBS = {"get", "list", "patch"}
# --policy-name reads the deployed policy.
POLICY_RESOURCE = ("policies.kubewarden.io", "clusteradmissionpolicies")
# --policy-name also reads the webhook kubewarden-controller registered for
# the policy, for the selectors the API server calls it under.
WEBHOOK_RESOURCES = {("admissionregistration.k8s.io", "mutatingwebhookconfigurations"),
                     ("admissionregistration.k8s.io", "validatingwebhookconfigurations")}
# The two matchConditions shapes of examples/mr-policy.yaml, whitespace folded:
# the group is `<family><suffix>` or ends with `.<family><suffix>`; the
# resource is not one of a list. Another shape is a problem, so that a new
# condition cannot silently widen or narrow what the check accepts.
GROUP_SUFFIX_CONDITION = re.compile(
    r"^\[(?P<families>[^\]]*)\]\.exists\((?P<v>\w+), request\.resource\.group == (?P=v) \+ '(?P<suffix>[^']*)' "
    r"\|\| request\.resource\.group\.endsWith\('\.' \+ (?P=v) \+ '(?P=suffix)'\)\)$")
EXCLUDED_RESOURCES_CONDITION = re.compile(r"^!\(request\.resource\.resource in \[(?P<resources>[^\]]*)\]\)$")


def cel_strings(listed):
    return [item.strip().strip("'\"") for item in listed.split(",") if item.strip()]


def match_condition(path, condition, problems):
    """A predicate (group, resource) for one of the matchConditions shapes
    above, or None (and a problem) for any other expression."""
    expression = " ".join(condition.get("expression", "").split())
    m = GROUP_SUFFIX_CONDITION.match(expression)
    if m:
        families, suffix = cel_strings(m.group("families")), m.group("suffix")
        return lambda g, r: any(g == f + suffix or g.endswith("." + f + suffix) for f in families)
    m = EXCLUDED_RESOURCES_CONDITION.match(expression)
    if m:
        excluded = set(cel_strings(m.group("resources")))
        return lambda g, r: r not in excluded
    problems.append(f"{path}: matchCondition {condition.get('name')!r}: scripts/check_docs.py cannot tell "
                    f"which kinds it lets through ({expression[:80]}…); teach match_condition its shape")
    return None


def fixer_needs(problems):
    """The verbs the fixer needs on each (group, resource) the policies name,
    and the rules matching `*`, as (policy, predicate, description)."""
    needed, wildcards, parents = {}, [], set()
    for path in FIXER_POLICIES:
        for document in yaml.safe_load_all(read(path)):
            spec = document.get("spec") or {}
            conditions = [match_condition(path, c, problems) for c in spec.get("matchConditions") or []]
            for rule in spec.get("rules") or []:
                groups, resources = rule.get("apiGroups", []), rule.get("resources", [])
                if "*" in groups or "*" in resources:
                    def matches(g, r, groups=groups, resources=resources, conditions=conditions):
                        return ("*" in groups or g in groups) and ("*" in resources or r in resources) \
                            and all(c is not None and c(g, r) for c in conditions)
                    wildcards.append((path, matches, f"apiGroups {groups}, resources {resources}"))
                    continue
                for g in groups:
                    for r in resources:
                        if "/" not in r:  # a subresource is written through its object
                            needed[(g, r)] = set(FIXER_VERBS)
            for resource in spec.get("contextAwareResources") or []:
                parents.add((resource["apiVersion"].rpartition("/")[0], plural(resource["kind"])))
    for parent in parents | {POLICY_RESOURCE} | WEBHOOK_RESOURCES:
        needed.setdefault(parent, {"get"})
    return needed, wildcards


def check_fixer(problems):
    """examples/fixer-rbac.yaml's ClusterRole grants what the fixer needs on
    the example policies' kinds, and nothing else; its binding names it and
    the ServiceAccount the file defines."""
    rbac, policies = FIXER_RBAC, ", ".join(FIXER_POLICIES)
    documents = [d for d in yaml.safe_load_all(read(rbac)) if d]
    roles = [d for d in documents if d.get("kind") == "ClusterRole"]
    if len(roles) != 1:
        problems.append(f"{rbac}: {len(roles)} ClusterRoles, not one")
        return
    role = roles[0]
    if "aggregationRule" in role:
        problems.append(f"{rbac}: the ClusterRole aggregates other roles; the fixer needs only its own rules")
    granted = {}
    for rule in role.get("rules") or []:
        for key in sorted(set(rule) - {"apiGroups", "resources", "verbs"}):
            problems.append(f"{rbac}: a rule has {key}; the fixer needs apiGroups, resources and verbs only")
        groups, resources, verbs = rule.get("apiGroups", []), rule.get("resources", []), rule.get("verbs", [])
        if "*" in groups + resources + verbs:
            problems.append(f"{rbac}: a rule grants a wildcard ({groups}, {resources}, {verbs}); "
                            "the fixer names every group, resource and verb")
        for g in groups:
            for r in resources:
                granted.setdefault((g, r), set()).update(verbs)
    needed, wildcards = fixer_needs(problems)
    used = set()
    for (g, r), verbs in sorted(granted.items()):
        if (g, r) in needed:
            allowed = needed[(g, r)]
        else:
            matching = [i for i, (_, matches, _) in enumerate(wildcards) if matches(g, r)]
            if not matching:
                problems.append(f"{rbac}: the ClusterRole grants {sorted(verbs)} on {r} ({g or 'core'}), which "
                                f"no rule, no contextAwareResources and no --policy-name of {policies} needs")
                continue
            used.update(matching)
            allowed = FIXER_VERBS
            for verb in sorted(FIXER_VERBS - verbs):
                problems.append(f"{rbac}: the ClusterRole does not grant {verb} on {r} ({g or 'core'}), "
                                "which a rule matching `*` matches")
        for verb in sorted(verbs - allowed):
            problems.append(f"{rbac}: the ClusterRole grants {verb} on {r} ({g or 'core'}); "
                            f"the fixer needs only {', '.join(sorted(allowed))} there")
    for (g, r), verbs in sorted(needed.items()):
        for verb in sorted(verbs - granted.get((g, r), set())):
            why = ("--policy-name reads the policy" if (g, r) == POLICY_RESOURCE
                   else "--policy-name reads the policy's webhook" if (g, r) in WEBHOOK_RESOURCES
                   else "a rule matches it" if verbs == FIXER_VERBS else "a contextAwareResources entry lists it")
            problems.append(f"{rbac}: the ClusterRole does not grant {verb} on {r} ({g or 'core'}): {why} "
                            f"({policies})")
    for i, (path, _, described) in enumerate(wildcards):
        if i not in used:
            problems.append(f"{rbac}: the ClusterRole grants no kind the rule of {path} matching `*` "
                            f"({described}) matches; name the kinds you run")
    accounts = {(d["metadata"]["name"], d["metadata"].get("namespace")) for d in documents
                if d.get("kind") == "ServiceAccount"}
    bound = [d for d in documents if d.get("kind") == "ClusterRoleBinding"
             and d.get("roleRef", {}).get("name") == role["metadata"]["name"]
             and any(s.get("kind") == "ServiceAccount" and (s.get("name"), s.get("namespace")) in accounts
                     for s in d.get("subjects") or [])]
    if not bound:
        problems.append(f"{rbac}: no ClusterRoleBinding binds the ClusterRole to the ServiceAccount the file defines")


# A CronJob that runs the fixer on a schedule with fixer-rbac.yaml's
# ServiceAccount (docs/deploying.md, "Fixing drift on a schedule").
FIXER_CRONJOB = "examples/fixer-cronjob.yaml"
METADATA = "policy-metadata.yml"


def check_fixer_cronjob(problems):
    """examples/fixer-cronjob.yaml runs in fixer-rbac.yaml's namespace, as
    its ServiceAccount, the image of this version, on the example policies
    it can list."""
    path = FIXER_CRONJOB
    documents = [d for d in yaml.safe_load_all(read(path)) if d]
    if [d.get("kind") for d in documents] != ["CronJob"]:
        problems.append(f"{path}: {[d.get('kind') for d in documents]}, not one CronJob (the Namespace, "
                        f"ServiceAccount and ClusterRole are {FIXER_RBAC}'s)")
        return
    cronjob = documents[0]
    namespace = cronjob["metadata"].get("namespace")
    rbac = [d for d in yaml.safe_load_all(read(FIXER_RBAC)) if d]
    namespaces = {d["metadata"]["name"]: d for d in rbac if d.get("kind") == "Namespace"}
    accounts = {(d["metadata"]["name"], d["metadata"].get("namespace")) for d in rbac
                if d.get("kind") == "ServiceAccount"}
    if namespace not in namespaces:
        problems.append(f"{path}: its namespace {namespace!r} is not the Namespace {FIXER_RBAC} defines")
    else:
        labels = namespaces[namespace]["metadata"].get("labels") or {}
        if labels.get("pod-security.kubernetes.io/enforce") != "restricted":
            problems.append(f"{FIXER_RBAC}: the Namespace {namespace} does not enforce Pod Security `restricted` "
                            "(label pod-security.kubernetes.io/enforce)")
    pod = cronjob["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    account = pod.get("serviceAccountName")
    if (account, namespace) not in accounts:
        problems.append(f"{path}: serviceAccountName {account!r} in {namespace!r} is not the ServiceAccount "
                        f"{FIXER_RBAC} defines")
    annotations = yaml.safe_load(read(METADATA))["annotations"]
    image = f"{annotations['io.kubewarden.policy.ociUrl']}-runner:v{annotations['io.kubewarden.policy.version']}"
    containers = pod.get("containers") or []
    for container in containers:
        if container.get("image", "").split("@")[0] != image:
            problems.append(f"{path}: container {container.get('name')} runs {container.get('image')}, not "
                            f"{image} ({METADATA}'s ociUrl and version)")
    policies = {}
    for policy_path in FIXER_POLICIES:
        for document in yaml.safe_load_all(read(policy_path)):
            if document and document.get("kind") == "ClusterAdmissionPolicy":
                rules = document.get("spec", {}).get("rules") or []
                star = any("*" in r.get("apiGroups", []) + r.get("resources", []) for r in rules)
                policies[document["metadata"]["name"]] = (policy_path, star)
    for container in containers:
        args = container.get("args") or []
        names = [args[i + 1] for i, a in enumerate(args[:-1]) if a == "--policy-name"]
        if not names:
            problems.append(f"{path}: container {container.get('name')} names no --policy-name")
        for name in names:
            if name not in policies:
                problems.append(f"{path}: --policy-name {name} is no policy of {', '.join(FIXER_POLICIES)}")
            elif policies[name][1]:
                problems.append(f"{path}: --policy-name {name} ({policies[name][0]}) has a rule matching `*`: "
                                "every kind the cluster serves would be listed, and the fixer may list few")
    names = {c.get("name") for c in containers}
    failure = cronjob["spec"]["jobTemplate"]["spec"].get("podFailurePolicy") or {}
    for rule in failure.get("rules") or []:
        named = (rule.get("onExitCodes") or {}).get("containerName")
        if named is not None and named not in names:
            problems.append(f"{path}: a podFailurePolicy rule names container {named!r}, which the pod does not have")


def makefile_check_targets():
    m = re.search(r"^check:([^\n]*)$", read("Makefile"), re.M)
    if not m:
        raise SystemExit("check_docs: the Makefile has no `check:` rule")
    return m.group(1).split()


def check_make_check_lists(problems):
    targets = makefile_check_targets()
    dev = read("docs/development.md")
    m = re.search(r"^## What `make check` runs\n(.*?)(?=^## )", dev, re.M | re.S)
    if not m:
        problems.append("docs/development.md: no section \"## What `make check` runs\"")
    else:
        table = re.findall(r"^\| `([^`]+)` \|", m.group(1), re.M)
        if table != targets:
            problems.append(f"docs/development.md, \"What `make check` runs\": the table lists {table}, "
                            f"the Makefile's check: runs {targets}")
    text = " ".join(read(README).split())
    m = re.search(r"`make check` runs (.*?) in that order", text)
    if not m:
        problems.append("README.md: no sentence \"`make check` runs `…`, … in that order\"")
    else:
        listed = re.findall(r"`([^`]+)`", m.group(1))
        if listed != targets:
            problems.append(f"README.md: `make check` runs {listed}, the Makefile's check: runs {targets}")


def scratch_dir():
    tmp = tempfile.mkdtemp(prefix="check-docs-")
    work = os.path.join(tmp, "repo")
    os.mkdir(work)
    for name in os.listdir(ROOT):
        if name != ".git":
            os.symlink(os.path.join(ROOT, name), os.path.join(work, name))
    bin_dir = os.path.join(tmp, "bin")
    os.mkdir(bin_dir)
    if shutil.which("kwctl") is None:
        shim = os.path.join(bin_dir, "kwctl")
        with open(shim, "w", encoding="utf-8") as f:
            f.write(f'#!/bin/sh\nexec {shlex.quote(os.path.join(ROOT, RUNNER))} "$@"\n')
        os.chmod(shim, 0o755)
    return tmp, work, bin_dir


def make_lines(body):
    """The make invocations of a `slow` block: (env, make arguments)."""
    out = []
    for line in body.replace("\\\n", " ").split("\n"):
        words = shlex.split(line, comments=True)
        if not words:
            continue
        env = {}
        while words and re.match(r"^[A-Z_][A-Z0-9_]*=", words[0]):
            key, _, value = words.pop(0).partition("=")
            env[key] = value
        out.append((env, words))
    return out


def run_blocks(paths, problems):
    missing = [p for p in (RUNNER, MODULE) if not os.path.exists(os.path.join(ROOT, p))]
    if missing:
        raise SystemExit(f"check_docs: {', '.join(missing)} missing: run `make check-docs` (it builds them)")
    tmp, work, bin_dir = scratch_dir()
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}")
    counts = {"run": 0, "cluster": 0, "registry": 0, "slow": 0}
    try:
        for path in paths:
            for lineno, info, body in fenced_blocks(read(path)):
                words = info.split()
                if not words or words[0] not in SHELLS:
                    continue
                where = f"{path}:{lineno}"
                attrs = words[1:]
                unknown = [a for a in attrs if a not in NOT_RUN | {"slow"} and not re.match(r"^exit=\d+$", a)]
                if unknown:
                    problems.append(f"{where}: unknown marker {' '.join(unknown)} (scripts/check_docs.py lists them)")
                    continue
                if NOT_RUN & set(attrs):
                    counts[(NOT_RUN & set(attrs)).pop()] += 1
                    continue
                if "slow" in attrs:
                    counts["slow"] += 1
                    for extra, args in make_lines(body):
                        if not args or args[0] != "make":
                            problems.append(f"{where}: a `slow` block holds make lines only, not: {' '.join(args)}")
                            continue
                        done = subprocess.run(["make", "-n", "-s", *args[1:]], cwd=ROOT, env=dict(env, **extra),
                                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
                        if done.returncode != 0:
                            problems.append(f"{where}: make -n {' '.join(args[1:])} fails: {done.stderr.strip()}")
                    continue
                expected = next((int(a.split("=")[1]) for a in attrs if a.startswith("exit=")), 0)
                counts["run"] += 1
                try:
                    done = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", body], cwd=work, env=env,
                                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                          timeout=BLOCK_TIMEOUT)
                except subprocess.TimeoutExpired:
                    problems.append(f"{where}: still running after {BLOCK_TIMEOUT} s")
                    continue
                if done.returncode != expected:
                    problems.append(f"{where}: exit {done.returncode} (expected {expected}):\n{body}"
                                    f"stderr: {done.stderr.strip()[-2000:]}")
    finally:
        shutil.rmtree(tmp)
    return counts


def main():
    problems = []
    lines = read(README).count("\n")
    if lines > MAX_README_LINES:
        problems.append(f"README.md is {lines} lines, over {MAX_README_LINES}: move depth to docs/")
    paths = doc_files()
    check_links(paths + ["BENCHMARKS.md"], problems)
    check_section_references(problems)
    check_grants(problems)
    check_fixer(problems)
    check_fixer_cronjob(problems)
    check_make_check_lists(problems)
    counts = None
    if "--no-run" not in sys.argv[1:]:
        counts = run_blocks(paths, problems)
    if problems:
        print("check-docs:", file=sys.stderr)
        for p in problems:
            print(f"  - {p}", file=sys.stderr)
        sys.exit(1)
    summary = f"check-docs: README.md {lines} lines; links and the make check list agree"
    if counts:
        summary += (f"; {counts['run']} command blocks ran, {counts['slow']} slow ones checked with make -n, "
                    f"{counts['cluster']} need a cluster, {counts['registry']} a registry")
    print(summary)


if __name__ == "__main__":
    main()
