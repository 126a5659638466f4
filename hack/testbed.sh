#!/usr/bin/env bash
# hack/testbed.sh up|down [--purge]|env|packages|podman [--flavor v2|debian|scratch] | slow-registry up [shared|per-connection]|down|env | restart-containerd [--kill] | kubelet-up|kubelet-stop|kubelet-down|kubelet-build | controlplane-images|controlplane-build
#
# The real end-to-end testbed for podrun: a private containerd with the CRI
# plugin, runc with cgroupfs, a bridge CNI network (Debian's CNI
# plugins), and two local TLS registries (docker-registry from Debian)
# holding busybox-based stand-ins for the images Kubernetes-docs manifests
# use.
#
#   up     install missing Debian packages, build containerd v2 if needed,
#          write configs, start what is not running, push images when their
#          inputs changed. Idempotent; about a second when everything is
#          already up.
#   down   stop every process this testbed started (pods first, through
#          CRI), unmount what it mounted, delete its bridge. --purge also
#          removes the testbed directory.
#   env    print shell-sourceable settings for tests (after `up`), and
#          the kubelet's while kubelet-up's kubelet runs.
#   packages [--list]  install the missing Debian packages only (what
#          `up` does first): the unit tests need one of them too (xmllint
#          checks JUnit reports against the schema). --list prints their
#          names (hack/guest.sh puts them in its guest).
#   pins   the versions this testbed builds (containerd v2, runc, kubelet).
#   restart-containerd [--kill]   stop this testbed's containerd (SIGTERM,
#          or SIGKILL with --kill) and start it again with the same binary
#          and config, leaving its shims, pods and sandboxes as they are
#          (no sweep, no removal of NOTREADY sandboxes: what a restart
#          leaves is what the caller wants to see). For the fault tests
#          (e2e/faults_test.go), which run it only when
#          PODRUN_E2E_RESTART_RUNTIME=1 says they may.
#   kubelet-up    the oracle (after `up`; or `up` with PODRUN_TESTBED_KUBELET=1):
#          a standalone kubelet $KUBELET_VERSION, built once per version
#          from the Go module proxy into $DIR/opt/kubelet-<version>/bin
#          (kubelet-build only builds it), on a containerd of its own (the
#          v2 binaries above; socket, root, state, shim sockets, CNI
#          config with its own bridge and subnet all under $DIR/kubelet;
#          the same registry config, so the same images resolve). A
#          kubelet kills every pod with kubelet labels it did not start,
#          podrun's included, so it never shares podrun's containerd.
#          Static pods only: staticPodPath $DIR/kubelet/manifests, GET
#          /pods on 127.0.0.1:10255 (anonymous, AlwaysAllow), no
#          kubeconfig (PODRUN_TESTBED_KUBELET_KUBECONFIG and _STATIC_POD_PATH
#          below make it a node of a cluster: the control-plane test).
#          Idempotent; a changed config restarts it.
#   controlplane-images   kubeadm, kube-apiserver, kube-controller-manager
#          and kube-scheduler of the kubelet's release and the etcd it
#          names, built once per version into $DIR/opt/controlplane-<version>/bin
#          (controlplane-build only builds them), as images under kubeadm's
#          names in the mirror (registry.k8s.io/kube-apiserver:<version>,
#          ..., etcd:3.7.0-0). For e2e/controlplane_test.go.
#   kubelet-stop  stop the kubelet alone, leaving its containerd and the
#          pods on it running (the hand-over test, e2e/handover_test.go,
#          runs podrun's pods there and starts the kubelet again on them).
#   kubelet-down  stop the kubelet, remove its pods, stop its containerd,
#          and restore what it changed on the host (below). `down` does
#          this first.
#
# What the kubelet changes on the host, and how kubelet-down restores it
# (everything else it writes is under $DIR/kubelet: --root-dir, --cert-dir,
# --volume-plugin-dir, podLogsDir, staticPodPath):
# - sysctls (KUBELET_SYSCTLS below; protectKernelDefaults would make it
#   refuse to start on this host's values instead): kubelet-up saves the
#   host's values to $DIR/kubelet/sysctl.saved before the kubelet first
#   starts, kubelet-down writes back any that changed.
# - cgroups: the cgroup root ($KUBELET_CGROUP_ROOT, made by kubelet-up in
#   every v1 hierarchy, as the kubelet requires) and kubepods, the QoS and
#   pod cgroups the kubelet (and runc, in the unified hierarchy too) make
#   below it: kubelet-down removes them all, deepest first.
# - mounts: the kubelet bind-mounts its root dir onto itself, rshared
#   (MakeRShared), and mounts pod volumes below it; containerd mounts
#   rootfs and netns under its state dir: kubelet-down unmounts
#   everything under $DIR/kubelet.
# - network: the bridge $KUBELET_BRIDGE and the pods' veths (gone with the
#   pods), libcni's cached results in /var/lib/cni/results (swept for our
#   sandbox IDs). iptables: none, makeIPTablesUtilChains is off (it would
#   add KUBE-IPTABLES-HINT, KUBE-FIREWALL and jumps from INPUT and
#   OUTPUT).
# - paths no setting moves (KUBELET_HOST_DIRS below): /var/log/containers
#   with a symlink per container, /var/lib/kubelet/device-plugins/kubelet.sock
#   (kubelet-up refuses to start when another kubelet listens there), and
#   /run/mount (libmount, from the kubelet's mount calls): kubelet-down
#   removes the symlinks into $DIR/kubelet and the socket, then each of
#   these directories kubelet-up found missing.
# - ports 10250 (authenticated API), 10255 (read-only) and 10248
#   (healthz), all bound to 127.0.0.1 only.
# - processes: the kubelet, its containerd and the shims (pidfiles in
#   $DIR/run); it sets its own oom_score_adj to -999 (refused on this
#   host: it logs and goes on).
#   podman install Debian's podman and configure it privately to pull from
#          this testbed's mirror (hack/bench compares with it; see
#          cmd_podman). Optional.
#   slow-registry up [shared|per-connection]|down|env   a registry behind
#          a slow link (a network namespace, a veth pair with a rate limit
#          and a delay) serving three images of 25 MB, for hack/bench's
#          cold-start table; up's argument picks the link model (shared by
#          default); see "slow registry" below. Optional; down removes all
#          of it.
#
# Settings (environment):
#   PODRUN_TESTBED_DIR           where everything lives (/var/lib/podrun-testbed)
#   PODRUN_TESTBED_CONTAINERD    which containerd (v2):
#       v2      containerd $CONTAINERD_V2_VERSION (pinned below) and its
#               containerd-shim-runc-v2, built with `go install` from the Go
#               module proxy into $DIR/opt/containerd-<version>/bin (once per
#               version: a few minutes cold, skipped when already built),
#               and runc $RUNC_VERSION the same way (with seccomp, against
#               Debian's libseccomp-dev) into $DIR/opt/runc-<version>/bin:
#               Debian's runc 1.1 has no idmapped mounts, so containerd
#               would report no user namespace support (hostUsers: false).
#               Root, state and shim sockets under $DIR/v2. Has CRI
#               GetContainerEvents.
#       debian  Debian's containerd 1.6 and runc 1.1 (apt). Root and state
#               under $DIR. No GetContainerEvents, no user namespaces;
#               shim sockets in /run/containerd/s.
#     Switching a running testbed needs `down` first: while one flavor
#     runs, `up` keeps it if this is unset and refuses if it names another.
#   PODRUN_TESTBED_MIRROR_PORT   mirror registry port (35443)
#   PODRUN_TESTBED_PRIVATE_PORT  private registry port (35444)
#   PODRUN_TESTBED_CGROUP_DRIVER the runtime's cgroup driver (cgroupfs):
#                                SystemdCgroup in containerd's runc options
#                                and the kubelet's cgroupDriver; systemd
#                                needs systemd as PID 1 (the guest of
#                                hack/guest.sh). podrun is never told: it
#                                finds the driver as it does on any node.
#   PODRUN_TESTBED_POD_SUBNET    pod subnet (10.88.0.0/16)
#   PODRUN_TESTBED_BRIDGE        bridge device (cni-podrun0)
#   PODRUN_TESTBED_KUBELET_VERSION   kubelet release (v1.37.2): any
#                                k8s.io/kubernetes version on the module proxy
#   PODRUN_TESTBED_KUBELET_POD_SUBNET  the kubelet's pod subnet (10.89.0.0/16)
#   PODRUN_TESTBED_KUBELET_BRIDGE      its bridge device (cni-podrunk0)
#   PODRUN_TESTBED_KUBELET_PORT, _READONLY_PORT, _HEALTHZ_PORT
#                                its ports (10250, 10255, 10248)
#   PODRUN_TESTBED_KUBELET_CGROUP_ROOT its cgroupRoot (/podrun-kubelet);
#                                / is kubeadm's (no cgroupRoot: kubepods
#                                at the top, for a node of the testbed's
#                                own such as the guest)
#   PODRUN_TESTBED_KUBELET_NODE_NAME   its node name (the host name)
#   PODRUN_TESTBED_KUBELET_V           its log verbosity (2)
#   PODRUN_TESTBED_KUBELET_KUBECONFIG  a kubeconfig (kubeadm's kubelet.conf):
#                                the kubelet registers its Node and mirror
#                                pods in that API server (unset: standalone)
#   PODRUN_TESTBED_KUBELET_STATIC_POD_PATH  its staticPodPath
#                                ($DIR/kubelet/manifests)
#   PODRUN_TESTBED_REGISTRIES    another testbed's DIR whose registries, CA
#                                and images this one uses instead of its own
#                                (that testbed must be up; ports unused here)
# A second testbed next to the default one needs its own DIR, subnet and
# bridge, and either both ports or PODRUN_TESTBED_REGISTRIES (and, with a
# kubelet, its subnet, bridge, ports and cgroup root).
#
# Flavor instances: `up|down|env --flavor F` acts on the instance of flavor
# F next to the default testbed, so that both containerd lines run at once
# (CI runs the e2e suite on v2 and a subset on Debian's 1.6: make
# e2e-containerd16). --flavor v2 is the default testbed itself; --flavor
# debian is $PODRUN_TESTBED_DIR-debian, pod subnet 10.87.0.0/16, bridge
# cni-podrun16, with the default testbed's registries
# (PODRUN_TESTBED_REGISTRIES), so `up` of the default one comes first:
#   bash hack/testbed.sh up && bash hack/testbed.sh up --flavor debian
#   set -a; eval "$(bash hack/testbed.sh env --flavor debian)"; set +a
# --flavor scratch is a second v2 instance for destructive tests (those that
# restart containerd) on a machine whose default testbed others use:
# $PODRUN_TESTBED_DIR-scratch, pod subnet 10.85.0.0/16 (podman's is 10.86), bridge cni-podrunx0,
# the default testbed's registries, and containerd and runc copied from the
# default testbed when it has built the same versions.
#
# Everything lives under $PODRUN_TESTBED_DIR; the host's /etc/containerd,
# /var/lib/containerd and the host containerd's socket are never used, and
# with v2 nothing touches /run/containerd either (checked with strace). What
# still lands outside (see "Caveats"): libcni's result cache in
# /var/lib/cni/results (both flavors), with debian shim sockets in
# /run/containerd/s/, and of course the pods' cgroups
# (/sys/fs/cgroup/*/k8s.io/<ID>), veths and iptables rules.
#
# Caveats:
# - containerd 1.6 shims put their ttrpc socket at /run/containerd/s/<sha256>
#   whatever the config says. The name hashes our own socket path, so it
#   never collides with a host containerd; shims delete it when they exit,
#   and `down` removes the directories if this testbed created them.
#   containerd v2 also defaults to /run/containerd/s, but has
#   [plugins.'io.containerd.shim.v1.manager'] socket_dir (at most 42
#   characters: the socket path is <dir>/<64 hex>, under the 108-byte unix
#   limit), set to $DIR/v2/s here.
# - Neither flavor's CRI gives libcni a cache dir (go-cni has no option for
#   it), so results are cached in /var/lib/cni/results as
#   "<network>-<container ID>-<ifname>" (deleted on CNI DEL; `down` sweeps
#   ours). IPAM state is ours. v2 brings up the pod's "lo" itself
#   (use_internal_loopback), so only the bridge result is cached there.
# - Running containerd in its own mount namespace would hide these, but
#   this machine's / is a private mount, so mounts the host makes later
#   (podrun's tmpfs volumes, say) would never reach the containers. Not
#   done for that.
set -euo pipefail

