#!/usr/bin/env bash
# Checks the fleet's CI files (docs/fleet.md): the GitHub Actions workflow with actionlint
# (installed from the Go module proxy when missing), the Buildkite pipeline as YAML with the
# keys Buildkite reads.
set -euo pipefail
cd "$(dirname "$0")/.."

ACTIONLINT_VERSION=v1.7.7
if ! command -v actionlint >/dev/null 2>&1; then
  if ! command -v go >/dev/null 2>&1; then
    echo "actionlint is missing and so is go: apt-get install golang-go (or install Go), then run again" >&2
    exit 1
  fi
  GOBIN="${GOBIN:-$(go env GOPATH)/bin}"
  export GOBIN
  go install "github.com/rhysd/actionlint/cmd/actionlint@${ACTIONLINT_VERSION}"
  export PATH="$GOBIN:$PATH"
fi
actionlint -no-color .github/workflows/*.yml
echo "actionlint: .github/workflows/*.yml pass"

python3 - .buildkite/pipeline.yml <<'PY'
import sys, yaml
path = sys.argv[1]
with open(path) as f:
    doc = yaml.safe_load(f)
steps = doc.get("steps") if isinstance(doc, dict) else None
if not isinstance(steps, list) or not steps:
    sys.exit(f"{path}: no 'steps' list")
for i, s in enumerate(steps):
    if not isinstance(s, dict):
        sys.exit(f"{path}: step {i + 1} is not a mapping")
    if not ({"command", "commands", "wait", "block", "trigger", "group"} & s.keys()):
        sys.exit(f"{path}: step {i + 1} has no command, wait, block, trigger or group")
print(f"{path}: valid YAML, {len(steps)} steps")
PY
