#!/usr/bin/env bash
# hack/release.sh build [--check] | deb DIR | version | ldflags
#
# podrun as a node installs it (make release): for linux/amd64 and
# linux/arm64, in dist/ of the repository,
#   podrun-VERSION-linux-ARCH        the static binary
#   podrun_DEBVERSION_ARCH.deb       a Debian package: /usr/bin/podrun, the
#                                    unit docs/bootstrap.md ships (installed,
#                                    not enabled), the bash, zsh and fish
#                                    completions, podrun(1)
#   SHA256SUMS                       the checksums of all of them
#
#   build          build dist/ anew
#   build --check  then build it all again from scratch (an empty build
#                  cache) in a second directory and fail unless every file
#                  is the same byte for byte: the release is reproducible
#   deb DIR        only this machine's architecture: its binary and its
#                  package into DIR (hack/guest.sh installs it in the guest)
#   version        print VERSION
#   ldflags        print the -ldflags make build and the release link with
#
# VERSION is the tag `git describe` finds (v1.2.3, v1.2.3-4-gabcdef012345),
# else v0.0.0-<commit time>-<commit>, a Go pseudo-version; "+dirty" when
# the tree has changes not committed. The binaries are reproducible:
# -trimpath, no build ID, no VCS stamp (the commit is linked in instead),
# CGO off; the packages' files carry the commit's time.
set -euo pipefail
cd "$(dirname "$0")/.."

ARCHES=(amd64 arm64)
TAGS=urfave_cli_no_docs,grpcnotrace # as the Makefile's build

log() { printf 'release: %s\n' "$*" >&2; }
die() { printf 'release: error: %s\n' "$*" >&2; exit 1; }

commit() { git rev-parse HEAD 2>/dev/null || echo unknown; }

commit_time() { git log -1 --format=%ct 2>/dev/null || echo 0; }

version() {
  local v dirty=
  [[ -z $(git status --porcelain --untracked-files=no 2>/dev/null) ]] || dirty=+dirty
  if v=$(git describe --tags --match 'v[0-9]*' 2>/dev/null); then
    echo "$v$dirty"
    return
  fi
  echo "v0.0.0-$(date -u -d "@$(commit_time)" +%Y%m%d%H%M%S)-$(git rev-parse --short=12 HEAD 2>/dev/null || echo 000000000000)$dirty"
}

ldflags() {
  echo "-s -w -buildid= -X main.version=$(version) -X main.commit=$(commit)"
}