DIR=${PODRUN_TESTBED_DIR:-/var/lib/podrun-testbed}
MIRROR_PORT=${PODRUN_TESTBED_MIRROR_PORT:-35443}
PRIVATE_PORT=${PODRUN_TESTBED_PRIVATE_PORT:-35444}
POD_SUBNET=${PODRUN_TESTBED_POD_SUBNET:-10.88.0.0/16}
BRIDGE=${PODRUN_TESTBED_BRIDGE:-cni-podrun0}
FLAVOR=${PODRUN_TESTBED_CONTAINERD:-v2}
CGROUP_DRIVER=${PODRUN_TESTBED_CGROUP_DRIVER:-cgroupfs}
# The newest v2 release on proxy.golang.org when this was written
# (`go list -m -versions github.com/containerd/containerd/v2`). A new pin
# builds into a new directory; switch with `down` then `up`.
CONTAINERD_V2_VERSION=v2.4.2
# The last 1.3 release (`go list -m -versions github.com/opencontainers/runc`):
# idmapped mounts for user namespaces, and cgroup v1 as these machines have.
RUNC_VERSION=v1.3.6
CNI_BIN_DIR=/usr/lib/cni
SOCK=$DIR/run/containerd.sock
ENDPOINT=unix://$SOCK
CA=$DIR/tls/ca.crt
PASSWORD_FILE=$DIR/registry/private/password
SHARED_REGISTRIES=${PODRUN_TESTBED_REGISTRIES:-}
MIRROR=127.0.0.1:$MIRROR_PORT
PRIVATE=127.0.0.1:$PRIVATE_PORT
PRIVATE_USER=podrun
PRIVATE_IMAGE=$PRIVATE/private/busybox:1.0
SANDBOX_IMAGE=registry.k8s.io/pause:3.10
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# The oracle kubelet (kubelet-up): a k8s.io/kubernetes release on the Go
# module proxy; each version builds into a directory of its own.
KUBELET_VERSION=${PODRUN_TESTBED_KUBELET_VERSION:-v1.37.2}
KUBELET_OPT=$DIR/opt/kubelet-$KUBELET_VERSION
KUBELET=$KUBELET_OPT/bin/kubelet
# The control plane of the same release (build_controlplane), and etcd at
# the version kubeadm $KUBELET_VERSION names (constants.DefaultEtcdVersion
# 3.7.0-0: image tag 3.7.0-0, etcd release v3.7.0).
CP_OPT=$DIR/opt/controlplane-$KUBELET_VERSION
CP_COMMANDS=(kubeadm kube-apiserver kube-controller-manager kube-scheduler)
ETCD_VERSION=${PODRUN_TESTBED_ETCD_VERSION:-3.7.0}
ETCD_IMAGE_TAG=$ETCD_VERSION-0
KDIR=$DIR/kubelet
KUBELET_POD_SUBNET=${PODRUN_TESTBED_KUBELET_POD_SUBNET:-10.89.0.0/16}
KUBELET_BRIDGE=${PODRUN_TESTBED_KUBELET_BRIDGE:-cni-podrunk0}
KUBELET_PORT=${PODRUN_TESTBED_KUBELET_PORT:-10250}
KUBELET_READONLY_PORT=${PODRUN_TESTBED_KUBELET_READONLY_PORT:-10255}
KUBELET_HEALTHZ_PORT=${PODRUN_TESTBED_KUBELET_HEALTHZ_PORT:-10248}
KUBELET_CGROUP_ROOT=${PODRUN_TESTBED_KUBELET_CGROUP_ROOT:-/podrun-kubelet}
KUBELET_NODE_NAME=${PODRUN_TESTBED_KUBELET_NODE_NAME:-$(uname -n | tr '[:upper:]' '[:lower:]')}
KUBELET_VERBOSITY=${PODRUN_TESTBED_KUBELET_V:-2}
# A node of a cluster rather than a standalone kubelet (the control-plane
# test, e2e/controlplane_test.go): kubeadm's kubelet.conf as --kubeconfig
# and its static pod dir (/etc/kubernetes/manifests) as staticPodPath.
# Both unset: the standalone oracle.
KUBELET_KUBECONFIG=${PODRUN_TESTBED_KUBELET_KUBECONFIG:-}
KUBELET_STATIC_POD_PATH=${PODRUN_TESTBED_KUBELET_STATIC_POD_PATH:-$KDIR/manifests}
# What the kubelet's container manager sets on start unless
# protectKernelDefaults (setupKernelTunables in
# pkg/kubelet/cm/container_manager_linux.go; the values are in
# k8s.io/component-helpers/node/util/sysctl): vm.overcommit_memory=1,
# vm.panic_on_oom=0, kernel.panic=10, kernel.panic_on_oops=1,
# kernel.keys.root_maxkeys=1000000, kernel.keys.root_maxbytes=25000000.
# Host paths the kubelet writes whatever its settings: the legacy container
# log symlinks (kubelet.ContainerLogsDir), the device plugin registration
# socket (k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1.KubeletSocket), and
# libmount's /run/mount, made by the mount(8) calls of MakeRShared.
KUBELET_DEVICE_SOCKET=/var/lib/kubelet/device-plugins/kubelet.sock
KUBELET_HOST_DIRS=(/var/log/containers /var/lib/kubelet /var/lib/kubelet/device-plugins /run/mount)
KUBELET_SYSCTLS=(vm.overcommit_memory vm.panic_on_oom kernel.panic kernel.panic_on_oops
  kernel.keys.root_maxkeys kernel.keys.root_maxbytes)

# set_flavor FLAVOR: the containerd binary, its root and state, and (v2)
# where the Go-built binaries go and where shims put their sockets.
set_flavor() {
  FLAVOR=$1
  case $FLAVOR in
  debian)
    CONTAINERD=/usr/bin/containerd
    RUNC=/usr/sbin/runc
    CTR_ROOT=$DIR/root
    CTR_STATE=$DIR/state
    ;;
  v2)
    V2_OPT=$DIR/opt/containerd-$CONTAINERD_V2_VERSION
    CONTAINERD=$V2_OPT/bin/containerd
    SHIM=$V2_OPT/bin/containerd-shim-runc-v2
    RUNC=$DIR/opt/runc-$RUNC_VERSION/bin/runc
    # Not $DIR/root and $DIR/state: containerd 1.6 must not meet a
    # database v2 has migrated when a testbed switches back.
    CTR_ROOT=$DIR/v2/root
    CTR_STATE=$DIR/v2/state
    SHIM_SOCKET_DIR=$DIR/v2/s
    ;;
  *)
    echo "testbed: error: PODRUN_TESTBED_CONTAINERD must be v2 or debian, not '$FLAVOR'" >&2
    exit 2
    ;;
  esac
}
set_flavor "$FLAVOR"

# systemd_cgroup: SystemdCgroup's value in containerd's runc options for
# $CGROUP_DRIVER.
systemd_cgroup() {
  case $CGROUP_DRIVER in
  cgroupfs) echo false ;;
  systemd) echo true ;;
  *) die "PODRUN_TESTBED_CGROUP_DRIVER must be cgroupfs or systemd, not '$CGROUP_DRIVER'" ;;
  esac
}

# check_cgroup_driver: the systemd driver needs systemd as PID 1 (runc and
# the kubelet ask it over D-Bus to make slices).
check_cgroup_driver() {
  systemd_cgroup >/dev/null
  if [[ $CGROUP_DRIVER == systemd && ! -d /run/systemd/system ]]; then
    die "PODRUN_TESTBED_CGROUP_DRIVER=systemd needs systemd as PID 1 (this host's PID 1 is $(cat /proc/1/comm)); the guest (hack/guest.sh) has it"
  fi
}

# Debian packages the testbed needs, each with a file that proves it is there.
PACKAGES=(
  runc:/usr/sbin/runc
  gcc:/usr/bin/gcc
  pkg-config:/usr/bin/pkg-config
  libseccomp-dev:/usr/include/seccomp.h
  containernetworking-plugins:/usr/lib/cni/bridge
  docker-registry:/usr/bin/docker-registry
  skopeo:/usr/bin/skopeo
  busybox-static:/bin/busybox
  openssl:/usr/bin/openssl
  apache2-utils:/usr/bin/htpasswd
  iproute2:/sbin/ip
  iptables:/usr/sbin/iptables
  curl:/usr/bin/curl
  util-linux:/usr/bin/setsid
  zsh:/usr/bin/zsh
  fish:/usr/bin/fish
  libxml2-utils:/usr/bin/xmllint
)

# Images in the mirror. Repository paths are "<upstream host>/<path>": the
# hosts.toml of each upstream maps it to a namespace of the mirror (see
# write_hosts_toml). Format: "<kind> <upstream>/<path> <tag>...", kind being
# busybox, idle, nginx or etcd (see build_images). The etcd image holds the
# real etcd and etcdctl of Debian's etcd-server and etcd-client packages
# (3.4.23), tagged as kubeadm names its images (<version>-0): the
# bootstrap example and the hand-over test run it.
MIRROR_IMAGES=(
  "busybox docker.io/library/busybox latest 1.28 1.34 1.35 1.36 stable"
  "busybox registry.k8s.io/busybox latest 1.27.2"
  "busybox k8s.gcr.io/busybox latest 1.27.2"
  "busybox docker.io/library/debian latest stable bookworm 12"
  "busybox docker.io/library/alpine latest"
  "busybox docker.io/library/fedora latest"
  "idle registry.k8s.io/pause 3.6 3.7 3.8 3.9 3.10"
  "idle k8s.gcr.io/pause 2.0 3.1"
  "idle registry.k8s.io/e2e-test-images/agnhost 2.39 2.40 2.45"
  "idle gcr.io/google-samples/hello-app 1.0 2.0"
  "idle gcr.io/google-samples/node-hello 1.0"
  "nginx docker.io/library/nginx latest 1.14.2 1.16.1 1.29"
  "nginx registry.k8s.io/nginx latest"
  "etcd registry.k8s.io/etcd 3.4.23-0"
  "artifact quay.io/crio/artifact v2"
)
# Upstream registry names that get a hosts.toml pointing at the mirror.
UPSTREAMS=(docker.io registry.k8s.io k8s.gcr.io gcr.io quay.io ghcr.io)

log() { printf 'testbed: %s\n' "$*" >&2; }
die() { printf 'testbed: error: %s\n' "$*" >&2; exit 1; }

# ---------------------------------------------------------------- helpers --

# alive PIDFILE EXE: the pid in PIDFILE runs EXE (guards against pid reuse).
alive() {
  local pid
  [[ -s $1 ]] || return 1
  pid=$(<"$1")
  [[ -d /proc/$pid ]] || return 1
  [[ $(readlink "/proc/$pid/exe" 2>/dev/null) == "$2" ]]
}

# stop_pid PIDFILE EXE NAME: SIGTERM, wait up to 10s, then SIGKILL.
stop_pid() {
  local pidfile=$1 exe=$2 name=$3 pid i
  if alive "$pidfile" "$exe"; then
    pid=$(<"$pidfile")
    log "stopping $name (pid $pid)"
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < 100; i++)); do
      alive "$pidfile" "$exe" || break
      sleep 0.1
    done
    if alive "$pidfile" "$exe"; then
      log "$name did not stop on SIGTERM; killing"
      kill -KILL "$pid" 2>/dev/null || true
    fi
  fi
  rm -f "$pidfile"
}

# start_daemon NAME EXE CONFIG ARGS...: start EXE detached (own session, log
# under $DIR/log) unless it already runs with the same CONFIG content; a
# changed config restarts it.
start_daemon() {
  local name=$1 exe=$2 config=$3
  shift 3
  local pidfile=$DIR/run/$name.pid sumfile=$DIR/run/$name.config.sha256 sum
  sum=$(sha256sum "$config" | cut -d' ' -f1)
  if alive "$pidfile" "$exe"; then
    if [[ -f $sumfile && $(<"$sumfile") == "$sum" ]]; then
      return 0
    fi
    log "$name config changed: restarting"
    stop_pid "$pidfile" "$exe" "$name"
  fi
  log "starting $name (log $DIR/log/$name.log)"
  # setsid: its own session, so it outlives this script and its terminal.
  # Not a process-group leader here (no job control), so setsid execs in
  # place and $! is the daemon's pid.
  setsid "$exe" "$@" >>"$DIR/log/$name.log" 2>&1 </dev/null &
  echo $! >"$pidfile"
  echo "$sum" >"$sumfile"
}

# put FILE: write stdin to FILE only if the content differs, atomically
# (containerd watches the CNI dir and reads hosts.toml on every pull, so a
# half-written file must never be seen, and an unchanged one not touched).
put() {
  mkdir -p "$(dirname "$1")"
  cat >"$1.tmp.$$"
  if cmp -s "$1.tmp.$$" "$1"; then
    rm -f "$1.tmp.$$"
  else
    mv -f "$1.tmp.$$" "$1"
  fi
}

# wait_for WHAT SECONDS CMD...: retry CMD every 0.1s.
wait_for() {
  local what=$1 secs=$2 i
  shift 2
  for ((i = 0; i < secs * 10; i++)); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 0.1
  done
  return 1
}

# registry_answers PORT EXPECTED_HTTP_CODE: the registry on PORT answers
# /v2/ with the code. Three tries, 5 s each: through the systemd guest's
# socket proxy on a loaded host one TLS handshake took more than 2 s.
registry_answers() {
  local i
  for i in 1 2 3; do
    [[ $(curl -s -o /dev/null -w '%{http_code}' --max-time 5 --cacert "$CA" "https://127.0.0.1:$1/v2/") == "$2" ]] && return 0
  done
  return 1
}

cri_answers() { "$DIR/bin/cribare" -endpoint "$ENDPOINT" -ping -timeout 3s; }

# ---------------------------------------------------------------- install --

