// The explain page: loads the policy core (web/pkg, built by `make web`),
// runs it on the three inputs and renders what it returns. The audit view
// renders the JSON report `policy-runner audit -o json` prints, which the
// same core computes from a pasted dump. No framework.
import init, { explain, audit } from "./pkg/explain_web.js";

const $ = (id) => document.getElementById(id);
const inputs = ["object", "parents", "settings"].map($);
const DEBOUNCE_MS = 250;

let examples = [];
let timer = 0;
let runs = 0;
let audits = 0;

// Tiny DOM builder: el("td", {class: "x"}, "text", child, ...).
function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  for (const c of children) node.append(c instanceof Node ? c : String(c));
  return node;
}

function table(head, rows) {
  return el("table", {},
    el("thead", {}, el("tr", {}, ...head.map((h) => el("th", {}, h)))),
    el("tbody", {}, ...rows));
}

function setStatus(text) {
  $("status").textContent = text;
}

// --- examples -------------------------------------------------------------

async function fetchText(path) {
  const response = await fetch(path);
  if (!response.ok) throw new Error(`${path}: ${response.status} ${response.statusText}`);
  return response.text();
}

async function loadExample(id) {
  const ex = examples.find((e) => e.id === id);
  if (!ex) return;
  setStatus(`loading example ${id}…`);
  const [object, parents, settings] = await Promise.all(
    [ex.object, ex.parents, ex.settings].map((f) => (f ? fetchText(`examples/${f}`) : "")));
  $("object").value = object;
  $("parents").value = parents;
  $("settings").value = settings;
  $("operation").value = ex.operation;
  history.replaceState(null, "", `#${id}`);
  run();
}

// --- running --------------------------------------------------------------

function run() {
  clearTimeout(timer);
  let report;
  try {
    report = JSON.parse(explain(
      $("object").value, $("parents").value, $("settings").value, $("operation").value));
  } catch (e) {
    report = { ok: false, error: `the policy module failed: ${e}` };
  }
  render(report);
  runs += 1;
  document.body.dataset.runs = String(runs);
  setStatus(report.ok ? "up to date" : "input error");
}

function scheduleRun() {
  clearTimeout(timer);
  setStatus("editing…");
  timer = setTimeout(run, DEBOUNCE_MS);
}

// --- rendering ------------------------------------------------------------

function render(r) {
  const error = $("error");
  error.hidden = r.ok;
  error.textContent = r.ok ? "" : r.error;
  document.body.classList.toggle("failed", !r.ok);

  const decision = $("decision");
  if (!r.ok) {
    decision.className = "decision error";
    decision.textContent = "not evaluated: fix the input";
  } else if (r.allowed) {
    const n = r.patch.length;
    decision.className = "decision allowed";
    decision.textContent = n === 0
      ? "Allowed, unchanged"
      : `Allowed, with ${n} patch operation${n === 1 ? "" : "s"}`;
  } else {
    decision.className = "decision rejected";
    decision.textContent = `Rejected (${r.code}): ${r.message}`;
  }

  const list = (node, items) => {
    node.replaceChildren(...items.map((i) => el("li", {}, i)));
    if (items.length === 0) node.append(el("li", { class: "none" }, "none"));
  };
  list($("warnings"), r.warnings ?? []);
  list($("audit"), Object.entries(r.auditAnnotations ?? {}).map(([k, v]) => `${k}: ${v}`));

  $("explanation").replaceChildren(...(r.explanation ? explanation(r.explanation) : []));
  $("explanation-text").textContent = r.explanationText ?? "";
  $("patch").textContent = r.patch
    ? (r.patch.length ? `[\n${r.patch.map((op) => "  " + JSON.stringify(op)).join(",\n")}\n]` : "[]")
    : "";
  $("mutated").textContent = r.mutated ? JSON.stringify(r.mutated, null, 2) : "";
}

const quote = (s) => JSON.stringify(s);

// The core serializes the fields inside its fate enums in snake_case
// (child_value, tag_key) and everything else in camelCase: read either.
const field = (o, camel) => o[camel] ?? o[camel.replace(/[A-Z]/g, (c) => "_" + c.toLowerCase())];

const keyCell = (key) => el("td", { class: "key" }, key);
const fateCell = (text) => el("td", { class: "fate" }, text);

