#!/usr/bin/env bash
# hack/crio.sh up | down | env
#
# CRI-O beside the testbed: an installed CRI-O (this script never builds
# it: see "Where CRI-O comes from" below) started with a configuration of
# its own under $PODRUN_TESTBED_DIR/crio, pulling from the testbed's
# registries, so that the end-to-end tests run on CRI-O as they run on
# containerd (make e2e-crio).
#
#   up    check the binaries, write the configuration, start crio unless
#         it runs with the same configuration (a changed one restarts it),
#         wait for its CRI to answer. The testbed (hack/testbed.sh up) must
#         be up: its registries, CA and runc are used.
#   down  remove every pod through CRI, stop crio, unmount what it mounted
#         under its directory, delete its bridge; its images stay.
#   env   the settings for the e2e tests, as hack/testbed.sh env prints
#         them for containerd: the testbed's registries, CRI-O's endpoint,
#         network and runtime.
#
# Settings (environment):
#   PODRUN_CRIO          the crio binary (crio in PATH)
#   PODRUN_CRIO_PINNS    its pinns (pinns beside crio, else in PATH)
#   PODRUN_CRIO_CGROUP_MANAGER  cgroupfs (these machines' PID 1 is not
#                        systemd) or systemd
#   PODRUN_CRIO_POD_EVENTS  true: enable_pod_events (CRI container events);
#                        false (CRI-O's default): podrun polls
#   PODRUN_TESTBED_DIR   the testbed (/var/lib/podrun-testbed)
#
# What it runs and where everything goes: crio with --config
# $DIR/crio/crio.conf and an empty --config-dir (no /etc/crio drop-ins),
# --registries-conf $DIR/crio/registries.conf (every upstream name is the
# testbed mirror's namespace, as containerd's hosts.toml maps it), storage
# (overlay), run state, exits, attach sockets, namespaces, version and
# clean-shutdown files, pod logs and its socket all under $DIR/crio; HOME
# is $DIR/crio/home, whose .config/containers/certs.d trusts the
# testbed's CA for the registries (containers/image reads the user's
# certs.d first), so nothing is written to /etc/containers. The OCI runtime
# is the testbed's runc (v1.3, with idmapped mounts), monitored by
# Debian's conmon; crun is not used (it refuses these machines' hybrid
# cgroup layout). Network: a bridge of its own (cni-podrunc0,
# 10.84.0.0/16) from Debian's CNI plugins. Like containerd, libcni keeps
# its results in /var/lib/cni/results; `down` sweeps CRI-O's.
#
# Where CRI-O comes from: the Go module proxy refuses github.com/cri-o/cri-o
# and Debian has no package, so these machines have no CRI-O unless one
# is put there: a distribution's package (Fedora, openSUSE, the project's
# own packages at pkgs.k8s.io), or a build of the CRI-O repository
# (`make bin/crio bin/pinns`; docs/cri-o.md says which one the recorded
# runs used). make test does not run this tier for that reason.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DIR=${PODRUN_TESTBED_DIR:-/var/lib/podrun-testbed}
CDIR=$DIR/crio
SOCK=$CDIR/crio.sock
ENDPOINT=unix://$SOCK
POD_SUBNET=10.84.0.0/16
BRIDGE=cni-podrunc0
NETWORK=podrun-testbed-crio
CGROUP_MANAGER=${PODRUN_CRIO_CGROUP_MANAGER:-cgroupfs}
POD_EVENTS=${PODRUN_CRIO_POD_EVENTS:-false}
CNI_BIN_DIR=/usr/lib/cni
CONMON=/usr/bin/conmon
SANDBOX_IMAGE=registry.k8s.io/pause:3.10
UPSTREAMS=(docker.io registry.k8s.io k8s.gcr.io gcr.io quay.io ghcr.io)

log() { printf 'crio: %s\n' "$*" >&2; }
die() { printf 'crio: error: %s\n' "$*" >&2; exit 1; }

# testbed_setting NAME: a setting of the testbed's env.
testbed_setting() { sed -n "s/^PODRUN_TESTBED_$1=//p" "$DIR/testbed.env"; }

# binaries: CRIO and PINNS, or die saying where they come from.
binaries() {
  CRIO=${PODRUN_CRIO:-$(command -v crio || true)}
  [[ -n $CRIO && -x $CRIO ]] ||
    die "no crio binary: set PODRUN_CRIO=/path/to/crio (the module proxy refuses github.com/cri-o/cri-o and Debian has none; see the top of $0)"
  PINNS=${PODRUN_CRIO_PINNS:-$(dirname "$CRIO")/pinns}
  [[ -x $PINNS ]] || PINNS=$(command -v pinns || true)
  [[ -n $PINNS && -x $PINNS ]] || die "no pinns beside $CRIO or in PATH: set PODRUN_CRIO_PINNS"
}

