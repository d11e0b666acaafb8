#!/usr/bin/env bats
# CHANGELOG.md is well-formed (scripts/changelog.py check: Keep a Changelog's
# headings, semantic versions, real dates, newest first, upgrade notes per
# version), the version Cargo.toml and policy-metadata.yml carry is one of its
# released versions, and the checker refuses each kind of malformed changelog
# (so a pass means something). `notes` gives a version's section, which
# `make release` ships as the release notes; `release` refuses notes that
# would not describe the module built (entries left under [Unreleased],
# another commit named), which `make release` asks first.
#
#   bats e2e-tests/changelog.bats     (from the repository root; python3 only)

bats_require_minimum_version 1.5.0

CHANGELOG=scripts/changelog.py

# good: a minimal well-formed changelog, written to $BATS_TEST_TMPDIR/c.md
good() {
  cat >"$BATS_TEST_TMPDIR/c.md" <<'MD'
# Changelog

## Compatibility

Text.

## [Unreleased]

### Added

- Something new.

## [1.10.0] - 2026-12-01

### Fixed

- A fix.

### Upgrade notes

None.

## [1.9.0-rc.1] - 2026-11-30

### Upgrade notes

None.

## [0.1.0] - 2026-11-25

### Added

- The first version.

### Upgrade notes

The first version.
MD
}

# refused SED-EXPRESSION MESSAGE: the good changelog edited by sed is refused,
# and the checker's message contains MESSAGE.
refused() {
  good
  sed -i -e "$1" "$BATS_TEST_TMPDIR/c.md"
  run --separate-stderr python3 "$CHANGELOG" check "$BATS_TEST_TMPDIR/c.md"
  echo "stderr: $stderr"
  [ "$status" -eq 1 ]
  [[ "$stderr" == *"$2"* ]]
}

@test "CHANGELOG.md is well-formed and holds the version of Cargo.toml and policy-metadata.yml" {
  run --separate-stderr python3 "$CHANGELOG" check
  echo "stdout: $output"
  echo "stderr: $stderr"
  [ "$status" -eq 0 ]
  version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n1)
  [ "$version" = "$(sed -n 's/^ *io\.kubewarden\.policy\.version: *//p' policy-metadata.yml)" ]
  grep -Eq "^## \[$version\] - [0-9]{4}-[0-9]{2}-[0-9]{2}$" CHANGELOG.md
}

@test "a well-formed changelog passes, pre-releases ordered by semantic versioning" {
  good
  run python3 "$CHANGELOG" check "$BATS_TEST_TMPDIR/c.md"
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *"versions 1.10.0, 1.9.0-rc.1, 0.1.0"* ]]
}

@test "the checker refuses a version that is not semantic" {
  refused 's/^## \[1.10.0\]/## [1.10]/' 'neither `## [Unreleased]`'
  refused 's/^## \[1.10.0\]/## [01.10.0]/' 'neither `## [Unreleased]`'
}

@test "the checker refuses a date that is not a calendar date, or missing" {
  refused 's/2026-12-01/2026-13-01/' 'is not a calendar date'
  refused 's/^## \[1.10.0\] - 2026-12-01/## [1.10.0]/' 'neither `## [Unreleased]`'
}

@test "the checker refuses versions out of order, dates out of order and a version twice" {
  refused 's/^## \[1.10.0\]/## [0.0.9]/' 'comes after the older 0.0.9'
  refused 's/2026-11-25/2026-12-31/' 'is dated 2026-12-31, after the newer'
  refused 's/^## \[1.9.0-rc.1\]/## [0.1.0]/' 'version 0.1.0 appears more than once'
}

@test "the checker refuses Unreleased after a version, and another heading among the versions" {
  refused '/^## \[Unreleased\]/d; s/^## \[0.1.0\] - 2026-11-25/## [Unreleased]\n\n### Added\n\n- x\n\n&/' \
    '[Unreleased] must be the first version'
  refused 's/^## \[0.1.0\] - 2026-11-25/## Notes\n\nText.\n\n&/' 'comes after a version'
}

@test "the checker refuses an unknown subsection, and a released version without upgrade notes" {
  refused 's/^### Fixed/### Bugs/' 'subsection `### Bugs` is not one of'
  refused '0,/^### Upgrade notes/s//### Removed/' '1.10.0 has no `### Upgrade notes`'
}

