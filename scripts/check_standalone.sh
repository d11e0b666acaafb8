#!/usr/bin/env bash
# The repository stands alone: no file in it may need or name a path outside
# the clone. Users clone it with nothing beside it, so a file that cites a
# sibling directory of the clone (the research notes and CRD copies a
# development machine keeps next to it) or an absolute path of that machine
# points at nothing for them. CRD schemas live in crds/ (crds/README.md);
# cite upstream sources by repository, tag and path instead of local copies.
#
# Checks every file git would commit: the tracked ones and the untracked ones
# that are not ignored (`git ls-files --cached --others --exclude-standard`),
# text files only. Fails naming file:line for each hit. `make check-standalone`
# runs it; `make check` runs that first.
#
# The patterns are spelled so that this file's own text does not match them:
# a sibling "shared" folder reached by "..", that folder's "reference"
# subdirectory, and an absolute path under the machine's work root.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

dots='\.\.'
patterns=(
  -e "${dots}/shared"
  -e 'shared[/]reference'
  -e '(^|[^[:alnum:]._~-])/wor[k]/'
)

# git grep: tracked files plus untracked, non-ignored ones; -I skips binary
# files. Exit 1 means no match.
rc=0
hits=$(git grep -n -I -E --untracked "${patterns[@]}" -- .) || rc=$?
if [ "$rc" -gt 1 ]; then
  echo "check-standalone: git grep failed (exit $rc)" >&2
  exit 2
fi
if [ -n "$hits" ]; then
  echo "$hits" >&2
  echo "check-standalone: $(printf '%s\n' "$hits" | wc -l) line(s) above name a path outside the repository" \
    "(file:line). Cite the upstream source (repository, tag, path) or the in-repository copy (crds/)." >&2
  exit 1
fi
echo "check-standalone: no file names a path outside the repository ($(git ls-files --cached --others --exclude-standard | wc -l) files)"
