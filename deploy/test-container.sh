#!/usr/bin/env bash
# Builds the image from the Dockerfile and proves it by running it, as CI does:
#
#   sudo deploy/test-container.sh [--json FILE]      (npm run test:container)
#
# Installs what is missing (Debian's docker.io, debootstrap, docker-compose), starts dockerd if
# none runs (and stops it again), builds the local stand-in for node:20-bookworm-slim when that
# image is absent (no image registry is needed), builds the image with the host network and this
# machine's CA bundle as the extra-CA secret, then runs it on the host network, on a spare
# loopback port, with a named volume, and checks it. compose.yaml is checked with
# `docker-compose config`. Outside CI a machine that cannot run Docker skips the test with a
# message; under CI (CI=true) that is a failure. --json FILE writes the counts in Jest's format.
set -euo pipefail
cd "$(dirname "$0")/.."

image="${IMAGE:-petstore-api:test}"
base_image="node:20-bookworm-slim"
size_limit=250000000 # bytes, as `docker image inspect` counts them
ca_bundle="${CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}"
json_out=""
case "${1:-}" in -h | --help)
  echo 'usage: sudo deploy/test-container.sh [--json FILE]   (npm run test:container)'
  echo 'Builds the image from the Dockerfile and runs it, as CI does (installs Docker when missing);'
  echo '--json FILE writes the counts in Jest'"'"'s format.'
  exit 0
  ;;
esac
if [ "${1:-}" = "--json" ]; then json_out="${2:?--json needs a file}"; fi

t0=$(date +%s)
say() { echo "test-container: $*"; }
unavailable() {
  if [ "${CI:-}" = true ]; then
    say "FAILED: $*" >&2
    exit 1
  fi
  say "skipped: $*"
  exit 0
}

# ---- tools ---------------------------------------------------------------------------------------
missing=()
command -v dockerd >/dev/null || missing+=(docker.io)
command -v debootstrap >/dev/null || missing+=(debootstrap)
command -v docker-compose >/dev/null || missing+=(docker-compose)
if [ "${#missing[@]}" -gt 0 ]; then
  [ "$(id -u)" = 0 ] || unavailable "needs ${missing[*]} (install them, or run as root)"
  say "installing ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# Debian's client matches Debian's engine and has BuildKit built in (no buildx plugin needed).
if [ -x /usr/bin/docker ]; then docker=/usr/bin/docker; else docker=docker; fi
export DOCKER="$docker" DOCKER_BUILDKIT=1

# ---- engine --------------------------------------------------------------------------------------
dockerd_pid=""
names=()
volume=""
cleanup() {
  local status=$?
  for name in "${names[@]}"; do "$docker" rm -f -v "$name" >/dev/null 2>&1 || true; done
  [ -z "$volume" ] || "$docker" volume rm -f "$volume" >/dev/null 2>&1 || true
  if [ -n "$dockerd_pid" ]; then
    "$docker" image prune -f >/dev/null 2>&1 || true
    kill -TERM "$dockerd_pid" 2>/dev/null || true
    for _ in $(seq 1 60); do kill -0 "$dockerd_pid" 2>/dev/null || break; sleep 0.5; done
  fi
  return "$status"
}
trap cleanup EXIT

if ! "$docker" info >/dev/null 2>&1; then
  [ "$(id -u)" = 0 ] || unavailable "no Docker engine answers, and starting one needs root"
  dockerd_log="$(mktemp /tmp/petstore-dockerd.XXXXXX)"
  say "starting dockerd (log: $dockerd_log)"
  # Host networking only: no bridge, no iptables rules.
  dockerd --bridge=none --iptables=false --ip6tables=false >"$dockerd_log" 2>&1 &
  dockerd_pid=$!
  for _ in $(seq 1 60); do "$docker" info >/dev/null 2>&1 && break; sleep 0.5; done
  "$docker" info >/dev/null 2>&1 || {
    tail -n 20 "$dockerd_log" >&2
    unavailable "dockerd did not start"
  }
fi

# ---- images --------------------------------------------------------------------------------------
if ! "$docker" image inspect "$base_image" >/dev/null 2>&1; then
  say "$base_image is not here: building its stand-in with deploy/build-base-image.sh"
  t=$(date +%s)
  deploy/build-base-image.sh "$base_image"
  say "base image built in $(($(date +%s) - t)) s"