# deb_version: VERSION as Debian orders versions: no leading v, and '~'
# before a pre-release or pseudo-version part so that it sorts before the
# release it leads to.
deb_version() {
  local v=${1#v}
  v=${v/-/\~}
  echo "${v//[-+]/.}"
}

# build_binary ARCH OUT: one static binary.
build_binary() {
  CGO_ENABLED=0 GOOS=linux GOARCH=$1 GOFLAGS=-buildvcs=false \
    go build -trimpath -tags "$TAGS" -ldflags "$(ldflags)" -o "$2" . ||
    die "go build for $1 failed"
}

# build_deb ARCH BINARY HOSTBIN OUTDIR: the package of BINARY; HOSTBIN (a
# binary this machine runs) prints the completions and the man page.
build_deb() {
  local arch=$1 bin=$2 host=$3 out=$4 root ver t
  ver=$(deb_version "$(version)")
  root=$(mktemp -d)
  chmod 0755 "$root"
  install -D -m 0755 "$bin" "$root/usr/bin/podrun"
  install -D -m 0644 docs/examples/podrun-bootstrap.service "$root/usr/lib/systemd/system/podrun-bootstrap.service"
  mkdir -p "$root/usr/share/bash-completion/completions" "$root/usr/share/zsh/vendor-completions" \
    "$root/usr/share/fish/vendor_completions.d" "$root/usr/share/man/man1" "$root/usr/share/doc/podrun" "$root/DEBIAN"
  "$host" completion bash >"$root/usr/share/bash-completion/completions/podrun"
  "$host" completion zsh >"$root/usr/share/zsh/vendor-completions/_podrun"
  "$host" completion fish >"$root/usr/share/fish/vendor_completions.d/podrun.fish"
  "$host" man >"$root/usr/share/man/man1/podrun.1"
  if command -v groff >/dev/null; then
    groff -man -ww -z "$root/usr/share/man/man1/podrun.1" || die "podrun(1) has roff warnings"
  fi
  gzip -9n "$root/usr/share/man/man1/podrun.1"
  cp README.md "$root/usr/share/doc/podrun/README.md"
  gzip -9n "$root/usr/share/doc/podrun/README.md"
  cat >"$root/DEBIAN/control" <<EOF
Package: podrun
Version: $ver
Architecture: $arch
Maintainer: podrun developers <podrun@users.noreply.github.com>
Section: admin
Priority: optional
Recommends: containerd | cri-o
Homepage: https://github.com/podrun/podrun
Description: run Kubernetes Pod manifests once on the node's CRI runtime
 podrun runs Pod manifests on the node's own CRI runtime (containerd or
 CRI-O) with the kubelet's semantics and no API server: a CI step's job pod
 with its sidecars, a node's static control-plane pods before its kubelet
 (podrun-bootstrap.service, not enabled by default), a one-off pod.
EOF
  # The commit's time on every file, directories too: the same tree gives
  # the same package.
  t=$(commit_time)
  find "$root" -exec touch -h -d "@$t" {} +
  SOURCE_DATE_EPOCH=$t dpkg-deb --root-owner-group -Zxz --build "$root" "$out/podrun_${ver}_$arch.deb" >/dev/null ||
    die "dpkg-deb failed for $arch"
  rm -rf "$root"
}

# build_all DIR: every file of the release into DIR.
build_all() {
  local dir=$1 v a host
  v=$(version)
  rm -rf "$dir" && mkdir -p "$dir"
  for a in "${ARCHES[@]}"; do
    build_binary "$a" "$dir/podrun-$v-linux-$a"
  done
  host=$dir/podrun-$v-linux-$(go env GOARCH)
  [[ -x $host ]] || die "no binary for this machine ($(go env GOARCH)) among ${ARCHES[*]}"
  for a in "${ARCHES[@]}"; do
    build_deb "$a" "$dir/podrun-$v-linux-$a" "$host" "$dir"
  done
  (cd "$dir" && sha256sum -- podrun-* podrun_*.deb >SHA256SUMS)
}

cmd_build() {
  local check=${1:-} t0=$SECONDS other cache
  build_all dist
  log "$(version): $(ls dist | tr '\n' ' ')in $((SECONDS - t0))s"
  cat dist/SHA256SUMS
  [[ $check == --check ]] || return 0
  other=$(mktemp -d) cache=$(mktemp -d)
  trap 'rm -rf "$other" "$cache"' EXIT
  log "building again from scratch (an empty build cache) to check it is reproducible"
  GOCACHE=$cache build_all "$other/dist"
  diff dist/SHA256SUMS "$other/dist/SHA256SUMS" || die "the second build differs: not reproducible"
  log "reproducible: the second build is the same byte for byte"
}

# cmd_deb DIR: this machine's binary and package into DIR (emptied first).
cmd_deb() {
  local dir=${1:?usage: $0 deb DIR} a v
  a=$(go env GOARCH) v=$(version)
  rm -rf "$dir" && mkdir -p "$dir"
  build_binary "$a" "$dir/podrun-$v-linux-$a"
  build_deb "$a" "$dir/podrun-$v-linux-$a" "$dir/podrun-$v-linux-$a" "$dir"
  (cd "$dir" && sha256sum -- podrun-* podrun_*.deb >SHA256SUMS)
}

case ${1:-} in
build) shift; cmd_build "$@" ;;
deb) shift; cmd_deb "$@" ;;
version) version ;;
ldflags) ldflags ;;
*)
  echo "usage: $0 build [--check] | deb DIR | version | ldflags" >&2
  exit 2
  ;;
esac
