#!/usr/bin/env python3
"""Checks that the core's modules import each other without a cycle, and
that its folders import only downwards, layer by layer.

Each file under crates/core/src is a module (`capi/owner_link.rs` is
`capi::owner_link`, `lib.rs` the crate root). A module depends on another when
its non-test code names it in a path: `use crate::…`, `use super::…`,
`use self::…`, a child module by its bare name, or such a path inside an
expression; `use` trees with braces are expanded. A path names the longest
module it starts with (`crate::capi::rules::KindMatch` is `capi::rules`).
Comments and `#[cfg(test)]` modules are left out: tests may reach anywhere.

A parent file declaring its children (`mod tags;`) is not an import, and
neither is a child naming its parent's items through `super::` when the
parent does not import the child back: a cycle is two modules that each
need the other, whatever the path between them.

The layers (LAYERS) are the core's top-level modules from the bottom up:
JSON (fields, projection, ...), Kubernetes' vocabulary (owners, kind
matching, an object's identity), the request with its plan and the
settings' problem type, the errors and the explanation's record, the two
stages (CAPI and tags, side by side: neither imports the other; each owns
its settings section and its domain), the settings (which read the
user's text into the stages' sections), the decision, the wire, and the
test oracle. A module may import its own layer and those
below; a top-level module in no layer is reported too.

Usage: scripts/check_module_graph.py [SRC_DIR] [--print]
Exit 0 with no cycle and no import upwards; 1 and each cycle's modules,
with the imports that close it, and each import that points up,
otherwise. Also fails when two files share a name (`trace.rs` in two
folders): each file's name says what it holds, once. `--print` lists every
module's imports.
"""

import os
import re
import sys


LAYERS = [
    ("JSON reading and writing", {"json"}),
    ("Kubernetes' vocabulary", {"kube"}),
    ("the request, its look-ups and its plan; the settings' problem type", {"request", "settings_problem"}),
    ("errors, the explanation's record and the stages' door", {"error", "explain", "stage"}),
    ("stages", {"capi", "tags"}),
    ("settings", {"settings"}),
    ("decision", {"evaluate"}),
    ("wire", {"wire"}),
    ("the floors' entry", {"floor"}),
    ("test oracle", {"invariants"}),
]
CORE = os.path.join("crates", "core", "src")
# Layers whose modules sit side by side and may not import each other.
SIDE_BY_SIDE = {"stages"}


def top(module):
    """The top-level module (folder) a module is in; None for the root."""
    parts = module.split("::")
    return parts[1] if len(parts) > 1 else None


def layer_breaches(graph):
    """Each import from one top-level module to another that points up a
    layer, or sideways between modules that sit side by side, and each
    top-level module in no layer."""
    layer_of = {name: i for i, (_, names) in enumerate(LAYERS) for name in names}
    breaches = []
    for name in sorted({top(m) for m in graph} - {None} - set(layer_of)):
        breaches.append(f"crate::{name} is in no layer: add it to LAYERS in scripts/check_module_graph.py")
    for module in sorted(graph):
        a = top(module)
        for imported in sorted(graph[module]):
            b = top(imported)
            if a is None or b is None or a == b or a not in layer_of or b not in layer_of:
                continue
            la, lb = layer_of[a], layer_of[b]
            if lb > la:
                breaches.append(
                    f"{module} ({LAYERS[la][0]}) imports {imported} ({LAYERS[lb][0]}), a layer above"
                )
            elif la == lb and LAYERS[la][0] in SIDE_BY_SIDE:
                breaches.append(
                    f"{module} imports {imported}: the {LAYERS[la][0]} sit side by side"
                )
    return breaches


def shared_names(files):
    """Each file name two or more core files share, with their paths: a
    name is how a reader finds a file, so each says what it holds once."""
    by_name = {}
    for path in files:
        by_name.setdefault(os.path.basename(path), []).append(path)
    return {name: sorted(paths) for name, paths in sorted(by_name.items()) if len(paths) > 1}


def modules(src):
    """{module path: file} for every .rs file below src."""
    found = {}
    for folder, _, files in os.walk(src):
        for name in files:
            if not name.endswith(".rs"):
                continue
            path = os.path.join(folder, name)
            rel = os.path.relpath(path, src)[: -len(".rs")]
            found["crate" if rel in ("lib", "main") else "crate::" + rel.replace(os.sep, "::")] = path
    return found