fi

[ -s "$ca_bundle" ] || unavailable "no CA bundle at $ca_bundle"
registry="$(npm config get registry 2>/dev/null || true)"
say "building $image"
t=$(date +%s)
build_log="$(mktemp /tmp/petstore-build.XXXXXX)"
if ! "$docker" build --network host --progress plain \
  --secret "id=ca_certs,src=$ca_bundle" \
  ${registry:+--build-arg "NPM_CONFIG_REGISTRY=$registry"} \
  -t "$image" . >"$build_log" 2>&1; then
  tail -n 40 "$build_log" >&2
  say "FAILED: docker build (log: $build_log)" >&2
  exit 1
fi
build_seconds=$(($(date +%s) - t))
rm -f "$build_log"
say "image built in $build_seconds s"

# ---- checks --------------------------------------------------------------------------------------
passed=0
failed=0
check() {
  local name="$1"
  shift
  if "$@"; then
    passed=$((passed + 1))
    echo "  ok    $name"
  else
    failed=$((failed + 1))
    echo "  FAIL  $name"
  fi
}

port="$(node -e 'const s = require("node:net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); })')"
base="http://127.0.0.1:$port"
volume="petstore-test-data-$$"
"$docker" volume create "$volume" >/dev/null
env_key="$(node -p 'require("node:crypto").randomBytes(24).toString("base64url")')"

# status URL [curl args...]: prints the HTTP status code (000 when nothing answers).
status() {
  local url="$1"
  shift
  curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$@" "$url" || true
}
wait_ready() {
  local name="$1"
  for _ in $(seq 1 120); do
    [ "$(status "$base/health/ready")" = 200 ] && return 0
    [ "$("$docker" inspect -f '{{.State.Running}}' "$name" 2>/dev/null)" = true ] || break
    sleep 0.5
  done
  "$docker" logs "$name" 2>&1 | tail -n 20 >&2
  return 1
}
# run NAME [docker run options...]: starts the image on the host network with the named volume.
run() {
  local name="$1"
  shift
  names+=("$name")
  "$docker" run -d --name "$name" --network host -v "$volume:/data" \
    -e HOST=127.0.0.1 -e PORT="$port" --health-interval 1s "$@" "$image" >/dev/null
}
# stop_within_10s NAME: docker stop; true when the service exited 0 within 10 s.
stop_within_10s() {
  local name="$1" t code
  t=$(date +%s%N)
  "$docker" stop -t 10 "$name" >/dev/null
  t=$((($(date +%s%N) - t) / 1000000))
  code="$("$docker" inspect -f '{{.State.ExitCode}}' "$name")"
  echo "        (docker stop: exit code $code after $t ms)"
  [ "$code" = 0 ] && [ "$t" -le 10000 ]
}
is_healthy() {
  for _ in $(seq 1 30); do
    [ "$("$docker" inspect -f '{{.State.Health.Status}}' "$1")" = healthy ] && return 0
    sleep 0.5
  done
  return 1
}
# The container's processes (uid and command line), as the host sees them.
processes() { "$docker" top "$1" -eo pid,uid,args | tail -n +2 | awk '{ $1 = ""; sub(/^ +/, ""); print }'; }
runs_as_1000() {
  local all
  all="$(processes "$1")"
  [ -n "$all" ] && ! printf '%s\n' "$all" | grep -qv '^1000 ' && [ "$("$docker" exec "$1" id -u)" = 1000 ]
}
# PID 1 is tini, its child the service; nothing else runs but health checks (`node -e ...`).
runs_the_service() {
  local all
  all="$(processes "$1" | cut -d' ' -f2-)"
  [ "$("$docker" exec "$1" sh -c 'tr "\0" " " </proc/1/cmdline')" = "/usr/bin/tini -- node dist/main.js " ] &&
    printf '%s\n' "$all" | grep -qx 'node dist/main.js' &&
    ! printf '%s\n' "$all" | grep -vx -e '/usr/bin/tini -- node dist/main.js' -e 'node dist/main.js' -e 'node -e .*' | grep -q .
}
# A stop that arrives while the service is still starting ends the container at once.
stops_during_startup() {
  local name="petstore-test-0-$$" t code
  names+=("$name")
  "$docker" run -d --name "$name" --network host -e HOST=127.0.0.1 -e PORT="$port" \
    -e DATABASE_PATH=:memory: -e API_KEYS="$env_key" "$image" >/dev/null
  sleep 0.3
  t=$(date +%s%N)
  "$docker" stop -t 10 "$name" >/dev/null
  t=$((($(date +%s%N) - t) / 1000000))
  code="$("$docker" inspect -f '{{.State.ExitCode}}' "$name")"
  echo "        (docker stop while starting: exit code $code after $t ms)"
  [ "$t" -le 3000 ] && { [ "$code" = 0 ] || [ "$code" = 143 ]; }
}

