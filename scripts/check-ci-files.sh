#!/usr/bin/env bash
# Checks the fleet's CI files (docs/fleet.md): the GitHub Actions workflow with actionlint
# (installed from the Go module proxy when missing), the Buildkite pipeline as YAML with the
# keys Buildkite reads; in both, every `--machines` list names exactly the machines the bench
# jobs save as (VERNIER_MACHINE), the x86-64 and the Arm ones.
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

python3 - .buildkite/pipeline.yml .github/workflows/fleet.yml <<'PY'
import re, sys, yaml
pipeline, workflow = sys.argv[1:3]
with open(pipeline) as f:
    doc = yaml.safe_load(f)
steps = doc.get("steps") if isinstance(doc, dict) else None
if not isinstance(steps, list) or not steps:
    sys.exit(f"{pipeline}: no 'steps' list")
for i, s in enumerate(steps):
    if not isinstance(s, dict):
        sys.exit(f"{pipeline}: step {i + 1} is not a mapping")
    if not ({"command", "commands", "wait", "block", "trigger", "group"} & s.keys()):
        sys.exit(f"{pipeline}: step {i + 1} has no command, wait, block, trigger or group")
    agents = s.get("agents", {})
    if not isinstance(agents, dict) or not all(isinstance(v, str) for v in agents.values()):
        sys.exit(f"{pipeline}: step {i + 1}'s agents are not tags (key: value)")
print(f"{pipeline}: valid YAML, {len(steps)} steps")


def machines_of(jobs, where):
    """The machines the bench jobs save as (VERNIER_MACHINE, a matrix's values expanded), and
    the lists every --machines option names."""
    saved, listed = set(), []
    for job in jobs:
        env = job.get("env") or {}
        name = env.get("VERNIER_MACHINE")
        if name is not None:
            m = re.fullmatch(r"\$?\{\{\s*matrix\.(\w+)\s*\}\}", str(name))
            if m:
                matrix = job.get("matrix") or job.get("strategy", {}).get("matrix") or {}
                matrix = matrix.get("setup", matrix)
                saved.update(matrix.get(m.group(1), []))
            else:
                saved.add(str(name))
        text = yaml.safe_dump(job)
        listed += [set(l.split(",")) for l in re.findall(r"--machines\s+([\w,.-]+)", text)]
    if not saved or not listed:
        sys.exit(f"{where}: no machine saved, or no --machines check")
    for l in listed:
        if l != saved:
            sys.exit(f"{where}: --machines {','.join(sorted(l))} is not the machines the jobs "
                     f"save as ({','.join(sorted(saved))})")
    print(f"{where}: every machine saved is checked ({', '.join(sorted(saved))})")


machines_of(steps, pipeline)
with open(workflow) as f:
    wf = yaml.safe_load(f)
jobs = []
for job in wf["jobs"].values():
    for step in job.get("steps", []):
        jobs.append({**step, "strategy": job.get("strategy", {})})
machines_of(jobs, workflow)
PY