function fateRow(key, fate) {
  switch (fate.fate) {
    case "flows":
      return el("tr", { class: "flows" }, keyCell(key),
        fateCell(`flows (${fate.change})`),
        el("td", {}, `= ${quote(fate.value)} from ${fate.from}`));
    case "kept-bookkeeping": {
      const child = field(fate, "childValue");
      return el("tr", { class: "kept" }, keyCell(key), fateCell("kept: CAPI bookkeeping"),
        el("td", {}, child === undefined ? "the child has none" : `the child keeps ${quote(child)}`));
    }
    case "not-propagated":
      return el("tr", { class: "not" }, keyCell(key), fateCell("not propagated"),
        el("td", {}, fate.rule));
    default:
      return el("tr", {}, keyCell(key), fateCell(fate.fate), el("td", {}, ""));
  }
}

function tagRow(label) {
  const cells = (fate, detail, cls) => el("tr", { class: cls },
    keyCell(label.qualifiedKey), el("td", {}, label.source), fateCell(fate), el("td", {}, detail));
  switch (label.fate) {
    case "tag": {
      // A key the profile admits but the provider's API refuses.
      const caution = label.caution ? ` (fails at the provider: ${label.caution})` : "";
      return cells("tag", field(label, "tagKey") + caution, caution ? "skipped" : "flows");
    }
    case "skipped": return cells(`skipped: ${label.reason}`, label.detail, "skipped");
    case "not-opted-in": return cells("not opted in", "not in cloudTags.propagatingLabels", "not");
    default: return cells(label.fate, "", "");
  }
}

function explanation(x) {
  const out = [];
  if (x.notes.length) out.push(el("ul", { class: "notes" }, ...x.notes.map((n) => el("li", {}, n))));
  if (x.rule) {
    out.push(el("p", { class: "rule" }, "Rule: ", el("strong", {}, x.rule.family),
      ` from ${x.rule.parent} (mirrors CAPI ${x.rule.upstream})`));
  }
  for (const path of x.paths) {
    out.push(el("h3", {}, path.path));
    out.push(path.keys.length
      ? table(["key", "fate", "detail"], path.keys.map((k) => fateRow(k.key, k)))
      : el("p", { class: "none" }, "the parent offers no keys here"));
  }
  if (x.fields && x.fields.length) {
    // In-place fields, as the core decided them: where each value comes
    // from (the parent, or the Cluster topology / ClusterClass). Fields the
    // parent does not set are named in one line, not a row each.
    const json = (v) => (v === undefined ? "absent" : JSON.stringify(v));
    const set = x.fields.filter((f) => f.value !== undefined);
    const unset = x.fields.filter((f) => f.value === undefined);
    out.push(el("h3", {}, "In-place fields"));
    if (set.length) {
      out.push(table(["field", "fate", "detail"], set.map((f) => el("tr", { class: "flows" },
        keyCell(f.path), fateCell(f.change),
        el("td", {}, `= ${json(f.value)} from ${f.from} (child had ${json(f.found)})`)))));
    }
    if (unset.length) {
      out.push(el("p", { class: "none" },
        `not set by the parent, so the child's value stays: ${unset.map((f) => f.path).join(", ")}`));
    }
  }
  if (x.nodeSync) {
    for (const what of ["labels", "annotations"]) {
      out.push(el("h3", {}, `Node sync: ${what}`));
      const keys = x.nodeSync[what];
      out.push(keys.length
        ? table(["key", "synced to the Node"], keys.map((k) => el("tr", { class: k.syncedBy ? "flows" : "not" },
          keyCell(k.key), el("td", {}, k.syncedBy ? `yes (${k.syncedBy})` : "no"))))
        : el("p", { class: "none" }, `the Machine has no ${what}`));
    }
  }
  if (x.cloudTags) {
    const t = x.cloudTags;
    out.push(el("h3", {}, `Cloud tags: profile ${t.profile}`));
    out.push(el("p", {}, `provider: ${t.provider}`));
    // Which profile applied and why: built-in, user-defined (naming the
    // cloudTags.profiles entry) or the fallback.
    out.push(el("p", { class: "rule" }, "Profile: ", el("strong", {}, t.origin), ` (${t.why})`));
    // The prefix that marks the policy's own tags, when it is not the
    // default: a profile's own (capg's plexsphere-) or cloudTags.prefix.
    if (t.prefix && t.prefix !== "plexsphere:") {
      out.push(el("p", { class: "rule" }, "Tag-key prefix: ", el("code", {}, t.prefix), ` (${t.prefixFrom})`));
    }
    if (t.noTagCanPropagate) {
      // A profile whose key class cannot admit the plexsphere: prefix: say
      // it once, plainly, instead of leaving the user to read N skips.
      out.push(el("p", { class: "skipped" }, t.noTagCanPropagate));
    }
    out.push(t.labels.length
      ? table(["label", "source", "fate", "detail"], t.labels.map(tagRow))
      : el("p", { class: "none" }, "the XR has no labels"));
    if (t.removed.length) {
      out.push(table(["removed from spec.cloudTags", "why"],
        t.removed.map(([k, why]) => el("tr", { class: "skipped" }, keyCell(k), el("td", {}, why)))));
    }
  }
  return out;
}

