"""What the dump-driven e2e scripts share (audit_agreement.py,
scanner_dump.py): reading a `kubectl get -o yaml` dump, keying its objects,
and writing kwctl replay-session exchanges that answer the policy's parent
look-ups from it.
"""
import json

import yaml

LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def dump_objects(path):
    """Every object of a multi-document YAML dump, `kind: List` flattened."""
    with open(path, encoding="utf-8") as f:
        documents = [d for d in yaml.load_all(f, Loader=LOADER) if d is not None]
    objects = []
    for document in documents:
        if document.get("kind") == "List":
            objects.extend(document.get("items") or [])
        else:
            objects.append(document)
    return objects


def key(api_version, kind, namespace, name):
    return (api_version, kind, namespace or None, name)


def not_found(api_version, kind, namespace, name):
    """policy-server's answer when the API server has no such object."""
    return {"type": "Error", "message":
            f"Cannot find {api_version}/{kind} named '{name}' "
            f"inside of namespace 'Some(\"{namespace}\")'"}


def exchange(api_version, kind, namespace, name, masks, response):
    """One replay-session exchange: the guest's `get_resource` request as
    kwctl records it (YAML text), and `response`."""
    lines = ["!KubernetesGetResource", f"api_version: {api_version}", f"kind: {kind}",
             f"name: {name}"]
    if namespace is not None:
        lines.append(f"namespace: {namespace}")
    lines += ["disable_cache: false", "field_masks:"] + [f"- {m}" for m in masks]
    return {"type": "Exchange", "request": "\n".join(lines) + "\n", "response": response}


def found(obj, compact=False):
    """A successful answer holding `obj`."""
    separators = (",", ":") if compact else None
    return {"type": "Success", "payload": json.dumps(obj, separators=separators)}
