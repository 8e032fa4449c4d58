#!/usr/bin/env bash
# Builds a local stand-in for the official node:<major>-bookworm-slim image, for machines that
# reach no image registry (air-gapped builds, CI here): Debian bookworm (minbase) bootstrapped
# from a Debian mirror with debootstrap, this machine's own node and npm copied in under
# /usr/local as the official image has them (headers included, so node-gyp builds offline), and
# the user `node` (uid and gid 1000). The result is imported into the local Docker engine.
#
#   sudo deploy/build-base-image.sh [TAG]     # default TAG: node:<this machine's node major>-bookworm-slim
#
# Needs root, debootstrap, a running Docker engine and node + npm on the PATH (Linux, the same
# CPU architecture as the image). The Debian mirror is DEBIAN_MIRROR, else the one apt on this
# machine uses for bookworm, else debootstrap's default. DOCKER names the docker client to use.
set -euo pipefail
docker="${DOCKER:-docker}"
case "${1:-}" in -h | --help)
  echo "usage: sudo deploy/build-base-image.sh [TAG]   (default TAG: node:<this machine's node major>-bookworm-slim)"
  echo 'Builds a stand-in for the official node image from Debian with debootstrap and this node, and'
  echo 'imports it into the local Docker engine (needs root, debootstrap and a running engine).'
  exit 0
  ;;
esac

die() {
  echo "build-base-image: $*" >&2
  exit 1
}

[ "$(id -u)" = 0 ] || die "must run as root (debootstrap needs it)"
command -v debootstrap >/dev/null || die "debootstrap is missing (apt-get install debootstrap)"
command -v "$docker" >/dev/null || die "docker is missing (apt-get install docker.io)"
"$docker" info >/dev/null 2>&1 || die "no Docker engine answers (start dockerd)"

node_bin="$(readlink -f "$(command -v node)")" || die "node is not on the PATH"
node_version="$(node -p 'process.versions.node')"
node_major="${node_version%%.*}"
node_prefix="$(dirname "$(dirname "$node_bin")")"
npm_root="$(npm root -g)"
[ -f "$npm_root/npm/package.json" ] || die "npm not found under $npm_root"
[ -f "$node_prefix/include/node/node.h" ] || die "node headers not found under $node_prefix/include/node"

tag="${1:-node:${node_major}-bookworm-slim}"
case "$tag" in
  node:[0-9]*-*) [ "${tag#node:}" != "${tag#node:"$node_major"-}" ] ||
    die "this machine's node is $node_version: it cannot stand in for $tag" ;;
esac

# The mirror apt uses for the bookworm suite (one-line .list or deb822 .sources format), if any.
apt_uri() {
  local suite="$1" uri=""
  uri="$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null | sed -E 's/\[[^]]*\]//' |
    awk -v s="$suite" '$1 == "deb" && $3 == s { print $2; exit }')"
  if [ -z "$uri" ]; then
    uri="$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null |
      awk -v s="$suite" 'BEGIN { RS = ""; FS = "\n" } {
        types = ""; uris = ""; suites = ""
        for (i = 1; i <= NF; i++) {
          if ($i ~ /^Types:/) types = " " substr($i, 7) " "
          if ($i ~ /^URIs:/) uris = substr($i, 6)
          if ($i ~ /^Suites:/) suites = " " substr($i, 8) " "
        }
        gsub(/\t/, " ", suites)
        if (types ~ / deb / && index(suites, " " s " ")) { split(uris, u, " "); print u[1]; exit }
      }')"
  fi
  printf '%s' "$uri"
}
mirror="${DEBIAN_MIRROR:-$(apt_uri bookworm)}"
security_mirror="$(apt_uri bookworm-security)"

work="$(mktemp -d /var/tmp/petstore-base.XXXXXX)"
trap 'rm -rf "$work"' EXIT
root="$work/rootfs"

echo "build-base-image: debootstrap bookworm (minbase) from ${mirror:-the default mirror of debootstrap}"
debootstrap --variant=minbase bookworm "$root" ${mirror:+"$mirror"} >"$work/debootstrap.log" 2>&1 ||
  { tail -n 30 "$work/debootstrap.log" >&2; die "debootstrap failed"; }

mirror_used="$(awk '$1 == "deb" { print $2; exit }' "$root/etc/apt/sources.list")"
{
  echo "deb $mirror_used bookworm main"
  echo "deb $mirror_used bookworm-updates main"
  [ -z "$security_mirror" ] || echo "deb $security_mirror bookworm-security main"
} >"$root/etc/apt/sources.list"

# What Debian's slim images leave out, now and for packages installed later (build stages).
cat >"$root/etc/dpkg/dpkg.cfg.d/docker-slim" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
path-include /usr/share/locale/locale.alias
path-exclude /usr/share/lintian/*
EOF
cat >"$root/etc/apt/apt.conf.d/docker-clean" <<'EOF'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache ""; Dir::Cache::srcpkgcache "";
EOF
echo 'APT::Install-Recommends "false";' >"$root/etc/apt/apt.conf.d/docker-no-recommends"
find "$root/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete
find "$root/usr/share/doc" -mindepth 1 -type d -empty -delete
rm -rf "$root"/usr/share/man/* "$root"/usr/share/info/* "$root"/usr/share/lintian
find "$root/usr/share/locale" -mindepth 1 -maxdepth 1 -not -name locale.alias -exec rm -rf {} +
rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/* "$root"/var/log/* "$root"/tmp/* "$root"/root/.cache
find "$root/var/cache/debconf" -name '*-old' -delete

# node and npm as the official image lays them out.
install -D -m 0755 "$node_bin" "$root/usr/local/bin/node"
mkdir -p "$root/usr/local/include" "$root/usr/local/lib/node_modules"
cp -a "$node_prefix/include/node" "$root/usr/local/include/node"
cp -a "$npm_root/npm" "$root/usr/local/lib/node_modules/npm"
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$root/usr/local/bin/npx"
chroot "$root" /usr/local/bin/node --version >/dev/null || die "node does not run inside the image"

chroot "$root" groupadd --gid 1000 node
chroot "$root" useradd --uid 1000 --gid node --shell /bin/bash --create-home node

echo "build-base-image: importing $tag (node $node_version)"
tar -C "$root" --numeric-owner -cf - . | "$docker" import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change "ENV NODE_VERSION=$node_version" \
  --change 'LABEL org.opencontainers.image.description="Local stand-in for the official node image: Debian bookworm minbase with the build machine node and npm"' \
  --change 'CMD ["node"]' \
  - "$tag" >/dev/null
"$docker" image inspect --format 'build-base-image: {{index .RepoTags 0}}: {{.Size}} bytes' "$tag"
