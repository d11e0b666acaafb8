#!/usr/bin/env python3
"""The OCI manifest `make push` (the runner's `push`) sends for an annotated module, and its digest.

  oci_manifest.py MODULE            prints sha256:<digest of the manifest>
  oci_manifest.py --json MODULE     prints the manifest itself

The manifest is a pure function of the module: config `{}`
(application/vnd.wasm.config.v1+json), one layer (the module,
application/vnd.wasm.content.layer.v1+wasm), and the module's metadata
annotations as kwctl copies them (push.rs): multi-line values left out, the
others trimmed, io.kubewarden.policy.source also as
org.opencontainers.image.source. oci-client writes it as compact JSON with its
keys sorted and no mediaType member. So the digest a team pins is known before
anything is pushed: `make release` prints it in the release notes, and
e2e-tests/release.bats checks it against what the registry answers to a push.
"""

import hashlib
import json
import sys

CONFIG = b"{}"
CONFIG_TYPE = "application/vnd.wasm.config.v1+json"
LAYER_TYPE = "application/vnd.wasm.content.layer.v1+wasm"


def leb128(data, pos):
    value = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, pos


def metadata_annotations(data):
    """The annotations of the module's io.kubewarden.metadata custom section."""
    if data[:4] != b"\0asm":
        sys.exit("oci_manifest: not a wasm module")
    pos = 8
    while pos < len(data):
        section_id = data[pos]
        size, pos = leb128(data, pos + 1)
        end = pos + size
        if section_id == 0:
            name_len, name_pos = leb128(data, pos)
            if data[name_pos:name_pos + name_len] == b"io.kubewarden.metadata":
                return json.loads(data[name_pos + name_len:end]).get("annotations") or {}
        pos = end
    sys.exit("oci_manifest: the module is not annotated (no io.kubewarden.metadata section)")


def lines(value):
    """Rust's str::lines count: '\\n'-separated, a final empty line not counted."""
    parts = value.split("\n")
    if parts[-1] == "":
        parts.pop()
    return len(parts)


def manifest(module):
    annotations = {k: v.strip() for k, v in metadata_annotations(module).items() if lines(v) <= 1}
    source = annotations.get("io.kubewarden.policy.source")
    if source is not None:
        annotations.setdefault("org.opencontainers.image.source", source)
    def descriptor(media_type, blob):
        return {"mediaType": media_type, "digest": "sha256:" + hashlib.sha256(blob).hexdigest(), "size": len(blob)}
    doc = {"schemaVersion": 2, "config": descriptor(CONFIG_TYPE, CONFIG), "layers": [descriptor(LAYER_TYPE, module)]}
    if annotations:
        doc["annotations"] = annotations
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def main(argv):
    as_json = argv[:1] == ["--json"]
    args = argv[1:] if as_json else argv
    if len(args) != 1:
        sys.exit(__doc__.split("\n\n")[0])
    with open(args[0], "rb") as f:
        body = manifest(f.read())
    if as_json:
        sys.stdout.buffer.write(body + b"\n")
    else:
        print("sha256:" + hashlib.sha256(body).hexdigest())


if __name__ == "__main__":
    main(sys.argv[1:])