@test "notes prints one version's section; a version the changelog lacks exits 3" {
  good
  run --separate-stderr python3 "$CHANGELOG" notes 1.10.0 "$BATS_TEST_TMPDIR/c.md"
  [ "$status" -eq 0 ]
  [ "$output" = "$(printf '### Fixed\n\n- A fix.\n\n### Upgrade notes\n\nNone.')" ]

  run --separate-stderr python3 "$CHANGELOG" notes 2.0.0 "$BATS_TEST_TMPDIR/c.md"
  [ "$status" -eq 3 ]
  [[ "$stderr" == *"has no section \`## [2.0.0] - YYYY-MM-DD\`"* ]]
}

# release VERSION COMMIT: whether VERSION's notes describe the module built
# from COMMIT, which `make release` asks before it builds anything.
HEAD_COMMIT=0123456789abcdef0123456789abcdef01234567

@test "CHANGELOG.md can be released from HEAD: nothing under [Unreleased], no other commit named" {
  version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n1)
  run --separate-stderr python3 "$CHANGELOG" release "$version" "$(git rev-parse HEAD)"
  echo "stdout: $output"
  echo "stderr: $stderr"
  [ "$status" -eq 0 ]
  [ "$output" = "changelog: the notes of $version describe the module built from $(git rev-parse HEAD | cut -c1-12)" ]
}

@test "release refuses entries left under [Unreleased]: they would ship without being in the notes" {
  good
  run --separate-stderr python3 "$CHANGELOG" release 1.10.0 "$HEAD_COMMIT" "$BATS_TEST_TMPDIR/c.md"
  echo "stderr: $stderr"
  [ "$status" -eq 1 ]
  [[ "$stderr" == *"[Unreleased] holds 1 line(s) (first: '- Something new.')"* ]]
  [[ "$stderr" == *"move them under \`## [1.10.0]\`"* ]]
  # An empty [Unreleased], or none, is released.
  sed -i '/^- Something new\.$/d' "$BATS_TEST_TMPDIR/c.md"
  run python3 "$CHANGELOG" release 1.10.0 "$HEAD_COMMIT" "$BATS_TEST_TMPDIR/c.md"
  [ "$status" -eq 0 ]
  sed -i '/^## \[Unreleased\]$/,/^## \[1\.10\.0\]/{/^## \[1\.10\.0\]/!d}' "$BATS_TEST_TMPDIR/c.md"
  run ! grep -q Unreleased "$BATS_TEST_TMPDIR/c.md"
  run python3 "$CHANGELOG" release 1.10.0 "$HEAD_COMMIT" "$BATS_TEST_TMPDIR/c.md"
  [ "$status" -eq 0 ]
}

@test "release refuses notes that name another commit than the one built" {
  good
  sed -i '/^- Something new\.$/d; s/^- A fix\.$/- A fix.\n\nThe policy as it stood at commit `b5acbbd`./' "$BATS_TEST_TMPDIR/c.md"
  run --separate-stderr python3 "$CHANGELOG" release 1.10.0 "$HEAD_COMMIT" "$BATS_TEST_TMPDIR/c.md"
  echo "stderr: $stderr"
  [ "$status" -eq 1 ]
  [[ "$stderr" == *"the notes of 1.10.0 name commit b5acbbd, but the module is built from 0123456789ab"* ]]
  # The commit built may be named; another version's notes are not this one's.
  run python3 "$CHANGELOG" release 1.10.0 "b5acbbd${HEAD_COMMIT:7}" "$BATS_TEST_TMPDIR/c.md"
  [ "$status" -eq 0 ]
  run python3 "$CHANGELOG" release 0.1.0 "$HEAD_COMMIT" "$BATS_TEST_TMPDIR/c.md"
  [ "$status" -eq 0 ]
}

@test "release refuses a version the changelog lacks and a commit that is not a full hash" {
  good
  run --separate-stderr python3 "$CHANGELOG" release 2.0.0 "$HEAD_COMMIT" "$BATS_TEST_TMPDIR/c.md"
  [ "$status" -eq 3 ]
  run --separate-stderr python3 "$CHANGELOG" release 1.10.0 b5acbbd "$BATS_TEST_TMPDIR/c.md"
  [ "$status" -eq 64 ]
  [[ "$stderr" == *"'b5acbbd' is not a full commit hash"* ]]
}
