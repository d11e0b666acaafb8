"""What the dump-driven e2e scripts share (audit_agreement.py,
scanner_dump.py): reading a `kubectl get -o yaml` dump and keying its
objects. Their parent look-ups are answered by the runner itself, from the
same dump (`policy-runner run --parents DUMP`), and recorded with
`--record-session` when a kwctl session is needed: nothing here writes a
session or predicts a look-up.
"""
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
