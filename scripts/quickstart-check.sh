#!/usr/bin/env bash
# Runs the README's quickstart as written, on a fresh clone of this repository (what is
# committed, HEAD) in a temporary directory: the quickstart block, then a check that the
# example receiver verified the notification, that the delivery is recorded as delivered,
# that the dashboard's sign-in page (in Chromium) lets the user the quickstart made in and
# shows the destination, and that git sees nothing new (the secrets are where .gitignore
# covers them), then the clean-up block, after which nothing may be left running or lying in
# the clone.
#
# Changed from the README, and only this: free ports in place of 8787 and 8443 on the one
# line that sets them (others may be using those on this machine; the check fails if either
# number appears anywhere else, since the README promises they are set in one place); `npm
# link` links into a prefix in the temporary directory, not the user's; npm prefers its cache
# (the registry is asked only for what the cache lacks).
set -euo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/svc-quickstart-XXXXXX")"
runner_pid=""
cleanup() {
  if [ -n "$runner_pid" ]; then kill -- "-$runner_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

fail() {
  echo "quickstart-check: FAILED: $*" >&2
  echo "--- the quickstart's output ---" >&2
  cat "$work/quickstart.log" >&2 || true
  if [ -f "$work/clone/.quickstart/server.log" ]; then
    echo "--- the server's log ---" >&2
    cat "$work/clone/.quickstart/server.log" >&2
  fi
  exit 1
}

free_port() {
  node -e 'const s = require("node:net").createServer().listen(0, "127.0.0.1", () => {
    console.log(s.address().port); s.close(); });'
}

# The sh block after a heading (the first one below it), from the README of the clone.
block_after() {
  awk -v heading="$1" '
    index($0, heading) == 1 { found = 1; next }
    found && /^```sh$/ { inside = 1; next }
    inside && /^```$/ { exit }
    inside { print }
  ' README.md
}

git clone --quiet "$repo" "$work/clone"
cd "$work/clone"
api_port="$(free_port)"
receiver_port="$(free_port)"
ports_line="export SVC_PORT=8787 RECEIVER_PORT=8443"
with_ports() { sed -e "s/^$ports_line\$/export SVC_PORT=$api_port RECEIVER_PORT=$receiver_port/"; }
quickstart="$(block_after "## Quickstart" | with_ports)"
teardown="$(block_after "When you are done" | with_ports)"
[ -n "$quickstart" ] || fail "no quickstart block in README.md"
[ -n "$teardown" ] || fail "no clean-up block in README.md"
block_after "## Quickstart" | grep -qx "$ports_line" || fail "the quickstart does not begin with '$ports_line'"
if printf '%s\n%s\n' "$quickstart" "$teardown" | grep -n "8787\|8443"; then
  fail "a port is written outside the quickstart's one line of ports (above)"
fi

check='
for _ in $(seq 1 60); do
  grep -q "notification evt_[0-9a-z_]*: job.completed" "$QUICKSTART_LOG" && break
  sleep 0.5
done
grep -q "notification evt_[0-9a-z_]*: job.completed" "$QUICKSTART_LOG" || { echo "CHECK: the receiver verified nothing"; exit 1; }
if grep -q "signature_\|verification failed" "$QUICKSTART_LOG"; then echo "CHECK: a verification failed"; exit 1; fi
for _ in $(seq 1 60); do
  status="$(svc webhooks get "$(svc webhooks list --field id | head -n 1)" --field last_delivery 2>/dev/null |
    node -e "let s = \"\"; process.stdin.on(\"data\", (d) => (s += d)).on(\"end\", () => console.log(JSON.parse(s || \"null\")?.status ?? \"\"))" || true)"
  [ "$status" = "delivered" ] && break
  sleep 0.5
done
[ "$status" = "delivered" ] || { echo "CHECK: last_delivery.status is \"$status\", not delivered"; exit 1; }
node dist/scripts/quickstart-dashboard.js "$SERVICE_API_URL/ui/" you@example.com .quickstart/password.txt \
  "https://localhost:$RECEIVER_PORT/hooks"
[ -z "$(git status --porcelain)" ] || { echo "CHECK: git would pick up:"; git status --porcelain; exit 1; }
echo "CHECK: verified delivery; signed in to the dashboard; git sees nothing new"
'

{
  echo 'set -euo pipefail'
  printf '%s\n' "$quickstart"
  printf '%s\n' "$check"
  printf '%s\n' "$teardown"
  echo '[ -z "$(jobs -p)" ] || { echo "CHECK: still running after the teardown: $(jobs -p)"; exit 1; }'
  echo 'echo "CHECK: torn down"'
} > "$work/quickstart.sh"

export QUICKSTART_LOG="$work/quickstart.log"
export NPM_CONFIG_PREFIX="$work/prefix"
export PATH="$work/prefix/bin:$PATH"
export npm_config_prefer_offline=true npm_config_audit=false npm_config_fund=false
export npm_config_update_notifier=false
export XDG_CONFIG_HOME="$work/config"
unset SVC_PORT SERVICE_API_URL SVC_DESTINATION_PORTS
unset SVC_DATA_DIR SVC_DATABASE_URL SVC_ENCRYPTION_KEY SERVICE_API_KEY SERVICE_WORKSPACE_ID

# In a process group of its own, so that whatever it leaves running can be stopped.
set +e
setsid bash "$work/quickstart.sh" > "$QUICKSTART_LOG" 2>&1 &
runner_pid=$!
wait "$runner_pid"
status=$?
runner_pid=""
set -e
[ "$status" -eq 0 ] || fail "the quickstart exited with $status"
grep -q "^CHECK: torn down" "$QUICKSTART_LOG" || fail "the teardown did not finish"
[ ! -e .quickstart ] || fail "the teardown left .quickstart behind"
[ ! -e "$work/prefix/bin/svc" ] || fail "the teardown left svc linked"
[ -z "$(git status --porcelain)" ] || fail "git sees changes after the teardown"
echo "quickstart-check: the README's quickstart ends in a verified delivery and a dashboard sign-in, and its clean-up leaves nothing"
