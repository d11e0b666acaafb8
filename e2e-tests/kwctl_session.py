"""Reading the kwctl sessions the runner records (`run --record-session`):
one reader for the e2e suites and scripts that check which look-ups the
policy made (capi_helpers.bash, robustness.bats, audit_agreement.py).

    python3 e2e-tests/kwctl_session.py lookups SESSION.yml
        prints the look-ups as Kind/namespace/name separated by spaces
        (`-` for none), the form lookups.tsv and test_data/bad/cases.tsv use.
"""
import sys

import yaml

TAG = "!KubernetesGetResource\n"


def exchanges(text, where="session"):
    """[(request, response)] of a session's text: each request the
    `!KubernetesGetResource` document as a dict (field masks sorted), each
    response the recorded `{type, payload | message}`."""
    entries = yaml.safe_load(text)
    if entries is None:
        return []
    if not isinstance(entries, list):
        sys.exit(f"{where}: not a kwctl session (a YAML list)")
    out = []
    for entry in entries:
        request_text = (entry or {}).get("request", "")
        if not request_text.startswith(TAG):
            sys.exit(f"{where}: a request that is not a {TAG.strip()}: {request_text!r}")
        request = yaml.safe_load(request_text[len(TAG):])
        if request.get("field_masks") is not None:
            request["field_masks"] = sorted(request["field_masks"])
        out.append((request, entry.get("response")))
    return out


def read(path):
    """[(request, response)] of the session file at `path`."""
    with open(path, encoding="utf-8") as f:
        return exchanges(f.read(), path)


def lookups_line(pairs):
    """The look-ups as Kind/namespace/name separated by spaces, `-` for none."""
    return " ".join(f"{r['kind']}/{r.get('namespace') or ''}/{r['name']}" for r, _ in pairs) or "-"


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] != "lookups":
        sys.exit("usage: kwctl_session.py lookups SESSION.yml")
    print(lookups_line(read(sys.argv[2])))