def strip(text):
    """The code of a file without comments, strings and test modules."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    text = re.sub(r'"(?:\\.|[^"\\])*"', '""', text)
    # A visibility (`pub(in crate::capi)`) names a module, and imports nothing.
    text = re.sub(r"pub\(in [^)]*\)", "pub", text)
    out, depth, skip_from = [], 0, None
    # Drop every item behind #[cfg(test)] (a `mod tests { … }` block or a
    # single item): from the attribute to the end of its braces.
    pieces = re.split(r"(#\[cfg\(test\)\]|[{}])", text)
    for piece in pieces:
        if piece == "#[cfg(test)]" and skip_from is None:
            skip_from = depth
            continue
        if piece == "{":
            depth += 1
        elif piece == "}":
            depth -= 1
            if skip_from is not None and depth == skip_from:
                skip_from = None
                continue
        elif skip_from is not None and depth == skip_from and ";" in piece:
            # `#[cfg(test)] use …;` or `#[cfg(test)] mod tests;`
            piece = piece.split(";", 1)[1]
            skip_from = None
        if skip_from is None:
            out.append(piece)
    return "".join(out)


def expand(tree):
    """`a::{b, c::{d, e}}` as ['a::b', 'a::c::d', 'a::c::e']."""
    tree = re.sub(r"\s+", "", tree)
    start = tree.find("{")
    if start < 0:
        return [tree]
    prefix, depth, parts, last = tree[:start], 0, [], start + 1
    for i in range(start, len(tree)):
        if tree[i] == "{":
            depth += 1
        elif tree[i] == "}":
            depth -= 1
            if depth == 0:
                parts.append(tree[last:i])
                break
        elif tree[i] == "," and depth == 1:
            parts.append(tree[last:i])
            last = i + 1
    return [p for part in parts if part for p in expand(prefix + part)]


def imports(module, code, known):
    """The modules `module`'s code names, itself left out."""
    parent = module.rsplit("::", 1)[0] if module != "crate" else None
    children = set(re.findall(r"\bmod\s+([a-z_][a-z0-9_]*)\s*;", code))
    paths = []
    for tree in re.findall(r"\buse\s+([^;]+);", code):
        paths += [p.split(" as ")[0] for p in expand(tree)]
    code_without_uses = re.sub(r"\buse\s+[^;]+;", " ", code)
    paths += re.findall(r"\b(?:crate|super|self)(?:::[A-Za-z_][A-Za-z0-9_]*)+", code_without_uses)
    paths += [
        c + m for c in children for m in re.findall(r"\b" + c + r"((?:::[A-Za-z_][A-Za-z0-9_]*)+)", code_without_uses)
    ]
    found = set()
    for path in paths:
        parts = path.replace("r#", "").split("::")
        head = parts[0]
        if head == "crate":
            base = ["crate"]
        elif head == "super" and parent:
            base = parent.split("::")
        elif head == "self":
            base = module.split("::")
        elif head in children:
            base = module.split("::") + [head]
        else:
            continue
        rest = parts[1:] if head in ("crate", "super", "self") else parts[1:]
        while rest and rest[0] == "super":
            base, rest = base[:-1], rest[1:]
        names = base + rest
        for k in range(len(names), 0, -1):
            candidate = "::".join(names[:k])
            if candidate in known:
                if candidate != module:
                    found.add(candidate)
                break
    return found


def cycles(graph):
    """The strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on_stack, result, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                result.append(sorted(component))

    sys.setrecursionlimit(10_000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return result


def main(argv):
    src = next((a for a in argv if not a.startswith("--")), CORE)
    known = modules(src)
    graph = {}
    for module, path in known.items():
        with open(path, encoding="utf-8") as f:
            graph[module] = imports(module, strip(f.read()), known)
    if "--print" in argv:
        for module in sorted(graph):
            print(module, "->", ", ".join(sorted(graph[module])) or "-")
    found = cycles(graph)
    # The layers are the core's; every other crate is held to no cycle.
    breaches = layer_breaches(graph) if os.path.normpath(src) == CORE else []
    shared = shared_names(known.values())
    if not found and not breaches and not shared:
        print(
            f"{len(known)} modules in {src}, no import cycle, "
            + ("every import down a layer, " if os.path.normpath(src) == CORE else "")
            + "no file name twice"
        )
        return 0
    for component in found:
        print("import cycle:", " ".join(component), file=sys.stderr)
        for module in component:
            inside = sorted(graph[module] & set(component))
            print(f"  {module} imports {', '.join(inside)}", file=sys.stderr)
    for breach in breaches:
        print("layer:", breach, file=sys.stderr)
    for name, paths in shared.items():
        print(f"file name {name} is shared by {', '.join(paths)}: rename each after what it holds",
              file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