say "first start: $image on 127.0.0.1:$port, volume $volume"
run petstore-test-1-$$ -e API_KEYS="$env_key"
check "/health/ready answers 200" wait_ready petstore-test-1-$$
check "the image's HEALTHCHECK reports healthy" is_healthy petstore-test-1-$$
check "the container runs node dist/main.js under tini, no npm or shell" runs_the_service petstore-test-1-$$
check "every process of the container runs as uid 1000 (node)" runs_as_1000 petstore-test-1-$$

created="$("$docker" exec petstore-test-1-$$ node dist/cli/apikey.js create --name container-test 2>&1 || true)"
key="$(printf '%s\n' "$created" | grep -E '^pet_[A-Za-z0-9_-]{43}$' || true)"
check "the apikey CLI creates a key inside the container" test -n "$key"
check "that key is accepted on /v1/pets" test "$(status "$base/v1/pets" -H "Authorization: Bearer $key")" = 200
check "a wrong key is refused (401)" test "$(status "$base/v1/pets" -H "Authorization: Bearer pet_wrong$env_key")" = 401

pet="$(curl -s --max-time 5 -X POST "$base/v1/pets" -H "Authorization: Bearer $key" \
  -H 'Content-Type: application/json' -d '{"name":"Container Rex","categoryId":7,"status":"available"}' || true)"
pet_id="$(printf '%s' "$pet" | node -e 'let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => { try { const p = JSON.parse(s); console.log(Number.isInteger(p.id) ? p.id : ""); } catch { console.log(""); } })')"
check "an animal is created (201)" test -n "$pet_id"
check "docker stop: exit code 0 within 10 s" stop_within_10s petstore-test-1-$$
"$docker" rm -v petstore-test-1-$$ >/dev/null

# The second start has no API_KEYS: in production it starts only because the key created above is
# stored in the volume. It also runs as the Kubernetes manifest has it: read-only root, /tmp
# writable, no capabilities, no privilege escalation.
say "second start: a new container on the same volume, read-only root filesystem"
run petstore-test-2-$$ --read-only --tmpfs /tmp --cap-drop ALL --security-opt no-new-privileges
check "the new container is ready, with the stored key and no API_KEYS" wait_ready petstore-test-2-$$
got="$(curl -s --max-time 5 "$base/v1/pets/${pet_id:-0}" -H "Authorization: Bearer $key" || true)"
check "the animal is still there after the container was removed" \
  test "$got" = "{\"id\":${pet_id:-0},\"name\":\"Container Rex\",\"categoryId\":7,\"status\":\"available\"}"
check "docker stop: exit code 0 within 10 s (read-only container)" stop_within_10s petstore-test-2-$$

check "docker stop during start-up ends the container within 3 s" stops_during_startup

size="$("$docker" image inspect -f '{{.Size}}' "$image")"
echo "        (image size: $size bytes; limit $size_limit)"
check "the image is at most 250 MB" test "$size" -le "$size_limit"
ca_not_baked() {
  ! "$docker" image inspect -f '{{range .Config.Env}}{{println .}}{{end}}' "$image" | grep -q '^NODE_EXTRA_CA_CERTS=' &&
    "$docker" run --rm --network none "$image" sh -c '! ls -A /run/secrets 2>/dev/null | grep -q .'
}
check "the CA secret is in no layer and no setting of the image" ca_not_baked
check "compose.yaml is valid (docker-compose config)" docker-compose -f compose.yaml config -q

say "$passed passed, $failed failed (build $build_seconds s, whole step $(($(date +%s) - t0)) s)"
if [ -n "$json_out" ]; then
  printf '{"numPassedTests":%d,"numFailedTests":%d,"numPendingTests":0}\n' "$passed" "$failed" >"$json_out"
fi
[ "$failed" = 0 ]