# put FILE: stdin to FILE when the content differs (as hack/testbed.sh).
put() {
  mkdir -p "$(dirname "$1")"
  cat >"$1.tmp.$$"
  if cmp -s "$1.tmp.$$" "$1"; then rm -f "$1.tmp.$$"; else mv -f "$1.tmp.$$" "$1"; fi
}

alive() { [[ -s $CDIR/crio.pid && -d /proc/$(<"$CDIR/crio.pid") && $(readlink "/proc/$(<"$CDIR/crio.pid")/exe") == "$1" ]]; }

cri_answers() { "$DIR/bin/cribare" -endpoint "$ENDPOINT" -ping -timeout 3s; }

write_config() {
  local mirror private ca runc u
  mirror=$(testbed_setting MIRROR) private=$(testbed_setting PRIVATE) ca=$(testbed_setting CA)
  runc=$(testbed_setting RUNC)
  [[ -n $mirror && -s $ca && -x $runc ]] || die "the testbed's env lacks its mirror, CA or runc: bash hack/testbed.sh up"
  mkdir -p "$CDIR"/{root,run,log,home,net.d,ipam,cdi,config.d}
  put "$CDIR/crio.conf" <<EOF
# Written by hack/crio.sh: CRI-O beside the testbed, everything under $CDIR.
[crio]
root = "$CDIR/root"
runroot = "$CDIR/run"
storage_driver = "overlay"
log_dir = "$CDIR/log"
version_file = "$CDIR/run/version"
version_file_persist = "$CDIR/version"
clean_shutdown_file = "$CDIR/clean.shutdown"

[crio.api]
listen = "$SOCK"
stream_address = "127.0.0.1"
stream_port = "0"

[crio.runtime]
default_runtime = "runc"
cgroup_manager = "$CGROUP_MANAGER"
conmon_cgroup = "pod"
container_exits_dir = "$CDIR/run/exits"
container_attach_socket_dir = "$CDIR/run/attach"
namespaces_dir = "$CDIR/run/ns"
pinns_path = "$PINNS"
hooks_dir = []
cdi_spec_dirs = ["$CDIR/cdi"]
decryption_keys_path = "$CDIR/keys"
irqbalance_config_file = "$CDIR/irqbalance"
irqbalance_config_restore_file = "disable"
enable_pod_events = $POD_EVENTS

[crio.runtime.runtimes.runc]
runtime_path = "$runc"
runtime_root = "$CDIR/run/runc"
monitor_path = "$CONMON"
monitor_cgroup = "pod"

[crio.image]
pause_image = "$SANDBOX_IMAGE"
signature_policy = "$CDIR/policy.json"

[crio.network]
network_dir = "$CDIR/net.d"
plugin_dirs = ["$CNI_BIN_DIR"]

[crio.metrics]
enable_metrics = false

[crio.nri]
enable_nri = false
EOF
  put "$CDIR/policy.json" <<'EOF'
{"default": [{"type": "insecureAcceptAnything"}]}
EOF
  {
    echo "# Written by hack/crio.sh: every upstream is the testbed mirror's namespace."
    echo 'unqualified-search-registries = ["docker.io"]'
    echo 'short-name-mode = "permissive"'
    for u in "${UPSTREAMS[@]}"; do
      printf '\n[[registry]]\nprefix = "%s"\nlocation = "%s/%s"\n' "$u" "$mirror" "$u"
    done
    # Any other name: the mirror's always-404 namespace, never the internet.
    printf '\n[[registry]]\nprefix = "*"\nlocation = "%s/unknown.invalid"\n' "$mirror"
  } | put "$CDIR/registries.conf"
  for u in "$mirror" "$private"; do
    put "$CDIR/home/.config/containers/certs.d/$u/ca.crt" <"$ca"
  done
  put "$CDIR/storage.conf" <<EOF
[storage]
driver = "overlay"
graphroot = "$CDIR/root"
runroot = "$CDIR/run"
EOF
  bash "$REPO/hack/testbed.sh" cni-conf "$CDIR/net.d/10-podrun-crio.conflist" "$NETWORK" "$BRIDGE" "$POD_SUBNET" "$CDIR/ipam"
}

