#!/usr/bin/env python3
"""The runner's OCI image, written without a container daemon, and its digest.

  oci_image.py --binary FILE --version V --tag T --revision SHA --created EPOCH --source URL -o OUT.tar
      writes an OCI image layout (index.json, oci-layout, blobs/sha256/…) as one tar and prints
      sha256:<digest of the image manifest>
  oci_image.py --digest OUT.tar
      prints the digest of the manifest such a tar holds

The image holds one layer with one file, /policy-runner (FILE, mode 0755, owned by root), and no
shell or anything else: the entrypoint is the binary, the user 65532:65532 (non-root, as a Pod
Security `restricted` pod runs). Every byte is a function of the binary and the arguments, so two
builds of a commit give the same digest (make check-reproducible):

- the tar entries have fixed owners, modes and times (EPOCH: the commit's date), in sorted order;
- the layer is gzip with a header written here (no name, time 0, OS "unix"), so only zlib's
  deflate at level 9 decides the compressed bytes, not Python's gzip module, whose header varies
  across Python versions;
- the JSON documents are compact with sorted keys.

The layout's index.json names the manifest with the tag (org.opencontainers.image.ref.name) and
with `kind: dev.cosignproject.cosign/image`, the annotation by which `cosign load` (make
push-runner-image) finds the image to upload in a layout.
"""

import argparse
import hashlib
import io
import json
import struct
import sys
import tarfile
import time
import zlib

MANIFEST_TYPE = "application/vnd.oci.image.manifest.v1+json"
INDEX_TYPE = "application/vnd.oci.image.index.v1+json"
CONFIG_TYPE = "application/vnd.oci.image.config.v1+json"
LAYER_TYPE = "application/vnd.oci.image.layer.v1.tar+gzip"
BINARY = "policy-runner"
USER = "65532:65532"


def canonical(doc):
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def digest(data):
    return "sha256:" + hashlib.sha256(data).hexdigest()


def descriptor(media_type, data, **extra):
    return {"mediaType": media_type, "digest": digest(data), "size": len(data), **extra}


def tar_of(entries, mtime):
    """A ustar archive of (name, bytes or None for a directory, mode), in the order given."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for name, data, mode in entries:
            info = tarfile.TarInfo(name)
            info.mtime, info.mode, info.uid, info.gid, info.uname, info.gname = mtime, mode, 0, 0, "", ""
            if data is None:
                info.type = tarfile.DIRTYPE
                tar.addfile(info)
            else:
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


def gzip_of(data):
    """RFC 1952: header (no name, mtime 0, XFL 2 for level 9, OS 3), raw deflate, CRC-32, size."""
    deflate = zlib.compressobj(9, zlib.DEFLATED, -15, 9)
    body = deflate.compress(data) + deflate.flush()
    return b"\x1f\x8b\x08\x00" + b"\x00\x00\x00\x00" + b"\x02\x03" + body + struct.pack(
        "<II", zlib.crc32(data) & 0xFFFFFFFF, len(data) & 0xFFFFFFFF)


def image(args):
    with open(args.binary, "rb") as f:
        binary = f.read()
    epoch = int(args.created)
    created = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch))
    layer_tar = tar_of([(BINARY, binary, 0o755)], epoch)
    layer = gzip_of(layer_tar)
    labels = {
        "org.opencontainers.image.created": created,
        "org.opencontainers.image.description": "policy-runner, the metadata-propagation policy's host tool "
                                                "(audit --cluster --fix), statically linked",
        "org.opencontainers.image.licenses": "Apache-2.0",
        "org.opencontainers.image.revision": args.revision,
        "org.opencontainers.image.source": args.source,
        "org.opencontainers.image.title": "metadata-propagation-runner",
        "org.opencontainers.image.version": args.version,
    }
    config = canonical({
        "architecture": "amd64",
        "os": "linux",
        "created": created,
        "config": {"User": USER, "Entrypoint": ["/" + BINARY], "WorkingDir": "/", "Labels": labels},
        "rootfs": {"type": "layers", "diff_ids": [digest(layer_tar)]},
        "history": [{"created": created, "created_by": "scripts/oci_image.py: /" + BINARY}],
    })
    manifest = canonical({
        "schemaVersion": 2,
        "mediaType": MANIFEST_TYPE,
        "config": descriptor(CONFIG_TYPE, config),
        "layers": [descriptor(LAYER_TYPE, layer)],
        "annotations": labels,
    })
    index = canonical({
        "schemaVersion": 2,
        "mediaType": INDEX_TYPE,
        "manifests": [descriptor(MANIFEST_TYPE, manifest,
                                 platform={"architecture": "amd64", "os": "linux"},
                                 annotations={"org.opencontainers.image.ref.name": args.tag,
                                              "kind": "dev.cosignproject.cosign/image"})],
    })
    blobs = sorted((digest(b)[len("sha256:"):], b) for b in (config, layer, manifest))
    entries = [("blobs", None, 0o755), ("blobs/sha256", None, 0o755)]
    entries += [("blobs/sha256/" + name, data, 0o644) for name, data in blobs]
    entries += [("index.json", index, 0o644), ("oci-layout", canonical({"imageLayoutVersion": "1.0.0"}), 0o644)]
    with open(args.output, "wb") as f:
        f.write(tar_of(entries, epoch))
    print(digest(manifest))


def manifest_digest(path):
    with tarfile.open(path) as tar:
        index = json.load(tar.extractfile("index.json"))
    manifests = index.get("manifests") or []
    if len(manifests) != 1:
        sys.exit(f"oci_image: {path}: expected one manifest in index.json, found {len(manifests)}")
    return manifests[0]["digest"]


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--digest", metavar="TAR", help="print the manifest digest of an image tar")
    parser.add_argument("--binary")
    parser.add_argument("--version")
    parser.add_argument("--tag")
    parser.add_argument("--revision")
    parser.add_argument("--created", help="seconds since the epoch: the commit's date")
    parser.add_argument("--source")
    parser.add_argument("-o", "--output")
    args = parser.parse_args(argv)
    if args.digest:
        print(manifest_digest(args.digest))
        return
    missing = [n for n in ("binary", "version", "tag", "revision", "created", "source", "output") if not getattr(args, n)]
    if missing:
        parser.error("missing " + ", ".join("--" + n for n in missing))
    image(args)


if __name__ == "__main__":
    main(sys.argv[1:])