// --- the audit view -------------------------------------------------------

function showView(view) {
  document.body.dataset.view = view;
  $("view-explain").setAttribute("aria-pressed", String(view === "explain"));
  $("view-audit").setAttribute("aria-pressed", String(view === "audit"));
  // The settings are shared: the explain view shows what they give now.
  if (view === "explain") run();
}

async function loadAuditExample(id) {
  const ex = examples.find((e) => e.id === id);
  if (!ex) return;
  $("audit-status").textContent = `loading example ${id}…`;
  const [dump, settings] = await Promise.all(
    [ex.dump, ex.settings].map((f) => (f ? fetchText(`examples/${f}`) : "")));
  $("dump").value = dump;
  $("settings").value = settings;
  history.replaceState(null, "", `#${id}`);
  $("audit-status").textContent = "example loaded: press Audit";
}

// Audits the dump with the policy's core, then renders the report; the two
// are timed separately (`document.body.dataset.auditMs`, `renderMs`).
function runAudit() {
  const t0 = performance.now();
  let report;
  try {
    report = JSON.parse(audit($("dump").value, $("settings").value));
  } catch (e) {
    report = { error: `the policy module failed: ${e}` };
  }
  const t1 = performance.now();
  renderAudit(report);
  const t2 = performance.now();
  audits += 1;
  Object.assign(document.body.dataset, {
    audits: String(audits),
    auditMs: (t1 - t0).toFixed(1),
    renderMs: (t2 - t1).toFixed(1),
  });
  $("audit-status").textContent = report.error
    ? "input error"
    : `audited ${report.summary.objects} objects in ${Math.round(t2 - t0)} ms`;
}

// The CLI's words for each verdict (cluster-audit render.rs `marker`).
const MARKERS = {
  compliant: "✓ compliant",
  deviates: "✗ DEVIATES",
  rejected: "✗ REJECTED",
  "not-evaluated": "not evaluated",
};

let auditObjects = new Map();

function renderAudit(r) {
  const error = $("audit-error");
  error.hidden = !r.error;
  error.textContent = r.error ?? "";
  $("audit-detail").hidden = true;
  auditObjects = new Map((r.objects ?? []).map((o) => [o.id, o]));
  const summary = $("audit-summary");
  if (r.error) {
    summary.className = "decision error";
    summary.textContent = "not audited: fix the input";
    $("audit-tree").replaceChildren();
    return;
  }
  const s = r.summary;
  const failing = s.deviating + s.rejected;
  summary.className = `decision ${failing ? "rejected" : "allowed"}`;
  summary.textContent = summaryLine(s);
  $("audit-tree").replaceChildren(r.tree.length
    ? treeList(r.tree)
    : el("p", { class: "none" }, "the dump holds no objects"));
}

// The CLI's summary line (cluster-audit render.rs `text`).
function summaryLine(s) {
  const plural = (n, one, many) => (n === 1 ? one : many);
  let line = `${s.audited} ${plural(s.audited, "object", "objects")} audited, ` +
    `${s.deviating} ${plural(s.deviating, "deviates", "deviate")}`;
  if (s.rejected > 0) line += `, ${s.rejected} rejected`;
  if (s.notEvaluated > 0) {
    line += ` (${s.notEvaluated} more not evaluated: the policy does not act on their kind)`;
  }
  return line;
}

function treeList(nodes) {
  return el("ul", {}, ...nodes.map((node) => {
    const object = auditObjects.get(node.id);
    const button = el("button", { type: "button", class: `node ${object.status}`, "data-id": node.id },
      `${node.id}: `, el("span", { class: "marker" }, MARKERS[object.status] ?? object.status),
      nodeKeys(object));
    button.addEventListener("click", () => showAudited(button, object));
    const item = el("li", {}, button);
    if (node.children.length) item.append(treeList(node.children));
    return item;
  }));
}

// A Machine's Node-bound keys, as the CLI's tree line shows them.
function nodeKeys(object) {
  if (!object.nodeKeys) return "";
  const list = (keys) => (keys.length ? keys.join(", ") : "none");
  return `; Node labels: ${list(object.nodeKeys.labels)}; Node annotations: ${list(object.nodeKeys.annotations)}`;
}