cmd_up() {
  local sum t0=$SECONDS
  [[ $(id -u) == 0 ]] || die "must run as root"
  [[ -s $DIR/testbed.env ]] || die "the testbed is not up: bash hack/testbed.sh up"
  binaries
  [[ -x $CONMON ]] || {
    log "installing Debian's conmon"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends conmon >&2 ||
      die "apt-get install conmon failed"
  }
  write_config
  sum=$(cat "$CDIR/crio.conf" "$CDIR/registries.conf" "$CDIR/storage.conf" <(echo "$CRIO") | sha256sum | cut -d' ' -f1)
  if alive "$CRIO" && [[ $(cat "$CDIR/crio.sum" 2>/dev/null) == "$sum" ]]; then
    write_env
    return 0
  fi
  alive "$(cat "$CDIR/crio.exe" 2>/dev/null)" && stop_crio
  log "starting $CRIO ($("$CRIO" --version 2>/dev/null | awk '/^Version:/ {print $2}'); log $CDIR/crio.log)"
  HOME=$CDIR/home CONTAINERS_STORAGE_CONF=$CDIR/storage.conf setsid "$CRIO" \
    --config "$CDIR/crio.conf" --config-dir "$CDIR/config.d" \
    --registries-conf "$CDIR/registries.conf" --log-level info \
    >>"$CDIR/crio.log" 2>&1 </dev/null &
  echo $! >"$CDIR/crio.pid"
  echo "$CRIO" >"$CDIR/crio.exe"
  echo "$sum" >"$CDIR/crio.sum"
  local i
  for ((i = 0; i < 300; i++)); do
    cri_answers >/dev/null 2>&1 && break
    alive "$CRIO" || die "crio exited; see $CDIR/crio.log: $(tail -3 "$CDIR/crio.log")"
    sleep 0.1
  done
  cri_answers >/dev/null 2>&1 || die "crio's CRI does not answer on $ENDPOINT; see $CDIR/crio.log"
  write_env
  log "up in $((SECONDS - t0))s; settings: $0 env"
}

write_env() {
  local name
  {
    # The testbed's registry settings, with CRI-O's endpoint and network.
    grep -E '^PODRUN_TESTBED_(MIRROR|PRIVATE|PRIVATE_IMAGE|PRIVATE_USER|PRIVATE_PASSWORD|CA|CNI_BIN_DIR|SANDBOX_IMAGE|RUNC)=' "$DIR/testbed.env"
    echo "CONTAINER_RUNTIME_ENDPOINT=$ENDPOINT"
    echo "PODRUN_TESTBED_DIR=$DIR"
    echo "PODRUN_TESTBED_CNI_CONF_DIR=$CDIR/net.d"
    echo "PODRUN_TESTBED_POD_SUBNET=$POD_SUBNET"
    echo "PODRUN_TESTBED_BRIDGE=$BRIDGE"
    echo "PODRUN_TESTBED_CONTAINERD=crio"
    echo "PODRUN_TESTBED_RUNTIME=crio"
    echo "PODRUN_TESTBED_CGROUP_DRIVER=$CGROUP_MANAGER"
    echo "PODRUN_TESTBED_CRIO_LOG=$CDIR/crio.log"
  } | put "$CDIR/crio.env"
}

stop_crio() {
  local pid i exe
  exe=$(cat "$CDIR/crio.exe" 2>/dev/null) || return 0
  alive "$exe" || return 0
  pid=$(<"$CDIR/crio.pid")
  log "stopping crio (pid $pid)"
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < 100; i++)); do
    alive "$exe" || break
    sleep 0.1
  done
  alive "$exe" && kill -KILL "$pid" 2>/dev/null || true
  rm -f "$CDIR/crio.pid"
}

cmd_down() {
  local m exe
  [[ $(id -u) == 0 ]] || die "must run as root"
  [[ -d $CDIR ]] || return 0
  exe=$(cat "$CDIR/crio.exe" 2>/dev/null) || exe=
  if [[ -n $exe ]] && alive "$exe"; then
    "$DIR/bin/cribare" -endpoint "$ENDPOINT" -cleanup -timeout 60s ||
      log "warning: removing CRI-O's pods through CRI failed"
  fi
  stop_crio
  # conmon processes of containers left behind (a killed crio).
  for m in $(pgrep -f "^$CONMON .*$CDIR/" || true); do kill -KILL "$m" 2>/dev/null || true; done
  for m in $(awk -v d="$CDIR/" 'index($5, d) == 1 {print $5}' /proc/self/mountinfo | sort -r); do
    umount -l "$m" 2>/dev/null || log "warning: cannot unmount $m"
  done
  rm -rf "$CDIR/ipam"
  if ip link show "$BRIDGE" >/dev/null 2>&1; then ip link delete "$BRIDGE" || true; fi
  rm -f /var/lib/cni/results/"$NETWORK"-*
  rm -f "$CDIR/crio.env"
  log "down"
}

cmd_env() {
  [[ -s $CDIR/crio.env ]] || die "no $CDIR/crio.env: run '$0 up' first"
  cat "$CDIR/crio.env"
}

main() {
  case ${1:-} in
  up) cmd_up ;;
  down) cmd_down ;;
  env) cmd_env ;;
  *)
    echo "usage: $0 up | down | env" >&2
    exit 2
    ;;
  esac
}
main "$@"; exit $?