install_packages() {
  local missing=() entry
  for entry in "${PACKAGES[@]}"; do
    [[ -e ${entry#*:} ]] || missing+=("${entry%%:*}")
  done
  ((${#missing[@]} == 0)) && return 0
  log "installing Debian packages: ${missing[*]}"
  # The lists may be empty on a fresh machine: update once, then install.
  apt-get update -qq || die "apt-get update failed"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2 ||
    die "apt-get install ${missing[*]} failed"
  for entry in "${PACKAGES[@]}"; do
    [[ -e ${entry#*:} ]] || die "package ${entry%%:*} installed but ${entry#*:} is missing"
  done
}

build_tools() {
  # The Go helpers are rebuilt only when their sources change, or copied
  # from the testbed whose registries this one uses when it built them
  # from the same sources (a guest of hack/guest.sh has no Go).
  local t sum from
  for t in cribare mkimage; do
    sum=$(cat "$REPO/hack/$t"/*.go "$REPO/go.mod" | sha256sum | cut -d' ' -f1)
    if [[ -x $DIR/bin/$t && -f $DIR/bin/$t.sha256 && $(<"$DIR/bin/$t.sha256") == "$sum" ]]; then
      continue
    fi
    from=${SHARED_REGISTRIES:-/nonexistent}/bin
    if [[ -x $from/$t && -f $from/$t.sha256 && $(<"$from/$t.sha256") == "$sum" ]]; then
      cp "$from/$t" "$DIR/bin/$t.tmp" && mv -f "$DIR/bin/$t.tmp" "$DIR/bin/$t" && echo "$sum" >"$DIR/bin/$t.sha256"
      continue
    fi
    command -v go >/dev/null || die "go is needed to build hack/$t"
    log "building hack/$t"
    (cd "$REPO" && CGO_ENABLED=0 go build -o "$DIR/bin/$t" "./hack/$t") || die "go build ./hack/$t failed"
    echo "$sum" >"$DIR/bin/$t.sha256"
  done
}

# seed_opt NAME: copy $SHARED_REGISTRIES/opt/NAME (a built containerd or
# runc of the testbed whose registries this one uses) into $DIR/opt when
# this testbed has none, instead of building the same version again.
seed_opt() {
  local from=${SHARED_REGISTRIES:-}/opt/$1
  [[ -n ${SHARED_REGISTRIES:-} && -f $from/bin/built && ! -e $DIR/opt/$1 ]] || return 0
  log "copying $1 from $SHARED_REGISTRIES"
  mkdir -p "$DIR/opt" && cp -a "$from" "$DIR/opt/$1.tmp" && mv "$DIR/opt/$1.tmp" "$DIR/opt/$1"
}

build_containerd_v2() {
  # containerd and its runc shim from the Go module proxy, once per pinned
  # version (the "built" stamp is written only after both are installed).
  # CGO_ENABLED=0 as upstream builds the shim; for containerd it only drops
  # the btrfs snapshotter, unused here. The directory is the opt plugin's
  # path (see write_containerd_config), not $DIR/opt: containerd 1.6 puts
  # $DIR/opt/bin first in PATH and would run the v2 shim.
  [[ $FLAVOR == v2 ]] || return 0
  seed_opt "containerd-$CONTAINERD_V2_VERSION"
  local bin=$V2_OPT/bin t0=$SECONDS
  if [[ -x $CONTAINERD && -x $SHIM && -f $bin/built ]]; then
    return 0
  fi
  command -v go >/dev/null || die "go is needed to build containerd $CONTAINERD_V2_VERSION"
  log "building containerd $CONTAINERD_V2_VERSION with go install (a few minutes the first time)"
  mkdir -p "$bin"
  # From /, so that no go.mod or go.work around is involved.
  (cd / && GOBIN=$bin CGO_ENABLED=0 GOFLAGS=-buildvcs=false go install \
    "github.com/containerd/containerd/v2/cmd/containerd@$CONTAINERD_V2_VERSION" \
    "github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2@$CONTAINERD_V2_VERSION") ||
    die "go install of containerd $CONTAINERD_V2_VERSION failed"
  [[ -x $CONTAINERD && -x $SHIM ]] || die "go install did not produce $CONTAINERD and $SHIM"
  echo "$CONTAINERD_V2_VERSION" >"$bin/built"
  log "built containerd $CONTAINERD_V2_VERSION in $((SECONDS - t0))s"
}

build_runc() {
  # runc for the v2 flavor from the Go module proxy, once per pinned
  # version, as upstream builds it: cgo with libseccomp ("seccomp" tag),
  # so that RuntimeDefault and Localhost seccomp profiles work.
  [[ $FLAVOR == v2 ]] || return 0
  seed_opt "runc-$RUNC_VERSION"
  local bin t0=$SECONDS
  bin=$(dirname "$RUNC")
  if [[ -x $RUNC && -f $bin/built ]]; then
    return 0
  fi
  log "building runc $RUNC_VERSION with go install"
  mkdir -p "$bin"
  (cd / && GOBIN=$bin CGO_ENABLED=1 GOFLAGS=-buildvcs=false go install -tags seccomp \
    "github.com/opencontainers/runc@$RUNC_VERSION") ||
    die "go install of runc $RUNC_VERSION failed"
  "$RUNC" features | grep -q '"idmap"' || die "runc $RUNC_VERSION reports no idmapped mounts"
  echo "$RUNC_VERSION" >"$bin/built"
  log "built runc $RUNC_VERSION in $((SECONDS - t0))s"
}

# -------------------------------------------------------------------- tls --

make_tls() {
  local d=$DIR/tls
  if [[ -s $d/ca.crt && -s $d/server.crt && -s $d/server.key ]] &&
    openssl x509 -checkend 86400 -noout -in "$d/server.crt" >/dev/null; then
    return 0
  fi
  log "making a CA and a server certificate for 127.0.0.1/localhost"
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 3650 \
    -subj "/CN=podrun testbed CA" -keyout "$d/ca.key" -out "$d/ca.crt" \
    -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign 2>/dev/null
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
    -subj "/CN=localhost" -keyout "$d/server.key" -out "$d/server.csr" 2>/dev/null
  printf '%s\n' "subjectAltName=IP:127.0.0.1,DNS:localhost" \
    "basicConstraints=CA:FALSE" "extendedKeyUsage=serverAuth" >"$d/server.ext"
  openssl x509 -req -in "$d/server.csr" -CA "$d/ca.crt" -CAkey "$d/ca.key" -CAcreateserial \
    -days 3650 -extfile "$d/server.ext" -out "$d/server.crt" 2>/dev/null
  # skopeo takes a directory of CA files.
  mkdir -p "$d/skopeo" && cp "$d/ca.crt" "$d/skopeo/ca.crt"
}

# ------------------------------------------------------------- registries --

# registry_config WHAT DATA ADDR TLSDIR: a docker-registry configuration:
# its blobs in DATA, TLS on ADDR with TLSDIR's server.crt and server.key,
# deletes allowed, warnings only.
registry_config() {
  cat <<EOF
# Written by hack/testbed.sh: $1.
version: 0.1
log:
  level: warn
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: $2
  delete:
    enabled: true
http:
  addr: $3
  tls:
    certificate: $4/server.crt
    key: $4/server.key
EOF
}

write_registry_configs() {
  local name port
  for name in mirror private; do
    port=$MIRROR_PORT
    [[ $name == private ]] && port=$PRIVATE_PORT
    mkdir -p "$DIR/registry/$name"
    {
      registry_config "the testbed's $name registry" "$DIR/registry/$name/data" "127.0.0.1:$port" "$DIR/tls"
      if [[ $name == private ]]; then
        cat <<EOF
auth:
  htpasswd:
    realm: podrun-testbed-private
    path: $DIR/registry/private/htpasswd
EOF
      fi
    } | put "$DIR/registry/$name/config.yml"
  done
  # Basic-auth credentials, generated once and kept (tests read them from env).
  if [[ ! -s $DIR/registry/private/password ]]; then
    openssl rand -hex 12 >"$DIR/registry/private/password"
    rm -f "$DIR/registry/private/htpasswd"
  fi
  if [[ ! -s $DIR/registry/private/htpasswd ]]; then
    htpasswd -B -b -c "$DIR/registry/private/htpasswd" "$PRIVATE_USER" \
      "$(<"$DIR/registry/private/password")" 2>/dev/null
  fi
}

start_registries() {
  local reg=/usr/bin/docker-registry
  start_daemon registry-mirror "$reg" "$DIR/registry/mirror/config.yml" serve "$DIR/registry/mirror/config.yml"
  start_daemon registry-private "$reg" "$DIR/registry/private/config.yml" serve "$DIR/registry/private/config.yml"
  wait_for "mirror" 15 registry_answers "$MIRROR_PORT" 200 ||
    die "the mirror registry does not answer on https://$MIRROR/v2/; see $DIR/log/registry-mirror.log"
  # Without credentials the private registry must say 401.
  wait_for "private registry" 15 registry_answers "$PRIVATE_PORT" 401 ||
    die "the private registry does not answer 401 on https://$PRIVATE/v2/; see $DIR/log/registry-private.log"
}

# ----------------------------------------------------------------- images --

# build_images OUT: rootfs dirs and OCI layouts for the three image kinds.
build_images() {
  local out=$1 r a
  rm -rf "$out" && mkdir -p "$out"

  # Base rootfs, shared by every image: busybox with a symlink per applet.
  r=$out/rootfs-base
  mkdir -p "$r"/{bin,etc,root,home/user,tmp,var/tmp,proc,sys,dev,usr/bin,usr/sbin,sbin}
  chmod 1777 "$r/tmp" "$r/var/tmp"
  chmod 700 "$r/root"
  cp /bin/busybox "$r/bin/busybox"
  for a in $(/bin/busybox --list); do
    [[ $a == busybox ]] || ln -s busybox "$r/bin/$a"
  done
  # Debian's busybox-static has no printenv applet. An awk script rather
  # than sh: busybox sh drops variables whose names are not shell names
  # (Kubernetes allows "a.b" or "a-b"), awk's ENVIRON keeps them all.
  cat >"$r/bin/printenv" <<'EOF'
#!/bin/awk -f
# printenv stand-in: no args prints the environment like env; with names
# prints each value and exits 1 if any is unset.
BEGIN {
  if (ARGC < 2) { for (k in ENVIRON) print k "=" ENVIRON[k]; exit 0 }
  rc = 0
  for (i = 1; i < ARGC; i++) { if (ARGV[i] in ENVIRON) print ENVIRON[ARGV[i]]; else rc = 1 }
  exit rc
}
EOF
  # Idle stand-in entrypoint. As PID 1, signals without a handler are
  # ignored, so trap TERM/INT to exit 0 at once; `sleep & wait` keeps the
  # shell able to run the trap while sleeping.
  cat >"$r/bin/idle" <<'EOF'
#!/bin/sh
# Idle stand-in (pause, agnhost, hello-app, ...): arguments are ignored.
trap 'exit 0' TERM INT
while :; do sleep 3600 & wait $!; done
EOF
  chmod 755 "$r/bin/printenv" "$r/bin/idle"
  cat >"$r/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/bin/sh
user:x:1000:1000:user:/home/user:/bin/sh
nobody:x:65534:65534:nobody:/nonexistent:/bin/false
EOF
  cat >"$r/etc/group" <<'EOF'
root:x:0:
user:x:1000:
nogroup:x:65534:
nobody:x:65534:
EOF
  chown 1000:1000 "$r/home/user" # mkimage writes 0:0 anyway; kept for clarity
  chmod 755 "$r/home/user"

  # Idle extra layer: the paths real pause/agnhost images run.
  r=$out/rootfs-idle
  mkdir -p "$r"
  ln -s bin/idle "$r/pause"
  ln -s bin/idle "$r/agnhost"

  # nginx extra layer: busybox httpd serving /usr/share/nginx/html.
  r=$out/rootfs-nginx
  mkdir -p "$r/usr/sbin" "$r/usr/share/nginx/html"
  cat >"$r/usr/share/nginx/html/index.html" <<'EOF'
<!DOCTYPE html>
<html><head><title>Welcome to nginx!</title></head>
<body><h1>Welcome to nginx!</h1><p>podrun testbed stand-in (busybox httpd).</p></body></html>
EOF
  cat >"$r/docker-entrypoint.sh" <<'EOF'
#!/bin/sh
exec "$@"
EOF
  cat >"$r/usr/sbin/nginx" <<'EOF'
#!/bin/sh
# nginx stand-in: busybox httpd on :80 in the foreground, whatever the
# arguments ("-g 'daemon off;'"), except "-s stop|quit" which stops PID 1.
if [ "$1" = -s ]; then kill -TERM 1; exit 0; fi
trap 'exit 0' TERM INT QUIT
httpd -f -p 80 -h /usr/share/nginx/html &
wait $!
EOF
  chmod 755 "$r/docker-entrypoint.sh" "$r/usr/sbin/nginx"

  # Private extra layer: a marker, so the private image has an image ID of
  # its own (removing it never removes busybox, and tests can tell them apart).
  r=$out/rootfs-private
  mkdir -p "$r/etc"
  echo "podrun testbed private image" >"$r/etc/podrun-private-image"

  # etcd extra layer: etcd and etcdctl from Debian's packages (downloaded,
  # not installed: the host gets no etcd service or user), with the C
  # library they link against, taken from the host (Debian's libc6).
  r=$out/rootfs-etcd
  mkdir -p "$r/usr/bin" "$r/lib/x86_64-linux-gnu" "$r/lib64" "$r/var/lib/etcd"
  etcd_debs "$DIR/debs"
  for a in "$DIR"/debs/etcd-server_*.deb "$DIR"/debs/etcd-client_*.deb; do
    dpkg-deb -x "$a" "$out/etcd-deb"
  done
  cp "$out/etcd-deb/usr/bin/etcd" "$out/etcd-deb/usr/bin/etcdctl" "$r/usr/bin/"
  cp -L /lib/x86_64-linux-gnu/libc.so.6 "$r/lib/x86_64-linux-gnu/"
  cp -L /lib64/ld-linux-x86-64.so.2 "$r/lib64/"
  rm -rf "$out/etcd-deb"

  # Image volume content, as the Kubernetes docs' quay.io/crio/artifact:v2
  # holds it (their image-volumes examples): /file with 1, /dir/file with 2.
  # An image of one data layer, mounted by the runtime, never run.
  r=$out/rootfs-artifact
  mkdir -p "$r/dir"
  echo 1 >"$r/file"
  echo 2 >"$r/dir/file"

  local PATHENV=PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
  "$DIR/bin/mkimage" -out "$out/busybox" -layer "$out/rootfs-base" -env "$PATHENV" -cmd '["sh"]'
  "$DIR/bin/mkimage" -out "$out/private" -layer "$out/rootfs-base" -layer "$out/rootfs-private" \
    -env "$PATHENV" -cmd '["sh"]'
  "$DIR/bin/mkimage" -out "$out/idle" -layer "$out/rootfs-base" -layer "$out/rootfs-idle" \
    -env "$PATHENV" -entrypoint '["/bin/idle"]'
  "$DIR/bin/mkimage" -out "$out/nginx" -layer "$out/rootfs-base" -layer "$out/rootfs-nginx" \
    -env "$PATHENV" -expose 80/tcp -entrypoint '["/docker-entrypoint.sh"]' -cmd '["nginx","-g","daemon off;"]'
  "$DIR/bin/mkimage" -out "$out/etcd" -layer "$out/rootfs-base" -layer "$out/rootfs-etcd" \
    -env "$PATHENV" -expose 2379/tcp -expose 2380/tcp -cmd '["etcd"]'
  "$DIR/bin/mkimage" -out "$out/artifact" -layer "$out/rootfs-artifact"
}

# etcd_debs DIR: Debian's etcd-server and etcd-client packages in DIR,
# downloaded once (apt-get download: nothing is installed).
etcd_debs() {
  local d=$1
  if compgen -G "$d/etcd-server_*.deb" >/dev/null && compgen -G "$d/etcd-client_*.deb" >/dev/null; then
    return 0
  fi
  mkdir -p "$d"
  # A fresh machine may have no package lists yet.
  (cd "$d" && { apt-get download -qq etcd-server etcd-client >&2 ||
    { apt-get update -qq && apt-get download -qq etcd-server etcd-client >&2; }; }) ||
    die "apt-get download etcd-server etcd-client failed"
}

# pushed STAMP SUM REPO:TAG: whether images made from inputs that hash to
# SUM are in the mirror: STAMP holds SUM and the mirror serves REPO:TAG.
pushed() {
  [[ -f $1 && $(<"$1") == "$2" ]] &&
    curl -sf --max-time 5 --cacert "$CA" -o /dev/null \
      -H 'Accept: application/vnd.oci.image.manifest.v1+json' \
      "https://$MIRROR/v2/${3%:*}/manifests/${3##*:}"
}

push_images() {
  # Stamp of every input: if it matches and the registries still hold the
  # last push (their data lives under $DIR too), there is nothing to do.
  local stamp sum
  stamp=$DIR/images.stamp
  sum=$( {
    sha256sum /bin/busybox "$REPO/hack/mkimage/main.go" "${BASH_SOURCE[0]}"
    echo "$MIRROR $PRIVATE"
  } | sha256sum | cut -d' ' -f1)
  if pushed "$stamp" "$sum" registry.k8s.io/pause:3.10; then
    return 0
  fi
  log "building images"
  build_images "$DIR/images"
  log "pushing images to the mirror ($MIRROR) and the private registry ($PRIVATE)"
  # One job per repository, its tags pushed in turn: distribution 2.8's
  # filesystem storage races when one repository gets concurrent pushes
  # (HEAD reads a half-written link file: 500 "invalid checksum digest
  # format"). Repositories go four at a time to keep a cold `up` short;
  # skopeo skips blobs the registry already has.
  printf '%s\n' "${MIRROR_IMAGES[@]}" | xargs -P4 -L1 sh -c '
    certs=$1 images=$2 mirror=$3 kind=$4 repo=$5
    shift 5
    for tag in "$@"; do
      skopeo copy --quiet --retry-times 3 --dest-cert-dir "$certs" \
        "oci:$images/$kind" "docker://$mirror/$repo:$tag" || exit 255
    done' sh "$DIR/tls/skopeo" "$DIR/images" "$MIRROR" ||
    die "skopeo copy to the mirror failed"
  skopeo copy --quiet --dest-cert-dir "$DIR/tls/skopeo" \
    --dest-creds "$PRIVATE_USER:$(<"$DIR/registry/private/password")" \
    "oci:$DIR/images/private" "docker://$PRIVATE_IMAGE" ||
    die "skopeo copy to the private registry failed"
  echo "$sum" >"$stamp"
}

# use_shared_registries: the registries, CA and images of the testbed in
# $PODRUN_TESTBED_REGISTRIES, as its `up` wrote them in its testbed.env.
use_shared_registries() {
  local base=$SHARED_REGISTRIES env
  [[ $base != "$DIR" ]] || die "PODRUN_TESTBED_REGISTRIES names this testbed itself ($DIR)"
  env=$base/testbed.env
  [[ -s $env ]] || die "no $env: bring the testbed whose registries this one uses up first ('$0 up')"
  shared_setting() { sed -n "s/^PODRUN_TESTBED_$1=//p" "$env"; }
  CA=$(shared_setting CA)
  MIRROR=$(shared_setting MIRROR)
  PRIVATE=$(shared_setting PRIVATE)
  PRIVATE_IMAGE=$(shared_setting PRIVATE_IMAGE)
  PASSWORD_FILE=$base/registry/private/password
  [[ -s $CA && -s $PASSWORD_FILE && -n $MIRROR && -n $PRIVATE && -n $PRIVATE_IMAGE ]] ||
    die "$env lacks the registry settings (CA, MIRROR, PRIVATE, PRIVATE_IMAGE, password): run '$0 up' there"
  registry_answers "${MIRROR##*:}" 200 ||
    die "the mirror registry of $base does not answer on https://$MIRROR/v2/: run '$0 up' there"
  registry_answers "${PRIVATE##*:}" 401 ||
    die "the private registry of $base does not answer 401 on https://$PRIVATE/v2/: run '$0 up' there"
  log "using the registries of $base ($MIRROR, $PRIVATE)"
}

# ------------------------------------------------------------- containerd --

write_hosts_toml() {
  # Layout (containerd 1.6.20, remotes/docker/config/hosts.go; 2.x reads
  # the same files, through CRI's registry config_path): config_path
  # holds one directory per registry host name ("host:port" as-is) with a
  # hosts.toml. containerd 1.6.20 supports `override_path`: without it a
  # host URL's path gets "/v2" appended (".../docker.io/v2/..."), which
  # distribution cannot serve; with it the URL path is the API root as-is.
  # So each upstream U maps to the namespace U of the one mirror:
  #   docker.io/library/busybox:1.28 -> https://MIRROR/v2/docker.io/library/busybox/manifests/1.28
  # `server` (the fallback after [host] entries) is the mirror itself, so a
  # miss is a 404 and never a request to the real upstream (no internet
  # here). Top-level `ca`/`override_path` apply to `server`.
  # containerd 1.6.20 rejects a hosts.toml without a [host] table ("invalid
  # `host` tree") and then falls back to the real upstream, hence both.
  local d=$DIR/certs.d u
  # mirrored FILE NAMESPACE: a hosts.toml sending pulls to the mirror's
  # NAMESPACE.
  mirrored() {
    put "$1" <<EOF
# Served by the testbed mirror under its namespace $2/.
server = "https://$MIRROR/v2/$2"
ca = "$CA"
override_path = true

[host."https://$MIRROR/v2/$2"]
  capabilities = ["pull", "resolve"]
  ca = "$CA"
  override_path = true
EOF
  }
  # Each upstream U is served by the mirror under the namespace U/.
  for u in "${UPSTREAMS[@]}"; do
    mirrored "$d/$u/hosts.toml" "$u"
  done
  # Any other registry name also lands on the mirror (namespace
  # "unknown.invalid", always 404) instead of the internet.
  mirrored "$d/_default/hosts.toml" unknown.invalid
  # The registries by their own address: trust the CA. No credentials for
  # the private one: tests pull it through imagePullSecrets.
  for u in "$MIRROR" "$PRIVATE"; do
    put "$d/$u/hosts.toml" <<EOF
server = "https://$u"
ca = "$CA"

[host."https://$u"]
  capabilities = ["pull", "resolve", "push"]
  ca = "$CA"
EOF
  done
}

# write_cni_conf [CONFLIST NETWORK BRIDGE SUBNET IPAM_DIR]: the testbed's
# network, or (kubelet-up) another one with these names.
write_cni_conf() {
  # One bridge network. Loopback is not in the list: containerd's CRI
  # brings up "lo" itself with the loopback plugin from bin_dir. portmap
  # does nothing unless a pod asks for hostPorts. IPAM state stays under
  # $DIR (host-local's default is /var/lib/cni/networks).
  local conflist=${1:-$DIR/cni/net.d/10-podrun.conflist} network=${2:-podrun-testbed}
  local bridge=${3:-$BRIDGE} subnet=${4:-$POD_SUBNET} ipam=${5:-$DIR/cni/ipam}
  mkdir -p "$ipam"
  put "$conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "$network",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "$bridge",
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "ranges": [[{"subnet": "$subnet"}]],
        "routes": [{"dst": "0.0.0.0/0"}],
        "dataDir": "$ipam"
      }
    },
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
EOF
}

write_containerd_config() {
  case $FLAVOR in
  debian) write_containerd_config_debian ;;
  v2) write_containerd_config_v2 ;;
  esac
}

# containerd_endpoints_toml: the [grpc], [ttrpc] and [debug] tables, the
# same in both config versions: the sockets at $SOCK, no debug socket.
containerd_endpoints_toml() {
  cat <<EOF
[grpc]
  address = "$SOCK"

[ttrpc]
  address = "$SOCK.ttrpc"

[debug]
  address = ""
  level = "info"
EOF
}

write_containerd_config_debian() {
  # Based on `containerd config default` (1.6.20), every host path moved
  # under $DIR. Snapshotters that cannot work here are disabled so they do
  # not log errors (overlayfs on ext4 is the one used).
  put "$DIR/containerd.toml" <<EOF
# Written by hack/testbed.sh.
version = 2
root = "$DIR/root"
state = "$DIR/state"
oom_score = 0
disabled_plugins = [
  "io.containerd.snapshotter.v1.aufs",
  "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.devmapper",
  "io.containerd.snapshotter.v1.zfs",
]

$(containerd_endpoints_toml)

[plugins]
  [plugins."io.containerd.internal.v1.opt"]
    path = "$DIR/opt"

  [plugins."io.containerd.grpc.v1.cri"]
    sandbox_image = "$SANDBOX_IMAGE"
    # Without it every sandbox fails in runc: "failed to update
    # /proc/self/oom_score_adj" (this machine forbids lowering it).
    restrict_oom_score_adj = true
    # No AppArmor on these machines.
    disable_apparmor = true
    # Pod netns bind mounts under $DIR/state, not /var/run/netns.
    netns_mounts_under_state_dir = true
    stream_server_address = "127.0.0.1"
    stream_server_port = "0"
    enable_selinux = false

    [plugins."io.containerd.grpc.v1.cri".containerd]
      snapshotter = "overlayfs"
      default_runtime_name = "runc"

      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
        runtime_type = "io.containerd.runc.v2"

        [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
          # PODRUN_TESTBED_CGROUP_DRIVER (cgroupfs unless PID 1 is systemd).
          SystemdCgroup = $(systemd_cgroup)
          # runc state, otherwise /run/containerd/runc.
          Root = "$DIR/state/runc"

    [plugins."io.containerd.grpc.v1.cri".cni]
      bin_dir = "$CNI_BIN_DIR"
      conf_dir = "$DIR/cni/net.d"
      max_conf_num = 1

    [plugins."io.containerd.grpc.v1.cri".registry]
      config_path = "$DIR/certs.d"
EOF
}

# write_containerd_config_v2 [CONFIG [CNI_CONF_DIR]]: the testbed's
# containerd.toml, or (kubelet-up) another instance's, from $CTR_ROOT,
# $CTR_STATE, $SOCK and $SHIM_SOCKET_DIR (temp, CDI and image-verifier dirs
# next to $CTR_ROOT).
write_containerd_config_v2() {
  local config=${1:-$DIR/containerd.toml} cni_conf_dir=${2:-$DIR/cni/net.d} base
  base=$(dirname "$CTR_ROOT")
  # Based on `containerd config default` of the built binary, every host
  # path moved under $DIR. Config version 3 (what every 2.x reads; 2.4
  # migrates it to its version 4 in memory and logs a warning saying so):
  # the top-level [grpc]/[ttrpc] tables, and the CRI split into
  # io.containerd.cri.v1.runtime (containers, CNI) and
  # io.containerd.cri.v1.images (pulls, registry, sandbox image).
  ((${#SHIM_SOCKET_DIR} <= 42)) ||
    die "shim socket dir $SHIM_SOCKET_DIR is longer than containerd's 42-character limit; use a shorter PODRUN_TESTBED_DIR"
  put "$config" <<EOF
# Written by hack/testbed.sh for containerd $CONTAINERD_V2_VERSION.
version = 3
root = "$CTR_ROOT"
state = "$CTR_STATE"
# TMPDIR of containerd (temporary mounts while unpacking, ...).
temp = "$base/tmp"
# No drop-ins (the built-in default names /etc/containerd/conf.d/*.toml).
imports = []
oom_score = 0
disabled_plugins = [
  "io.containerd.snapshotter.v1.blockfile",
  "io.containerd.snapshotter.v1.devmapper",
  "io.containerd.snapshotter.v1.erofs",
  "io.containerd.snapshotter.v1.zfs",
]

$(containerd_endpoints_toml)

[plugins]
  [plugins.'io.containerd.internal.v1.opt']
    # Its bin/ goes first in containerd's PATH: our shim, not Debian's.
    path = "$V2_OPT"

  [plugins.'io.containerd.shim.v1.manager']
    # Default /run/containerd/s (hard-coded, not under state).
    socket_dir = "$SHIM_SOCKET_DIR"

  [plugins.'io.containerd.nri.v1.nri']
    # Would listen on /var/run/nri/nri.sock; nothing here uses NRI.
    disable = true

  [plugins.'io.containerd.image-verifier.v1.bindir']
    bin_dir = "$base/image-verifier/bin"

  [plugins.'io.containerd.transfer.v1.local']
    # CRI passes its own registry config_path; this is for other clients.
    config_path = "$DIR/certs.d"

  [plugins.'io.containerd.grpc.v1.cri']
    stream_server_address = "127.0.0.1"
    stream_server_port = "0"

  [plugins.'io.containerd.cri.v1.images']
    snapshotter = "overlayfs"

    [plugins.'io.containerd.cri.v1.images'.pinned_images]
      sandbox = "$SANDBOX_IMAGE"

    [plugins.'io.containerd.cri.v1.images'.registry]
      config_path = "$DIR/certs.d"

  [plugins.'io.containerd.cri.v1.runtime']
    # Without it every sandbox fails in runc: "failed to update
    # /proc/self/oom_score_adj" (this machine forbids lowering it).
    restrict_oom_score_adj = true
    # No AppArmor on these machines.
    disable_apparmor = true
    # Pod netns bind mounts under the state dir, not /var/run/netns.
    netns_mounts_under_state_dir = true
    enable_selinux = false
    # Default /etc/cdi and /var/run/cdi.
    cdi_spec_dirs = ["$base/cdi"]
    # These machines have cgroup v1, deprecated since 2.2: the warning
    # would show as a false ContainerdHasNoDeprecationWarnings condition in
    # CRI Status, which "cribare -ping" (any false condition) rejects.
    ignore_deprecation_warnings = ["io.containerd.deprecation/cgroup-v1"]

    [plugins.'io.containerd.cri.v1.runtime'.containerd]
      default_runtime_name = "runc"

      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
        runtime_type = "io.containerd.runc.v2"
        # Never a containerd-shim-runc-v2 found in PATH (Debian's is 1.6).
        runtime_path = "$SHIM"

        [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
          BinaryName = "$RUNC"
          # PODRUN_TESTBED_CGROUP_DRIVER (cgroupfs unless PID 1 is systemd).
          SystemdCgroup = $(systemd_cgroup)
          # runc state, otherwise /run/containerd/runc.
          Root = "$CTR_STATE/runc"

    [plugins.'io.containerd.cri.v1.runtime'.cni]
      bin_dirs = ["$CNI_BIN_DIR"]
      conf_dir = "$cni_conf_dir"
      max_conf_num = 1
      # Bring up the pod's lo without the loopback plugin (one libcni
      # result less in /var/lib/cni/results).
      use_internal_loopback = true
EOF
}

# sweep_leftovers [results]: what killed shims leave in the host paths
# (see Caveats), for our IDs only, whichever flavor ran them. A containerd
# 1.6 shim's socket is /run/containerd/s/sha256(SOCK/k8s.io/SANDBOX_ID)
# (CRI runs a pod's containers in its sandbox's shim); removed unless
# something listens on it (v2's are under $DIR/v2/s). With "results" (no
# pod alive), also libcni's cached results, named "<network>-<ID>-<ifname>".
sweep_leftovers() {
  local id sum listening r
  listening=$(ss -xlnH 2>/dev/null | awk '{print $5}')
  for id in $(for r in "$DIR" "$DIR/v2"; do
    ls "$r/state/io.containerd.runtime.v2.task/k8s.io" "$r/root/io.containerd.grpc.v1.cri/sandboxes"
  done 2>/dev/null | grep -E '^[0-9a-f]{64}$' | sort -u); do
    sum=$(printf '%s' "$SOCK/k8s.io/$id" | sha256sum | cut -d' ' -f1)
    if [[ -S /run/containerd/s/$sum ]] && ! grep -qxF "/run/containerd/s/$sum" <<<"$listening"; then
      rm -f "/run/containerd/s/$sum"
    fi
    if [[ ${1:-} == results ]]; then
      rm -f /var/lib/cni/results/podrun-testbed-"$id"-* /var/lib/cni/results/cni-loopback-"$id"-*
    fi
  done
}

# running_containerd: the binary `up` last started (recorded in
# run/containerd.exe; a testbed started before flavors existed ran Debian's).
running_containerd() {
  if [[ -s $DIR/run/containerd.exe ]]; then
    cat "$DIR/run/containerd.exe"
  else
    echo /usr/bin/containerd
  fi
}

# keep_running_flavor: when containerd already runs as another flavor (or
# another v2 pin), `up` keeps it if PODRUN_TESTBED_CONTAINERD is unset (so
# a testbed started before a default changed keeps working until `down`
# and `up`), and refuses if it names a flavor explicitly.
keep_running_flavor() {
  local running flavor want=$FLAVOR
  if [[ $FLAVOR == v2 ]]; then want="v2 $CONTAINERD_V2_VERSION"; fi
  running=$(running_containerd)
  [[ $running != "$CONTAINERD" ]] && alive "$DIR/run/containerd.pid" "$running" || return 0
  [[ -z ${PODRUN_TESTBED_CONTAINERD:-} ]] ||
    die "this testbed runs $running, not $CONTAINERD (PODRUN_TESTBED_CONTAINERD=$FLAVOR): run '$0 down' first"
  case $running in
  /usr/bin/containerd) flavor=debian ;;
  "$DIR"/opt/containerd-v2.*/bin/containerd)
    flavor=v2
    CONTAINERD_V2_VERSION=${running%/bin/containerd}
    CONTAINERD_V2_VERSION=${CONTAINERD_V2_VERSION##*/containerd-}
    ;;
  *) die "this testbed runs $running: run '$0 down' first" ;;
  esac
  log "keeping the running containerd ($flavor, $running); '$0 down && $0 up' switches to the default ($want)"
  set_flavor "$flavor"
}

start_containerd() {
  local fresh=
  # Remember whether the host had these dirs, so `down` removes only what
  # this testbed's containerd created (see Caveats at the top).
  if [[ $FLAVOR == debian ]]; then
    [[ -e /run/containerd || -e $DIR/run/created-run-containerd ]] || touch "$DIR/run/created-run-containerd"
  fi
  [[ -e /var/lib/cni || -e $DIR/run/created-var-lib-cni ]] || touch "$DIR/run/created-var-lib-cni"
  if ! alive "$DIR/run/containerd.pid" "$CONTAINERD"; then
    fresh=1
    sweep_leftovers
  fi
  echo "$CONTAINERD" >"$DIR/run/containerd.exe"
  start_daemon containerd "$CONTAINERD" "$DIR/containerd.toml" --config "$DIR/containerd.toml"
  wait_for containerd 30 cri_answers ||
    die "containerd's CRI does not answer on $ENDPOINT; see $DIR/log/containerd.log"
  # Sandboxes whose processes died with a killed testbed come back NOTREADY
  # after a restart; remove them, as a kubelet's GC would.
  if [[ -n $fresh ]]; then
    "$DIR/bin/cribare" -endpoint "$ENDPOINT" -cleanup -notready -timeout 60s ||
      log "warning: removing stale sandboxes failed"
  fi
}

write_env() {
  local name
  {
    echo "CONTAINER_RUNTIME_ENDPOINT=$ENDPOINT"
    echo "PODRUN_TESTBED_DIR=$DIR"
    echo "PODRUN_TESTBED_PRIVATE_PASSWORD=$(<"$PASSWORD_FILE")"
    echo "PODRUN_TESTBED_CNI_CONF_DIR=$DIR/cni/net.d"
    echo "PODRUN_TESTBED_CONTAINERD=$FLAVOR"
    echo "PODRUN_TESTBED_CGROUP_DRIVER=$CGROUP_DRIVER"
    # The other settings under their own names.
    for name in MIRROR PRIVATE PRIVATE_IMAGE PRIVATE_USER CA CNI_BIN_DIR SANDBOX_IMAGE POD_SUBNET BRIDGE RUNC; do
      echo "PODRUN_TESTBED_$name=${!name}"
    done
  } | put "$DIR/testbed.env"
}

# ---------------------------------------------------------------- kubelet --
# The oracle: a standalone kubelet $KUBELET_VERSION on a containerd of its
# own (see "kubelet-up" at the top). Everything of it lives under $KDIR.

# build_kubelet: cmd/kubelet of the k8s.io/kubernetes module from the Go
# module proxy, once per version, into $KUBELET_OPT/bin. `go install
# k8s.io/kubernetes/cmd/kubelet@V` refuses (the module's go.mod replaces
# every k8s.io/X with ./staging/src/k8s.io/X, which the module zip does not
# hold), so: copy the module, drop vendor/ and go.work*, replace each
# staging replace by a requirement on the published k8s.io/X of the same
# release (v0.<minor>.<patch>), and build with -mod=mod outside any
# workspace. The version ldflags are those of the upstream build
# (hack/lib/version.sh), so `kubelet --version` reports $KUBELET_VERSION.
#
# Static (CGO_ENABLED=0), like the control plane, where upstream's release
# build links the kubelet with cgo: in the kubelet only the standard
# library's net (the resolver) and os/user have cgo files, so its own code
# is the same either way, and the oracle resolves nothing but 127.0.0.1
# and looks up no user. Built with the control plane's settings, the
# kubelet reuses the packages the control plane's build left in Go's build
# cache (conformance-kubelet builds the control plane first): about 1
# minute instead of 7 on 2 cores (cgo changes the net package, and so
# every package above it). The stamp names the recipe, so a kubelet built
# with cgo before is built again.
KUBELET_BUILT="$KUBELET_VERSION static"
build_kubelet() {
  local t0=$SECONDS
  seed_opt "kubelet-$KUBELET_VERSION"
  if [[ -x $KUBELET && -f $KUBELET_OPT/bin/built && $(<"$KUBELET_OPT/bin/built") == "$KUBELET_BUILT" ]]; then
    return 0
  fi
  log "building kubelet $KUBELET_VERSION from the Go module proxy (about 7 minutes cold on 2 cores, 1 after the control plane's build)"
  mkdir -p "$KUBELET_OPT/bin"
  k8s_build "$KUBELET_OPT/src" 0 "$KUBELET" ./cmd/kubelet
  "$KUBELET" --version | grep -qxF "Kubernetes $KUBELET_VERSION" ||
    die "$KUBELET reports '$("$KUBELET" --version)', not Kubernetes $KUBELET_VERSION"
  echo "$KUBELET_BUILT" >"$KUBELET_OPT/bin/built"
  log "built kubelet $KUBELET_VERSION in $((SECONDS - t0))s"
}

# k8s_build SRC CGO OUT PACKAGE...: PACKAGEs of k8s.io/kubernetes
# $KUBELET_VERSION, built in SRC as build_kubelet says (the module from the
# proxy, its staging replaces turned into requirements on the published
# modules, upstream's version ldflags) with CGO_ENABLED=CGO, into OUT (a
# file, or a directory ending in / for several). The sources are removed
# after: the Go build cache makes a rebuild quick.
k8s_build() {
  local src=$1 cgo=$2 out=$3 mod staging m major minor k v kv ldflags=()
  shift 3
  command -v go >/dev/null || die "go is needed to build $* of k8s.io/kubernetes $KUBELET_VERSION"
  mod=$(cd / && GOFLAGS=-mod=mod go mod download -json "k8s.io/kubernetes@$KUBELET_VERSION" |
    sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p') ||
    die "go mod download k8s.io/kubernetes@$KUBELET_VERSION failed"
  [[ -f $mod/go.mod ]] || die "go mod download k8s.io/kubernetes@$KUBELET_VERSION gave no module directory"
  rm -rf "$src"
  cp -r "$mod" "$src" && chmod -R u+w "$src"
  rm -rf "$src/vendor" "$src"/go.work*
  # k8s.io/X v1.M.P's staging modules are published as k8s.io/X v0.M.P.
  staging=v0.${KUBELET_VERSION#v1.}
  for m in $(awk '$2 == "=>" && $3 ~ /^\.\/staging\// {print $1}' "$src/go.mod"); do
    (cd "$src" && go mod edit -dropreplace="$m" -require="$m@$staging") ||
      die "go mod edit of $m failed"
  done
  major=${KUBELET_VERSION#v}
  minor=${major#*.}
  minor=${minor%%.*}
  major=${major%%.*}
  for kv in "gitVersion=$KUBELET_VERSION" "gitMajor=$major" "gitMinor=$minor" \
    "gitTreeState=clean" "buildDate=$(date -u +%Y-%m-%dT%H:%M:%SZ)"; do
    k=${kv%%=*} v=${kv#*=}
    ldflags+=("-X k8s.io/component-base/version.$k=$v" "-X k8s.io/client-go/pkg/version.$k=$v")
  done
  (cd "$src" && GOWORK=off GOFLAGS=-buildvcs=false CGO_ENABLED=$cgo go build -mod=mod -trimpath \
    -ldflags "-s -w ${ldflags[*]}" -o "$out" "$@") ||
    die "go build of $* of k8s.io/kubernetes $KUBELET_VERSION failed (sources kept in $src)"
  rm -rf "$src"
}

# build_controlplane: kubeadm, kube-apiserver, kube-controller-manager and
# kube-scheduler of the same k8s.io/kubernetes release as the kubelet, in ONE
# go build (they share most packages), and etcd at the version that kubeadm
# release names (constants.DefaultEtcdVersion), into $CP_OPT/bin. Static
# (CGO_ENABLED=0) as upstream ships them, for images with no libc. Stamped
# by "built" files of their own, so the kubelet's cache stays valid; each is
# rebuilt only when its version changes.
build_controlplane() {
  local t0=$SECONDS c src
  seed_opt "controlplane-$KUBELET_VERSION"
  command -v go >/dev/null || die "go is needed to build the control plane $KUBELET_VERSION"
  if ! [[ -f $CP_OPT/bin/built && $(<"$CP_OPT/bin/built") == "$KUBELET_VERSION $ETCD_VERSION" ]]; then
    log "building kubeadm, kube-apiserver, kube-controller-manager, kube-scheduler $KUBELET_VERSION and etcd $ETCD_VERSION (about 15 minutes cold on 2 cores)"
    rm -rf "$CP_OPT/bin" && mkdir -p "$CP_OPT/bin"
    k8s_build "$CP_OPT/src" 0 "$CP_OPT/bin/" "${CP_COMMANDS[@]/#/./cmd/}"
    local version_args
    for c in "${CP_COMMANDS[@]}"; do
      version_args=(--version)
      [[ $c != kubeadm ]] || version_args=(version -o short)
      "$CP_OPT/bin/$c" "${version_args[@]}" 2>&1 | grep -qE "^(Kubernetes )?$KUBELET_VERSION\$" ||
        die "$CP_OPT/bin/$c reports '$("$CP_OPT/bin/$c" "${version_args[@]}" 2>&1)', not $KUBELET_VERSION"
    done
    # etcd: go.etcd.io/etcd/server/v3 is its main package; built from a
    # module of its own that requires it, so that server/v3's replace
    # directives (sibling directories) play no part.
    src=$CP_OPT/etcd-src
    rm -rf "$src" && mkdir -p "$src"
    printf 'module podrun.test/etcd\n\ngo 1.24\n' >"$src/go.mod"
    printf 'package etcd\n\nimport _ "go.etcd.io/etcd/server/v3/etcdmain"\n' >"$src/etcd.go"
    (cd "$src" && GOWORK=off GOFLAGS=-buildvcs=false go get "go.etcd.io/etcd/server/v3@v$ETCD_VERSION" &&
      GOWORK=off GOFLAGS=-buildvcs=false CGO_ENABLED=0 go build -mod=mod -trimpath -ldflags "-s -w" \
        -o "$CP_OPT/bin/etcd" go.etcd.io/etcd/server/v3) ||
      die "go build of etcd $ETCD_VERSION failed (sources kept in $src)"
    "$CP_OPT/bin/etcd" --version | grep -qF "etcd Version: $ETCD_VERSION" ||
      die "$CP_OPT/bin/etcd reports '$("$CP_OPT/bin/etcd" --version)', not $ETCD_VERSION"
    rm -rf "$src"
    echo "$KUBELET_VERSION $ETCD_VERSION" >"$CP_OPT/bin/built"
    log "built the control plane $KUBELET_VERSION and etcd $ETCD_VERSION in $((SECONDS - t0))s"
  fi
}

# cmd_controlplane_images: images of the control plane build_controlplane
# builds, under the names kubeadm $KUBELET_VERSION's manifests use
# (registry.k8s.io/kube-apiserver:$KUBELET_VERSION, ..., etcd:$ETCD_IMAGE_TAG),
# pushed to the mirror. Each is one layer with the binary in /usr/local/bin
# (where upstream's images have it; kubeadm's manifests run it by name
# through PATH) and the few files a distroless base gives (/etc/passwd,
# /etc/group, /tmp). Not part of `up`: only the control-plane test needs
# them, and the build takes minutes; a stamp of the binaries and this
# script skips the push when the mirror holds the images already.
cmd_controlplane_images() (
  local out=$DIR/images-controlplane stamp=$DIR/images-controlplane.stamp sum c r tag repo
  [[ $(id -u) == 0 ]] || die "must run as root"
  [[ -z $SHARED_REGISTRIES ]] || use_shared_registries
  registry_answers "${MIRROR##*:}" 200 || die "the testbed's mirror registry does not answer: run '$0 up' first"
  build_controlplane
  sum=$( {
    sha256sum "$CP_OPT"/bin/* "$REPO/hack/mkimage/main.go" "${BASH_SOURCE[0]}"
    echo "$MIRROR"
  } | sha256sum | cut -d' ' -f1)
  if pushed "$stamp" "$sum" "registry.k8s.io/kube-apiserver:$KUBELET_VERSION"; then
    return 0
  fi
  log "building and pushing the control-plane images ($KUBELET_VERSION, etcd $ETCD_IMAGE_TAG) to the mirror ($MIRROR)"
  rm -rf "$out" && mkdir -p "$out"
  for c in "${CP_COMMANDS[@]:1}" etcd; do
    r=$out/rootfs-$c
    mkdir -p "$r/usr/local/bin" "$r/etc" "$r/tmp" "$r/var/run"
    chmod 1777 "$r/tmp"
    printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' >"$r/etc/passwd"
    printf 'root:x:0:\nnonroot:x:65532:\n' >"$r/etc/group"
    cp "$CP_OPT/bin/$c" "$r/usr/local/bin/$c"
    tag=$KUBELET_VERSION
    [[ $c != etcd ]] || tag=$ETCD_IMAGE_TAG
    "$DIR/bin/mkimage" -out "$out/$c" -layer "$r" \
      -env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin -cmd "[\"$c\"]" ||
      die "mkimage of $c failed"
    skopeo copy --quiet --retry-times 3 --dest-cert-dir "$DIR/tls/skopeo" \
      "oci:$out/$c" "docker://$MIRROR/registry.k8s.io/$c:$tag" ||
      die "skopeo copy of registry.k8s.io/$c:$tag to the mirror failed"
  done
  rm -rf "$out"
  echo "$sum" >"$stamp"
)

# kubelet_containerd: switch this (sub)shell's containerd settings to the
# kubelet's own instance: the pinned v2 binaries, everything else under
# $KDIR. Only ever called inside the kubelet commands' subshells.
kubelet_containerd() {
  set_flavor v2
  CTR_ROOT=$KDIR/containerd/root
  CTR_STATE=$KDIR/containerd/state
  SHIM_SOCKET_DIR=$KDIR/s
  SOCK=$KDIR/run/containerd.sock
  ENDPOINT=unix://$SOCK
}

# cgroup_mounts TYPE: mount points of every cgroup filesystem of TYPE
# (cgroup for the v1 hierarchies, cgroup2 for the unified one).
cgroup_mounts() {
  awk -v t="$1" '{ for (i = 7; i <= NF; i++) if ($i == "-") { if ($(i + 1) == t) print $5; break } }' /proc/self/mountinfo
}

# kubelet_sysctl_path NAME: /proc/sys path of a dotted sysctl name.
kubelet_sysctl_path() { echo "/proc/sys/${1//.//}"; }

# kubelet_save_sysctls: the host's values of the sysctls the kubelet
# rewrites, unless a file from an earlier kubelet-up without kubelet-down
# holds them already (then those are the host's, not the kubelet's).
kubelet_save_sysctls() {
  local f=$KDIR/sysctl.saved k
  [[ -s $f ]] && return 0
  for k in "${KUBELET_SYSCTLS[@]}"; do
    printf '%s=%s\n' "$k" "$(<"$(kubelet_sysctl_path "$k")")"
  done >"$f.tmp"
  mv -f "$f.tmp" "$f"
}

kubelet_restore_sysctls() {
  local f=$KDIR/sysctl.saved line k v
  [[ -s $f ]] || return 0
  while IFS= read -r line; do
    k=${line%%=*} v=${line#*=}
    [[ $(<"$(kubelet_sysctl_path "$k")") == "$v" ]] && continue
    log "restoring sysctl $k=$v (the kubelet set $(<"$(kubelet_sysctl_path "$k")"))"
    echo "$v" >"$(kubelet_sysctl_path "$k")" || log "warning: cannot restore sysctl $k=$v"
  done <"$f"
  rm -f "$f"
}

kubelet_answers() {
  [[ $(curl -s --max-time 2 "http://127.0.0.1:$KUBELET_HEALTHZ_PORT/healthz") == ok ]] &&
    curl -sf --max-time 2 -o /dev/null "http://127.0.0.1:$KUBELET_READONLY_PORT/pods"
}

write_kubelet_config() {
  # Standalone: no kubeconfig, static pods only (with
  # PODRUN_TESTBED_KUBELET_KUBECONFIG: a node of that cluster; the settings
  # below stay, kubeadm's differ as docs/bootstrap.md says). Every path it would put
  # on the host is moved under $KDIR (see "kubelet-up" at the top).
  # The cgroup root: kubeadm sets none (kubepods at the top, kubepods.slice
  # with the systemd driver); the host's oracle has one of its own.
  local root="cgroupRoot: $KUBELET_CGROUP_ROOT"
  [[ $KUBELET_CGROUP_ROOT != / ]] || root="# cgroupRoot: none, as kubeadm (kubepods at the top)"
  put "$KDIR/kubelet.yaml" <<EOF
# Written by hack/testbed.sh for kubelet $KUBELET_VERSION ($KUBELET), started with
#   ${KUBELET_ARGS[*]}
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
containerRuntimeEndpoint: $ENDPOINT
staticPodPath: $KUBELET_STATIC_POD_PATH
# Container logs, otherwise /var/log/pods.
podLogsDir: $KDIR/logs/pods
# The authenticated port (self-signed certificate in --cert-dir), the
# read-only one (GET /pods: a v1.PodList with full status) and healthz,
# all on loopback only.
address: 127.0.0.1
port: $KUBELET_PORT
readOnlyPort: $KUBELET_READONLY_PORT
healthzBindAddress: 127.0.0.1
healthzPort: $KUBELET_HEALTHZ_PORT
authentication:
  anonymous:
    enabled: true
  webhook:
    enabled: false
authorization:
  mode: AlwaysAllow
# PODRUN_TESTBED_CGROUP_DRIVER, as containerd's SystemdCgroup (kubeadm:
# systemd); cgroup v1 is deprecated, not refused, with failCgroupV1 false.
cgroupDriver: $CGROUP_DRIVER
failCgroupV1: false
# Created beforehand in every v1 hierarchy (the kubelet refuses to start
# otherwise); kubepods and the QoS cgroups go below it.
$root
# Not the KUBE-IPTABLES-HINT/KUBE-FIREWALL chains and their jumps from
# INPUT and OUTPUT: pods' networking is CNI's, and the host firewall stays
# as it was.
makeIPTablesUtilChains: false
# false (the default): the kubelet rewrites the sysctls in
# KUBELET_SYSCTLS; kubelet-up saves them and kubelet-down restores them.
protectKernelDefaults: false
EOF
}

cmd_kubelet_up() (
  local t0=$SECONDS fresh=
  [[ $(id -u) == 0 ]] || die "must run as root (kubelet, containerd)"
  [[ -z $SHARED_REGISTRIES ]] || use_shared_registries
  [[ -x $DIR/bin/cribare && -d $DIR/certs.d ]] && registry_answers "${MIRROR##*:}" 200 ||
    die "the testbed is not up (its mirror registry pulls the kubelet's images): run '$0 up' first"
  kubelet_containerd
  build_containerd_v2
  build_runc
  build_kubelet
  mkdir -p "$KDIR"/{run,manifests,logs/pods,root,volume-plugins,containerd/tmp,containerd/cdi} "$CTR_ROOT" "$CTR_STATE"

  write_cni_conf "$KDIR/cni/net.d/10-podrun-kubelet.conflist" podrun-testbed-kubelet \
    "$KUBELET_BRIDGE" "$KUBELET_POD_SUBNET" "$KDIR/cni/ipam"
  write_containerd_config_v2 "$KDIR/containerd.toml" "$KDIR/cni/net.d"
  alive "$DIR/run/kubelet-containerd.pid" "$CONTAINERD" || fresh=1
  echo "$CONTAINERD" >"$KDIR/containerd.exe"
  start_daemon kubelet-containerd "$CONTAINERD" "$KDIR/containerd.toml" --config "$KDIR/containerd.toml"
  wait_for "kubelet's containerd" 30 cri_answers ||
    die "the kubelet's containerd does not answer on $ENDPOINT; see $DIR/log/kubelet-containerd.log"
  if [[ -n $fresh ]]; then
    "$DIR/bin/cribare" -endpoint "$ENDPOINT" -cleanup -notready -timeout 60s ||
      log "warning: removing stale sandboxes of the kubelet's containerd failed"
  fi

  # Host state the kubelet changes, recorded before it first starts.
  # In every v1 hierarchy (on a host with cgroup v2 only: the unified one;
  # not tried here, these machines have v1).
  local m mounts
  check_cgroup_driver
  [[ $CGROUP_DRIVER == cgroupfs || $KUBELET_CGROUP_ROOT == / ]] ||
    die "the kubelet's systemd driver goes with PODRUN_TESTBED_KUBELET_CGROUP_ROOT=/ here (kubeadm's: kubepods.slice), not $KUBELET_CGROUP_ROOT"
  mounts=$(cgroup_mounts cgroup)
  [[ -n $mounts ]] || mounts=$(cgroup_mounts cgroup2)
  for m in $mounts; do
    [[ $KUBELET_CGROUP_ROOT == / ]] || mkdir -p "$m$KUBELET_CGROUP_ROOT"
  done
  kubelet_save_sysctls
  if ! alive "$DIR/run/kubelet.pid" "$KUBELET" && [[ -S $KUBELET_DEVICE_SOCKET ]] &&
    ss -xlnH 2>/dev/null | awk '{print $5}' | grep -qxF "$KUBELET_DEVICE_SOCKET"; then
    die "another kubelet listens on $KUBELET_DEVICE_SOCKET (a path no setting moves): not starting a second one"
  fi
  # Manifests the oracle (e2e/kubeletoracle) placed for a run that was cut
  # off (a killed test) would start again as pods of the same names, which
  # the next oracle run finds "there already": a kubelet starting anew
  # starts without them. Other static pods (the hand-over test's) stay.
  if ! alive "$DIR/run/kubelet.pid" "$KUBELET"; then
    for m in "$KDIR"/manifests/oracle-* "$KDIR"/manifests/.oracle-*; do
      [[ -e $m ]] || continue
      log "removing $m, left by an oracle run that was cut off"
      rm -f "$m"
    done
  fi
  for m in "${KUBELET_HOST_DIRS[@]}"; do
    [[ -e $m ]] || grep -qxF "$m" "$KDIR/created-host-dirs" 2>/dev/null || echo "$m" >>"$KDIR/created-host-dirs"
  done

  KUBELET_ARGS=(
    --config="$KDIR/kubelet.yaml"
    --root-dir="$KDIR/root"
    --cert-dir="$KDIR/root/pki"
    --volume-plugin-dir="$KDIR/volume-plugins"
    --hostname-override="$KUBELET_NODE_NAME"
    --v="$KUBELET_VERBOSITY"
  )
  if [[ -n $KUBELET_KUBECONFIG ]]; then
    [[ -s $KUBELET_KUBECONFIG ]] || die "PODRUN_TESTBED_KUBELET_KUBECONFIG: no kubeconfig at $KUBELET_KUBECONFIG"
    KUBELET_ARGS+=(--kubeconfig="$KUBELET_KUBECONFIG")
  fi
  [[ -d $KUBELET_STATIC_POD_PATH ]] || die "PODRUN_TESTBED_KUBELET_STATIC_POD_PATH: $KUBELET_STATIC_POD_PATH is not a directory"
  write_kubelet_config
  echo "$KUBELET" >"$KDIR/kubelet.exe"
  echo "$CGROUP_DRIVER" >"$KDIR/cgroup-driver"
  start_daemon kubelet "$KUBELET" "$KDIR/kubelet.yaml" "${KUBELET_ARGS[@]}"
  wait_for kubelet 60 kubelet_answers ||
    die "kubelet $KUBELET_VERSION does not answer on 127.0.0.1:$KUBELET_HEALTHZ_PORT/healthz and :$KUBELET_READONLY_PORT/pods; see $DIR/log/kubelet.log"
  put "$KDIR/kubelet.env" <<EOF
PODRUN_TESTBED_KUBELET_VERSION=$KUBELET_VERSION
PODRUN_TESTBED_KUBELET_BIN=$KUBELET
PODRUN_TESTBED_KUBELET_ENDPOINT=$ENDPOINT
PODRUN_TESTBED_KUBELET_STATIC_POD_DIR=$KUBELET_STATIC_POD_PATH
PODRUN_TESTBED_KUBELET_PODS_URL=http://127.0.0.1:$KUBELET_READONLY_PORT/pods
PODRUN_TESTBED_KUBELET_HEALTHZ_URL=http://127.0.0.1:$KUBELET_HEALTHZ_PORT/healthz
PODRUN_TESTBED_KUBELET_ROOT_DIR=$KDIR/root
PODRUN_TESTBED_KUBELET_POD_LOGS_DIR=$KDIR/logs/pods
PODRUN_TESTBED_KUBELET_NODE_NAME=$KUBELET_NODE_NAME
PODRUN_TESTBED_KUBELET_CGROUP_ROOT=$KUBELET_CGROUP_ROOT
PODRUN_TESTBED_KUBELET_CGROUP_DRIVER=$CGROUP_DRIVER
PODRUN_TESTBED_KUBELET_POD_SUBNET=$KUBELET_POD_SUBNET
PODRUN_TESTBED_KUBELET_LOG=$DIR/log/kubelet.log
EOF
  log "kubelet $KUBELET_VERSION up in $((SECONDS - t0))s; settings: $0 env"
)

# kubelet-stop: the kubelet alone, its containerd and every pod on it left
# running (the hand-over test runs podrun's pods there first, then starts
# the kubelet again with kubelet-up).
cmd_kubelet_stop() (
  local exe
  [[ $(id -u) == 0 ]] || die "must run as root"
  [[ -d $KDIR ]] || return 0
  kubelet_containerd
  exe=$(cat "$KDIR/kubelet.exe" 2>/dev/null) || exe=$KUBELET
  stop_pid "$DIR/run/kubelet.pid" "$exe" kubelet
)

cmd_kubelet_down() (
  local exe m id
  [[ $(id -u) == 0 ]] || die "must run as root"
  [[ -d $KDIR ]] || return 0
  kubelet_containerd
  # The binaries kubelet-up started, whatever the version settings say now.
  exe=$(cat "$KDIR/kubelet.exe" 2>/dev/null) || exe=$KUBELET
  # The kubelet first: it would restart the pods removed below. It leaves
  # them running when it stops.
  stop_pid "$DIR/run/kubelet.pid" "$exe" kubelet
  exe=$(cat "$KDIR/containerd.exe" 2>/dev/null) || exe=$CONTAINERD
  if alive "$DIR/run/kubelet-containerd.pid" "$exe"; then
    "$DIR/bin/cribare" -endpoint "$ENDPOINT" -cleanup -timeout 60s ||
      log "warning: removing the kubelet's pods through CRI failed; killing what is left"
  fi
  stop_pid "$DIR/run/kubelet-containerd.pid" "$exe" kubelet-containerd
  kill_shims
  # Pod rootfs and netns mounts, the pods' volumes, and the kubelet's own
  # rshared bind mount of its root dir.
  unmount_under "$KDIR"
  rm -rf "$KDIR/cni/ipam"
  delete_bridge "$KDIR/cni/net.d/10-podrun-kubelet.conflist" "$KUBELET_BRIDGE"
  for id in $(ls "$CTR_STATE/io.containerd.runtime.v2.task/k8s.io" \
    "$CTR_ROOT/io.containerd.grpc.v1.cri/sandboxes" 2>/dev/null | grep -E '^[0-9a-f]{64}$' | sort -u); do
    rm -f /var/lib/cni/results/podrun-testbed-kubelet-"$id"-*
  done
  # kubepods and the QoS and pod cgroups below the cgroup root, deepest
  # first; the root too unless it is the top (kubeadm's "/"), where only
  # kubepods is the kubelet's. With the systemd driver they are slices:
  # systemd removes them when they stop.
  local under=$KUBELET_CGROUP_ROOT
  [[ $under != / ]] || under=/kubepods
  if [[ $(cat "$KDIR/cgroup-driver" 2>/dev/null) == systemd ]]; then
    [[ $under != /kubepods ]] || under=/kubepods.slice
    systemctl stop "${under#/}" 2>/dev/null || true
  fi
  for m in $(cgroup_mounts cgroup) $(cgroup_mounts cgroup2); do
    [[ -d $m$under ]] || continue
    find "$m$under" -depth -type d -exec rmdir {} + 2>/dev/null ||
      log "warning: cannot remove every cgroup under $m$under"
  done
  rm -f "$KDIR/cgroup-driver"
  kubelet_restore_sysctls
  # What it puts in host paths no setting moves: the legacy log symlinks
  # /var/log/containers/<pod>_<ns>_<container>-<id>.log into our logs, and
  # its device plugin registration socket.
  for m in /var/log/containers/*.log; do
    if [[ -L $m && $(readlink "$m") == "$KDIR/"* ]]; then rm -f "$m"; fi
  done
  if ! ss -xlnH 2>/dev/null | awk '{print $5}' | grep -qxF "$KUBELET_DEVICE_SOCKET"; then
    rm -f "$KUBELET_DEVICE_SOCKET"
  fi
  # The directories among them that kubelet-up found missing, if empty
  # now, deepest first.
  if [[ -s $KDIR/created-host-dirs ]]; then
    for m in $(sort -r "$KDIR/created-host-dirs"); do
      rmdir "$m" 2>/dev/null || [[ ! -e $m ]] || log "warning: $m is not empty; left in place"
    done
    rm -f "$KDIR/created-host-dirs"
  fi
  # A next kubelet-up starts clean: no static pods, no pod dirs or logs.
  # Images stay in the kubelet's containerd.
  rm -rf "$KDIR/manifests" "$KDIR/root" "$KDIR/logs" "$KDIR/kubelet.env"
  log "kubelet down"
)

# ----------------------------------------------------------------- podman --

# cmd_podman: Debian's podman beside the testbed, for hack/bench's
# comparison (optional: nothing else needs it). Installs the package if
# missing and writes a private configuration under $DIR/podman: images
# from this testbed's mirror (every upstream mapped to its namespace, as
# hosts.toml does for containerd; no fallback to the real registry) with
# its CA; storage, state and CNI config under $DIR/podman; its networks
# (the default one and kube play's) in 10.86.0.0/16 (podman's defaults,
# 10.88.0.0/16 and then 10.89.0.0/16 up, would meet the testbeds'); the
# open files and processes limits of this shell, as containerd's
# containers inherit them (podman raises both to its maximum, which runc
# fails to set here: no NPROC above 32768, so capped there); the
# testbed's pause image as the pods' infra image. The host's
# /etc/containers is left alone (the package itself adds
# /etc/cni/net.d/87-podman-bridge.conflist, which nothing here reads:
# containerd's CNI dir and podman's are under the testbeds'
# directories). $DIR/podman/env holds the
# variables that point podman at it, and --cert-dir takes
# $DIR/podman/certs. busybox and the pause image are pulled into its
# storage once, so that runs with imagePullPolicy IfNotPresent never pull.
cmd_podman() {
  local d=$DIR/podman u img nofile nproc
  [[ $(id -u) == 0 ]] || die "must run as root"
  [[ -s $DIR/testbed.env ]] || die "no $DIR/testbed.env: run '$0 up' first"
  [[ -z $SHARED_REGISTRIES ]] || use_shared_registries
  PACKAGES=(podman:/usr/bin/podman)
  install_packages
  mkdir -p "$d"/{storage,run,tmp,cni,certs}
  put "$d/certs/ca.crt" <"$CA"
  nofile=$(ulimit -Hn) nproc=$(ulimit -Hu)
  [[ $nofile != unlimited ]] || nofile=1048576
  [[ $nproc != unlimited ]] && ((nproc <= 32768)) || nproc=32768
  put "$d/containers.conf" <<EOF
# Written by hack/testbed.sh: podman beside the testbed (hack/bench).
[containers]
default_ulimits = ["nofile=$nofile:$nofile", "nproc=$nproc:$nproc"]

[engine]
cgroup_manager = "cgroupfs"
events_logger = "file"
events_logfile_path = "$d/events.log"
tmp_dir = "$d/tmp"
infra_image = "$SANDBOX_IMAGE"

[network]
network_backend = "cni"
cni_plugin_dirs = ["$CNI_BIN_DIR"]
network_config_dir = "$d/cni"
default_subnet = "10.86.0.0/24"
default_subnet_pools = [{"base" = "10.86.0.0/16", "size" = 24}]
EOF
  {
    echo "# Written by hack/testbed.sh: every upstream is the testbed mirror's namespace."
    echo 'unqualified-search-registries = ["docker.io"]'
    echo 'short-name-mode = "permissive"'
    for u in "${UPSTREAMS[@]}"; do
      printf '\n[[registry]]\nprefix = "%s"\nlocation = "%s/%s"\n' "$u" "$MIRROR" "$u"
    done
  } | put "$d/registries.conf"
  put "$d/storage.conf" <<EOF
# Written by hack/testbed.sh.
[storage]
driver = "overlay"
graphroot = "$d/storage"
runroot = "$d/run"
EOF
  put "$d/env" <<EOF
CONTAINERS_CONF=$d/containers.conf
CONTAINERS_REGISTRIES_CONF=$d/registries.conf
CONTAINERS_STORAGE_CONF=$d/storage.conf
EOF
  for img in docker.io/library/busybox:latest "$SANDBOX_IMAGE"; do
    env $(<"$d/env") podman image exists "$img" 2>/dev/null && continue
    log "podman: pulling $img from the mirror"
    env $(<"$d/env") podman pull -q --cert-dir "$d/certs" "$img" >/dev/null ||
      die "podman pull $img failed"
  done
  log "podman $(podman --version | awk '{print $NF}') configured in $d (variables: $d/env)"
}

# ----------------------------------------------------------- slow registry --
#
# slow-registry up [shared|per-connection]|down|env: a registry behind a
# link that behaves like a remote one, for hack/bench's cold-start table
# (issue 18). A network namespace of its own ($SLOW_NS) joined to the host
# by a veth pair with the /30 $SLOW_HOST_ADDR/$SLOW_NS_ADDR (no other
# route, no forwarding: traffic goes only to that address). Two link
# models:
#   shared          tc's tbf limits each end of the pair to $SLOW_RATE,
#                   shared by all connections (a slow line to the machine);
#   per-connection  hack/slowlink limits each relayed connection to
#                   $SLOW_CONN_RATE each way (a token bucket per connection
#                   and direction: a remote registry as CI machines meet
#                   one, each connection held back by its round trips or a
#                   CDN's shaping, the machine's own NIC much faster), and
#                   tbf limits the pair to $SLOW_FAST_RATE.
# up switches a running link to the model it is given. The kernels here
# have no netem qdisc (CONFIG_NET_SCH_NETEM is not set), so the delay
# ($SLOW_DELAY each way, both models) comes from hack/slowlink,
# a TCP relay in the namespace on $SLOW_NS_ADDR:$SLOW_PORT in front of
# Debian's docker-registry (TLS, a certificate for that IP signed by the
# testbed's CA, on the namespace's own 127.0.0.1:5000). It serves three
# images built with hack/mkimage: busybox's base layer and two layers of
# $SLOW_LAYER_MB MB of incompressible data each, generated from a fixed key
# (openssl aes-256-ctr over zeros), so their digests never change. They
# are built and pushed once ($DIR/slow-registry keeps them, and `down`
# leaves that cache). Runtimes reach them by the IP: up writes a
# hosts.toml for $SLOW_NS_ADDR:$SLOW_PORT (the CA) into the certs.d of this
# testbed (also the kubelet's containerd's) and of its flavor instances;
# podman gets the CA with --cert-dir. down removes the relay, the
# registry, the namespace (the veth pair and its qdiscs with it) and those
# hosts.toml files.
SLOW_NS=podrun-slow
SLOW_HOST_IF=podrun-slow0
SLOW_NS_IF=podrun-slow1
SLOW_HOST_ADDR=10.254.53.1
SLOW_NS_ADDR=10.254.53.2
SLOW_PORT=5443
SLOW_DELAY=${PODRUN_TESTBED_SLOW_DELAY:-20ms}
SLOW_RATE=${PODRUN_TESTBED_SLOW_RATE:-100mbit}
SLOW_CONN_RATE=${PODRUN_TESTBED_SLOW_CONN_RATE:-8MB}
SLOW_FAST_RATE=1gbit
SLOW_MODELS=(shared per-connection)
SLOW_LAYER_MB=12
SLOW_IMAGES=(init sidecar main)
SLOW_DIR=$DIR/slow-registry
SLOW_REGISTRY=$SLOW_NS_ADDR:$SLOW_PORT

# slow_certs_dirs: the certs.d of this testbed and of its flavor instances.
slow_certs_dirs() {
  local d
  for d in "$DIR" "$DIR-debian" "$DIR-scratch"; do
    [[ -d $d/certs.d ]] && echo "$d/certs.d"
  done
}

slow_answers() {
  [[ $(curl -s -o /dev/null -w '%{http_code}' --max-time 5 --cacert "$CA" "https://$SLOW_REGISTRY/v2/") == 200 ]]
}

# slow_images: the three images' OCI layouts in $SLOW_DIR/images, built
# once per input (mkimage, the base rootfs, this script's sizes).
slow_images() {
  local out=$SLOW_DIR/images sum name i
  sum=$( {
    sha256sum "$REPO/hack/mkimage/main.go" /bin/busybox
    echo "${SLOW_IMAGES[*]} $SLOW_LAYER_MB"
  } | sha256sum | cut -d' ' -f1)
  [[ -f $out/stamp && $(<"$out/stamp") == "$sum" ]] && return 0
  [[ -d $DIR/images/rootfs-base ]] || die "no $DIR/images/rootfs-base: run '$0 up' first"
  log "slow registry: building ${SLOW_IMAGES[*]} (busybox + 2 x $SLOW_LAYER_MB MB each)"
  rm -rf "$out" && mkdir -p "$out"
  for name in "${SLOW_IMAGES[@]}"; do
    for i in 1 2; do
      mkdir -p "$out/rootfs-$name-$i/data"
      head -c $((SLOW_LAYER_MB << 20)) /dev/zero |
        openssl enc -aes-256-ctr -nosalt -pbkdf2 -pass "pass:podrun-bench-$name-$i" \
          >"$out/rootfs-$name-$i/data/$name-$i.bin" ||
        die "generating the slow registry's $name layer $i failed"
    done
    "$DIR/bin/mkimage" -out "$out/$name" -layer "$DIR/images/rootfs-base" \
      -layer "$out/rootfs-$name-1" -layer "$out/rootfs-$name-2" \
      -env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin -cmd '["sh"]' ||
      die "mkimage of the slow registry's $name image failed"
    rm -rf "$out/rootfs-$name-1" "$out/rootfs-$name-2"
  done
  echo "$sum" >"$out/stamp"
}

cmd_slow_registry_up() {
  local model=${1:-shared} reg=/usr/bin/docker-registry relay=$DIR/bin/slowlink d name sum
  local tbf_rate tbf_burst conn_rate
  case $model in
  shared) tbf_rate=$SLOW_RATE tbf_burst=64kb conn_rate=0 ;;
  # tbf's bucket must hold a timer tick's worth at 1 Gbit/s.
  per-connection) tbf_rate=$SLOW_FAST_RATE tbf_burst=1mb conn_rate=$SLOW_CONN_RATE ;;
  *) die "slow-registry up: link model '$model': want one of ${SLOW_MODELS[*]}" ;;
  esac
  [[ $(id -u) == 0 ]] || die "must run as root"
  [[ -s $DIR/testbed.env && -s $DIR/tls/ca.key ]] || die "no testbed in $DIR: run '$0 up' first"
  mkdir -p "$SLOW_DIR"/{data,tls}
  sum=$(cat "$REPO/hack/slowlink"/*.go "$REPO/go.mod" | sha256sum | cut -d' ' -f1)
  if ! [[ -x $relay && -f $relay.sha256 && $(<"$relay.sha256") == "$sum" ]]; then
    log "building hack/slowlink"
    (cd "$REPO" && CGO_ENABLED=0 go build -o "$relay" ./hack/slowlink) || die "go build ./hack/slowlink failed"
    echo "$sum" >"$relay.sha256"
  fi
  d=$SLOW_DIR/tls
  if ! [[ -s $d/server.crt ]] || ! openssl x509 -checkend 86400 -noout -in "$d/server.crt" >/dev/null; then
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
      -subj "/CN=$SLOW_NS_ADDR" -keyout "$d/server.key" -out "$d/server.csr" 2>/dev/null
    printf '%s\n' "subjectAltName=IP:$SLOW_NS_ADDR,IP:127.0.0.1" \
      "basicConstraints=CA:FALSE" "extendedKeyUsage=serverAuth" >"$d/server.ext"
    openssl x509 -req -in "$d/server.csr" -CA "$DIR/tls/ca.crt" -CAkey "$DIR/tls/ca.key" -CAcreateserial \
      -days 3650 -extfile "$d/server.ext" -out "$d/server.crt" 2>/dev/null || die "signing the slow registry's certificate failed"
  fi
  registry_config "slow-registry: the bench's remote-like registry" "$SLOW_DIR/data" 127.0.0.1:5000 "$d" |
    put "$SLOW_DIR/config.yml"
  # The namespace, its link and the rate limit.
  if ! ip netns list | grep -qw "$SLOW_NS"; then
    log "slow registry: namespace $SLOW_NS, $SLOW_HOST_IF $SLOW_HOST_ADDR <-> $SLOW_NS_ADDR"
    ip netns add "$SLOW_NS"
    ip link add "$SLOW_HOST_IF" type veth peer name "$SLOW_NS_IF" netns "$SLOW_NS" ||
      { ip netns del "$SLOW_NS"; die "making the veth pair failed"; }
    ip addr add "$SLOW_HOST_ADDR/30" dev "$SLOW_HOST_IF"
    ip link set "$SLOW_HOST_IF" up
    ip -n "$SLOW_NS" addr add "$SLOW_NS_ADDR/30" dev "$SLOW_NS_IF"
    ip -n "$SLOW_NS" link set "$SLOW_NS_IF" up
    ip -n "$SLOW_NS" link set lo up
  fi
  # tbf: the link's rate, at most 100 ms queued.
  log "slow registry: $model link: $(slow_link_words "$model")"
  tc qdisc replace dev "$SLOW_HOST_IF" root tbf rate "$tbf_rate" burst "$tbf_burst" latency 100ms ||
    die "tc tbf on $SLOW_HOST_IF failed"
  ip netns exec "$SLOW_NS" tc qdisc replace dev "$SLOW_NS_IF" root tbf rate "$tbf_rate" burst "$tbf_burst" latency 100ms ||
    die "tc tbf on $SLOW_NS_IF failed"
  # The registry and the relay, in the namespace.
  start_slow_daemon slow-registry "$reg" "$SLOW_DIR/config.yml" serve "$SLOW_DIR/config.yml"
  echo "$SLOW_DELAY $conn_rate $SLOW_REGISTRY" | put "$SLOW_DIR/slowlink.args"
  start_slow_daemon slowlink "$relay" "$SLOW_DIR/slowlink.args" -listen "$SLOW_REGISTRY" -to 127.0.0.1:5000 \
    -delay "$SLOW_DELAY" -rate "$conn_rate"
  echo "$model" | put "$SLOW_DIR/link"
  for d in $(slow_certs_dirs); do
    printf '%s\n' "# Written by hack/testbed.sh slow-registry (hack/bench's cold-start table)." \
      "server = \"https://$SLOW_REGISTRY\"" "ca = \"$CA\"" "" \
      "[host.\"https://$SLOW_REGISTRY\"]" '  capabilities = ["pull", "resolve"]' "  ca = \"$CA\"" |
      put "$d/$SLOW_REGISTRY/hosts.toml"
  done
  wait_for "slow registry" 15 slow_answers ||
    die "the slow registry does not answer on https://$SLOW_REGISTRY/v2/; see $DIR/log/slow-registry.log and $DIR/log/slowlink.log"
  slow_images
  sum=$(<"$SLOW_DIR/images/stamp")
  if ! [[ -f $SLOW_DIR/pushed && $(<"$SLOW_DIR/pushed") == "$sum" ]]; then
    log "slow registry: pushing ${SLOW_IMAGES[*]} (inside the namespace, not through the slow link)"
    for name in "${SLOW_IMAGES[@]}"; do
      ip netns exec "$SLOW_NS" skopeo copy --quiet --retry-times 3 --dest-cert-dir "$DIR/tls/skopeo" \
        "oci:$SLOW_DIR/images/$name" "docker://127.0.0.1:5000/bench/$name:1" ||
        die "skopeo copy of $name to the slow registry failed"
    done
    echo "$sum" >"$SLOW_DIR/pushed"
  fi
  cmd_slow_registry_env
}

# start_slow_daemon NAME EXE CONFIG ARGS...: start_daemon's way, inside
# the slow registry's namespace (ip netns exec execs in place, so the pid
# is the daemon's); a changed CONFIG or EXE restarts it.
start_slow_daemon() {
  local name=$1 exe=$2 config=$3 pidfile=$DIR/run/$1.pid sum
  shift 3
  sum=$(cat "$config" "$exe" | sha256sum | cut -d' ' -f1)
  if alive "$pidfile" "$exe"; then
    [[ -f $pidfile.sum && $(<"$pidfile.sum") == "$sum" ]] && return 0
    stop_pid "$pidfile" "$exe" "$name"
  fi
  log "starting $name in $SLOW_NS (log $DIR/log/$name.log)"
  setsid ip netns exec "$SLOW_NS" "$exe" "$@" >>"$DIR/log/$name.log" 2>&1 </dev/null &
  echo $! >"$pidfile"
  echo "$sum" >"$pidfile.sum"
}

cmd_slow_registry_down() {
  local d
  [[ $(id -u) == 0 ]] || die "must run as root"
  stop_pid "$DIR/run/slowlink.pid" "$DIR/bin/slowlink" slowlink
  stop_pid "$DIR/run/slow-registry.pid" /usr/bin/docker-registry slow-registry
  rm -f "$DIR/run/slowlink.pid.sum" "$DIR/run/slow-registry.pid.sum" "$SLOW_DIR/link"
  for d in $(slow_certs_dirs); do
    rm -rf "${d:?}/$SLOW_REGISTRY"
  done
  if ip netns list | grep -qw "$SLOW_NS"; then
    log "slow registry: removing namespace $SLOW_NS and its link"
    # With the namespace go its end of the pair, so the pair, and their qdiscs.
    ip netns del "$SLOW_NS"
  fi
  if ip link show "$SLOW_HOST_IF" >/dev/null 2>&1; then ip link del "$SLOW_HOST_IF"; fi
}

# slow_link_words MODEL: the link model in words, for logs and env.
slow_link_words() {
  case $1 in
  shared) echo "$SLOW_DELAY each way (hack/slowlink), $SLOW_RATE each way shared by all connections (tc tbf)" ;;
  per-connection) echo "$SLOW_DELAY and $SLOW_CONN_RATE/s each way per connection (hack/slowlink), $SLOW_FAST_RATE each way in all (tc tbf)" ;;
  esac
}

# cmd_slow_registry_env: the settings hack/bench reads.
cmd_slow_registry_env() {
  local model
  alive "$DIR/run/slowlink.pid" "$DIR/bin/slowlink" && alive "$DIR/run/slow-registry.pid" /usr/bin/docker-registry ||
    die "the slow registry is not up: '$0 slow-registry up'"
  model=$(cat "$SLOW_DIR/link" 2>/dev/null) || model=shared # brought up before link models
  echo "PODRUN_TESTBED_SLOW_REGISTRY=$SLOW_REGISTRY"
  echo "PODRUN_TESTBED_SLOW_IMAGES=$(printf "$SLOW_REGISTRY/bench/%s:1 " "${SLOW_IMAGES[@]}" | sed 's/ $//')"
  echo "PODRUN_TESTBED_SLOW_LINK_MODEL=$model"
  echo "PODRUN_TESTBED_SLOW_LINK=$(slow_link_words "$model")"
  echo "PODRUN_TESTBED_SLOW_CA=$CA"
}

# --------------------------------------------------------------- commands --

cmd_up() {
  local t0=$SECONDS
  [[ $(id -u) == 0 ]] || die "must run as root (containerd, runc, CNI)"
  keep_running_flavor
  check_cgroup_driver
  if [[ $FLAVOR == debian ]]; then PACKAGES+=(containerd:/usr/bin/containerd); fi
  install_packages
  mkdir -p "$DIR"/{bin,run,log,tls,opt} "$CTR_ROOT" "$CTR_STATE"
  if [[ $FLAVOR == v2 ]]; then mkdir -p "$DIR"/v2/{tmp,cdi}; fi
  build_tools
  build_containerd_v2
  build_runc
  if [[ -n $SHARED_REGISTRIES ]]; then
    use_shared_registries
  else
    make_tls
    write_registry_configs
    start_registries
  fi
  write_hosts_toml
  write_cni_conf
  write_containerd_config
  start_containerd
  [[ -n $SHARED_REGISTRIES ]] || push_images
  write_env
  log "up in $((SECONDS - t0))s; settings: $0 env"
  if [[ ${PODRUN_TESTBED_KUBELET:-} == 1 ]]; then cmd_kubelet_up; fi
}

# Every process whose argv has "-address $SOCK": the shims of our containerd.
our_shims() {
  local p args
  for p in /proc/[0-9]*; do
    args=$(tr '\0' '\n' 2>/dev/null <"$p/cmdline") || continue
    if [[ $args == *containerd-shim* ]] && grep -qxF -- "$SOCK" <<<"$args"; then
      echo "${p#/proc/}"
    fi
  done
}

descendants() { # PID: the pid and all its descendants
  local c
  echo "$1"
  for c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do descendants "$c"; done
}

# kill_shims: after containerd stopped, wait for the shims of $SOCK whose
# containers were removed to exit by themselves; kill any left (and their
# containers).
kill_shims() {
  local i pids
  for ((i = 0; i < 30; i++)); do
    [[ -z $(our_shims) ]] && break
    sleep 0.1
  done
  pids=$(for p in $(our_shims); do descendants "$p"; done)
  if [[ -n $pids ]]; then
    log "killing leftover shims and containers: $(echo $pids)"
    kill -KILL $pids 2>/dev/null || true
  fi
}

# unmount_under DIR: every mount below DIR, deepest first.
unmount_under() {
  local m
  for m in $(awk -v d="$1/" 'index($5, d) == 1 {print $5}' /proc/self/mountinfo | sort -r); do
    umount -l "$m" 2>/dev/null || log "warning: cannot unmount $m"
  done
}

# delete_bridge CONFLIST DEFAULT: the bridge device CONFLIST names (DEFAULT
# without one).
delete_bridge() {
  local bridge
  bridge=$(sed -n 's/^ *"bridge": "\(.*\)",$/\1/p' "$1" 2>/dev/null)
  bridge=${bridge:-$2}
  if ip link show "$bridge" >/dev/null 2>&1; then
    ip link delete "$bridge" || log "warning: cannot delete bridge $bridge"
  fi
}

cmd_down() {
  local purge=${1:-} exe
  [[ $(id -u) == 0 ]] || die "must run as root"
  [[ -d $DIR ]] || { log "nothing to do: $DIR does not exist"; return 0; }
  # Whatever flavor `up` started, not the one PODRUN_TESTBED_CONTAINERD
  # names now.
  exe=$(running_containerd)
  # The kubelet's pods go through the registries' images: it stops first.
  cmd_kubelet_down || log "warning: stopping the kubelet failed; going on"
  # The bench's slow registry, if this testbed's slow-registry up made it.
  if [[ -z $SHARED_REGISTRIES && -f $SLOW_DIR/config.yml ]]; then
    cmd_slow_registry_down || log "warning: removing the slow registry failed; going on"
  fi
  # Pods first, through CRI, so CNI releases IPs and mounts go away.
  if alive "$DIR/run/containerd.pid" "$exe" && [[ -x $DIR/bin/cribare ]]; then
    "$DIR/bin/cribare" -endpoint "$ENDPOINT" -cleanup -timeout 60s ||
      log "warning: removing pods through CRI failed; killing what is left"
  fi
  stop_pid "$DIR/run/containerd.pid" "$exe" containerd
  rm -f "$DIR/run/containerd.exe"
  kill_shims
  stop_pid "$DIR/run/registry-mirror.pid" /usr/bin/docker-registry registry-mirror
  stop_pid "$DIR/run/registry-private.pid" /usr/bin/docker-registry registry-private
  # Mounts left under $DIR (rootfs overlays, netns) by killed pods, deepest
  # first, so that --purge never deletes through a mount.
  unmount_under "$DIR"
  # No pod survives `down`, so no IP is still allocated.
  rm -rf "$DIR/cni/ipam"
  # The bridge the CNI config names (PODRUN_TESTBED_BRIDGE of `up`).
  delete_bridge "$DIR/cni/net.d/10-podrun.conflist" "$BRIDGE"
  sweep_leftovers results
  if [[ -e $DIR/run/created-run-containerd ]]; then
    rmdir /run/containerd/s /run/containerd 2>/dev/null || true
    [[ -e /run/containerd ]] || rm -f "$DIR/run/created-run-containerd"
  fi
  if [[ -e $DIR/run/created-var-lib-cni ]]; then
    rmdir /var/lib/cni/results /var/lib/cni 2>/dev/null || true
    [[ -e /var/lib/cni ]] || rm -f "$DIR/run/created-var-lib-cni"
  fi
  if [[ $purge == --purge ]]; then
    if awk -v d="$DIR/" 'index($5, d) == 1 {found=1} END {exit !found}' /proc/self/mountinfo; then
      die "mounts remain under $DIR; not purging"
    fi
    log "removing $DIR"
    rm -rf "$DIR"
  fi
  log "down"
}

cmd_env() {
  [[ -s $DIR/testbed.env ]] || die "no $DIR/testbed.env: run '$0 up' first"
  cat "$DIR/testbed.env"
  # The control plane's binaries, once controlplane-images built them.
  if [[ -f $CP_OPT/bin/built ]]; then echo "PODRUN_TESTBED_KUBEADM=$CP_OPT/bin/kubeadm"; fi
  # The kubelet's settings while kubelet-up's kubelet runs.
  if [[ -s $KDIR/kubelet.env ]]; then cat "$KDIR/kubelet.env"; fi
}

# cmd_restart_containerd [--kill]: see the top. The running binary (not the
# flavor's default), so a testbed kept on another flavor restarts as it was.
cmd_restart_containerd() {
  local exe pid sig=TERM i
  [[ $(id -u) == 0 ]] || die "must run as root"
  [[ ${1:-} == --kill ]] && sig=KILL
  exe=$(running_containerd)
  alive "$DIR/run/containerd.pid" "$exe" || die "containerd of $DIR does not run: '$0 up' first"
  pid=$(<"$DIR/run/containerd.pid")
  log "restarting containerd (pid $pid, SIG$sig)"
  kill -"$sig" "$pid"
  for ((i = 0; i < 300; i++)); do
    alive "$DIR/run/containerd.pid" "$exe" || break
    sleep 0.1
  done
  alive "$DIR/run/containerd.pid" "$exe" && die "containerd (pid $pid) did not stop within 30s"
  rm -f "$DIR/run/containerd.pid"
  start_daemon containerd "$exe" "$DIR/containerd.toml" --config "$DIR/containerd.toml"
  wait_for containerd 30 cri_answers ||
    die "containerd's CRI does not answer on $ENDPOINT after the restart; see $DIR/log/containerd.log"
  log "containerd restarted (pid $(<"$DIR/run/containerd.pid"))"
}

# flavor_instance ARGS...: with --flavor F among ARGS, run this script again
# on the instance of flavor F (see "Flavor instances" at the top) with the
# other ARGS; without, return.
flavor_instance() {
  local args=() flavor= a
  while (($#)); do
    a=$1
    shift
    case $a in
    --flavor)
      (($#)) || die "--flavor needs a flavor (v2, debian or scratch)"
      flavor=$1
      shift
      ;;
    --flavor=*) flavor=${a#--flavor=} ;;
    *) args+=("$a") ;;
    esac
  done
  [[ -n $flavor ]] || return 0
  local base=$DIR
  case $flavor in
  v2) exec env PODRUN_TESTBED_CONTAINERD=v2 bash "${BASH_SOURCE[0]}" "${args[@]}" ;;
  debian)
    exec env PODRUN_TESTBED_DIR="$base-debian" PODRUN_TESTBED_CONTAINERD=debian \
      PODRUN_TESTBED_POD_SUBNET=10.87.0.0/16 PODRUN_TESTBED_BRIDGE=cni-podrun16 \
      PODRUN_TESTBED_REGISTRIES="$base" bash "${BASH_SOURCE[0]}" "${args[@]}"
    ;;
  scratch)
    exec env PODRUN_TESTBED_DIR="$base-scratch" PODRUN_TESTBED_CONTAINERD=v2 \
      PODRUN_TESTBED_POD_SUBNET=10.85.0.0/16 PODRUN_TESTBED_BRIDGE=cni-podrunx0 \
      PODRUN_TESTBED_REGISTRIES="$base" bash "${BASH_SOURCE[0]}" "${args[@]}"
    ;;
  *) die "--flavor must be v2, debian or scratch, not '$flavor'" ;;
  esac
}
flavor_instance "$@"

case ${1:-} in
up) cmd_up ;;
down) cmd_down "${2:-}" ;;
env) cmd_env ;;
restart-containerd) cmd_restart_containerd "${2:-}" ;;
packages)
  # packages PACKAGE:PATH...: those instead (hack/guest.sh's qemu and
  # debootstrap), each installed unless PATH is there.
  if [[ ${2:-} == --list ]]; then
    for entry in "${PACKAGES[@]}"; do echo "${entry%%:*}"; done
  else
    (($# > 1)) && PACKAGES=("${@:2}")
    install_packages
  fi
  ;;
cni-conf) write_cni_conf "${@:2}" ;; # CONFLIST NETWORK BRIDGE SUBNET IPAM_DIR: hack/crio.sh's network
pins) printf '%s\n' "CONTAINERD_V2_VERSION=$CONTAINERD_V2_VERSION" "RUNC_VERSION=$RUNC_VERSION" "KUBELET_VERSION=$KUBELET_VERSION" ;;
kubelet-build) build_kubelet ;;
controlplane-build) build_controlplane ;;
controlplane-images) cmd_controlplane_images ;;
kubelet-up) cmd_kubelet_up ;;
kubelet-down) cmd_kubelet_down ;;
kubelet-stop) cmd_kubelet_stop ;;
podman) cmd_podman ;;
slow-registry)
  case ${2:-} in
  up) cmd_slow_registry_up "${@:3}" ;;
  down) cmd_slow_registry_down ;;
  env) cmd_slow_registry_env ;;
  *) die "slow-registry up [shared|per-connection]|down|env" ;;
  esac
  ;;
*)
  echo "usage: $0 up | down [--purge] | env | packages [--list | PACKAGE:PATH...] | cni-conf CONFLIST NETWORK BRIDGE SUBNET IPAM_DIR | pins | podman [--flavor v2|debian|scratch] | slow-registry up [shared|per-connection]|down|env | restart-containerd [--kill] | kubelet-up | kubelet-stop | kubelet-down | kubelet-build | controlplane-images | controlplane-build" >&2
  exit 2
  ;;
esac