// The CLI's words for a look-up's answer (cluster-audit render.rs `answer_text`).
function answerText(lookup) {
  switch (lookup.answer) {
    case "found": return "found";
    case "not-found": return lookup.inDumpAt
      ? `not in the dump at this version; the dump lists it at ${lookup.inDumpAt}, which an API ` +
        "server would convert and the audit cannot"
      : "not in the dump";
    case "failed": return `failed: ${lookup.message}`;
    default: return lookup.answer;
  }
}

function lookupRef(l) {
  return `${l.kind} ${l.namespace ? `${l.namespace}/` : ""}${l.name} (${l.apiVersion})`;
}

function showAudited(button, o) {
  for (const b of document.querySelectorAll("#audit-tree button.selected")) b.classList.remove("selected");
  button.classList.add("selected");
  $("audit-detail").hidden = false;
  const verdict = $("audit-verdict");
  verdict.className = `decision ${o.status === "compliant" ? "allowed" : o.status === "not-evaluated" ? "" : "rejected"}`;
  verdict.textContent = `${o.id}: ${MARKERS[o.status] ?? o.status}`;
  const where = `read from ${o.source.file} document ${o.source.document}` +
    o.source.items.map((i) => ` item ${i}`).join("");
  $("audit-source").textContent = o.note ? `${where}; ${o.note}` : where;

  const list = (node, items) => {
    node.replaceChildren(...items.map((i) => el("li", {}, i)));
    if (items.length === 0) node.append(el("li", { class: "none" }, "none"));
  };
  const deviations = [...(o.deviations ?? [])];
  if (o.status === "rejected" && o.message) deviations.push(`rejected: ${o.message}`);
  list($("audit-deviations"), deviations);
  list($("audit-warnings"), o.warnings ?? []);
  list($("audit-lookups"), (o.lookups ?? []).map((l) => `${lookupRef(l)}: ${answerText(l)}`));
  $("audit-explanation").replaceChildren(...(o.explanation ? explanation(o.explanation) : []));
  const ops = o.patch ?? [];
  $("audit-patch").textContent = o.explanation
    ? (ops.length ? `[\n${ops.map((op) => "  " + JSON.stringify(op)).join(",\n")}\n]` : "[]")
    : "";
}

// --- start ----------------------------------------------------------------

async function main() {
  try {
    await init();
  } catch (e) {
    render({ ok: false, error: `cannot load the policy module (web/pkg; run make web): ${e}` });
    setStatus("failed");
    return;
  }
  $("run").disabled = false;
  $("run").addEventListener("click", run);
  $("audit-run").disabled = false;
  $("audit-run").addEventListener("click", runAudit);
  $("view-explain").addEventListener("click", () => showView("explain"));
  $("view-audit").addEventListener("click", () => showView("audit"));
  $("operation").addEventListener("change", run);
  for (const input of inputs) input.addEventListener("input", scheduleRun);
  $("example").addEventListener("change", (e) => loadExample(e.target.value).catch(showLoadError));

  try {
    examples = JSON.parse(await fetchText("examples/index.json"));
  } catch (e) {
    showLoadError(e);
    return;
  }
  const explainExamples = examples.filter((ex) => ex.view !== "audit");
  $("example").replaceChildren(
    el("option", { value: "" }, "(choose an example)"),
    ...explainExamples.map((ex) => el("option", { value: ex.id }, ex.title)));
  const wanted = location.hash.slice(1);
  const first = explainExamples.some((ex) => ex.id === wanted) ? wanted : explainExamples[0]?.id;
  if (first) {
    $("example").value = first;
    await loadExample(first).catch(showLoadError);
  }
  const auditExample = examples.find((ex) => ex.view === "audit");
  if (auditExample) {
    $("audit-example").disabled = false;
    $("audit-example").addEventListener("click",
      () => loadAuditExample(auditExample.id).catch(showAuditLoadError));
  }
  if (examples.some((ex) => ex.view === "audit" && ex.id === wanted)) {
    showView("audit");
    await loadAuditExample(wanted).then(runAudit).catch(showAuditLoadError);
  }
  document.body.dataset.ready = "true";
}

function showLoadError(e) {
  render({ ok: false, error: `cannot load the examples: ${e}` });
  setStatus("failed");
}

function showAuditLoadError(e) {
  renderAudit({ error: `cannot load the example dump: ${e}` });
  $("audit-status").textContent = "failed";
}

main();
