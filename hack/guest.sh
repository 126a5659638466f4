#!/usr/bin/env bash
# hack/guest.sh image | test [PHASE...] | phases | inside
#
# The node users have, in the test suite: a Debian 12 guest booted with
# systemd and cgroup v2 under qemu's software emulation (TCG: nested KVM
# hangs on these machines), where a subset of the end-to-end tier runs on
# Debian's containerd 1.6 and on containerd 2.4 with runc 1.3 (the
# binaries the host testbed builds), each with SystemdCgroup true and
# false, and the hand-over to kubelet v1.37.2 configured as kubeadm
# configures it (cgroupDriver systemd, kubepods.slice). podrun is never
# told the driver: it finds it as on any node.
#
#   image  build the guest's disk (debootstrap of bookworm with systemd,
#          Debian's kernel, containerd, runc, CNI plugins and every package
#          hack/testbed.sh checks for), its kernel and initrd, into
#          $PODRUN_TESTBED_DIR/guest/image-<key>; kept until its recipe or
#          package list changes (the key hashes both). About 4 minutes
#          cold, nothing when built.
#   test [PHASE...]  boot the guest once and run the phases in it (all of
#          them by default; `phases` lists them). Before: the host testbed
#          up (its registries serve the guest's pulls, its containerd,
#          runc and kubelet builds are carried in), bin/podrun and the e2e
#          test binary built. The guest sees this checkout, the corpus
#          (../shared) and those binaries through a 9p share it mounts at
#          /podrun, writes each phase's full test log and a status line
#          there, and powers off; the exit status is 0 when every phase
#          passed. The guest's disk is a copy-on-write overlay of the
#          image, thrown away after the boot: each run starts fresh.
#   phases list the phases and the tests each runs.
#   inside what the guest runs at boot (its podrun-guest.service): not for
#          the host.
#
# Settings (environment):
#   PODRUN_TESTBED_DIR        the host testbed (/var/lib/podrun-testbed); the
#                             guest's image and runs are under its guest/
#   PODRUN_GUEST_MEMORY       the guest's memory in MiB (4096)
#   PODRUN_GUEST_TIMEOUT      seconds before a boot that has not powered
#                             off is killed and fails (4500)
#   PODRUN_GUEST_STALL        seconds without a line on the guest's console
#                             or in its phases' logs before it is killed;
#                             the phases it had not finished run once more
#                             in a fresh boot (720)
#   PODRUN_GUEST_DEBIAN       the Debian mirror debootstrap reads
#                             (http://deb.debian.org/debian)
#   PODRUN_GUEST_RUN          overrides every phase's test pattern (go test -run)
#   PODRUN_GUEST_SCRIPT       a bash script run in each phase instead of
#                             the tests, with the testbed up and its env
#                             set (for looking into the guest: its output
#                             goes to the console)
#   PODRUN_GUEST_CARRY        files carried into the guest for such a
#                             script (space-separated paths), in
#                             /podrun/carry (another runtime's binaries,
#                             say: docs/cri-o.md ran CRI-O there so)
#
# How the guest reaches the host: qemu's user network (slirp), where
# 10.0.2.2 is the host's loopback. The registries' certificates are for
# 127.0.0.1, so the guest listens on its own 127.0.0.1 at the registries'
# ports (systemd-socket-proxyd behind socket units) and forwards to
# 10.0.2.2: the same names, the same CA, the same hosts.toml as the host.
# Nothing else of the host is reachable from the guest but the 9p share.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TESTBED=$REPO/hack/testbed.sh
DIR=${PODRUN_TESTBED_DIR:-/var/lib/podrun-testbed}
GDIR=$DIR/guest
SUITE=bookworm
DEBIAN_MIRROR=${PODRUN_GUEST_DEBIAN:-http://deb.debian.org/debian}
DISK_SIZE=8G
MEMORY=${PODRUN_GUEST_MEMORY:-4096}
TIMEOUT=${PODRUN_GUEST_TIMEOUT:-4500}
STALL=${PODRUN_GUEST_STALL:-720}
# The guest's own packages, besides every package hack/testbed.sh checks
# for (it runs there too): a systemd node, booted by Debian's kernel.
GUEST_PACKAGES=(systemd systemd-sysv udev dbus linux-image-amd64 initramfs-tools kmod procps
  ca-certificates containerd)
# Where the guest mounts the share, and the testbed directory it uses.
GUEST_SHARE=/podrun
GUEST_TESTBED=/var/lib/podrun-testbed

log() { printf 'guest: %s\n' "$*" >&2; }
die() { printf 'guest: error: %s\n' "$*" >&2; exit 1; }

# ----------------------------------------------------------------- phases --

# The tests each phase runs (go test -run patterns; a top-level | joins
# whole paths). Not the whole tier: the guest is emulated, about twenty
# times slower than the host. Every phase runs the core of what depends on
# the node's shape: pod cgroups and their limits by QoS class, an OOM kill,
# user namespaces, a podrun killed and what the next run reclaims, and the
# corpus rows that read cgroup values. containerd 1.6's systemd phase (the
# node most users have: Debian 12, Ubuntu 24.04 with kubeadm) adds what the
# slices make different: podruns side by side under one root, podruns
# killed or interrupted while their pod's slices exist, oom_score_adj,
# admission's resources, volumes reclaimed. containerd 2.4's systemd phase
# ran them too until the tier took 80 of CI's 90 minutes on a cold machine
# (they are podrun's slice handling, the same for both; PODRUN_GUEST_RUN
# runs them there by hand).
NODE_SHAPE_CORE='TestE2ECgroup(Guaranteed|QOSClasses|QOSCorpus|OOMKilled|ReclaimedWithoutSandbox)$|TestE2EUsernsHostUsersFalse$|TestE2EReclaimAfterKill9$|TestE2EConformance/^(admin|pods)$/^(resource|qos)$/^(cpu-constraints-pod|qos-pod|qos-pod-5|pod-level-resources)[.]yaml$'
NODE_SHAPE_MORE='TestE2ECgroupConcurrentRuns$|TestE2EContainerOOMScoreAdj$|TestE2EVolumeReclaimUnmounts$|TestE2EAdmitReasons$|TestE2EFaultStages/^(cgroup|sandbox|teardown)$|TestE2EFaultConcurrentRuns/^two$'
HANDOVER_RUN='^TestKubeletHandover$'
# The Debian package (hack/release.sh deb, built into the share),
# installed with dpkg, and its unit run by systemd (Type=notify): a test
# only the guest runs (no E2E in its name: the host's make e2e skips it by
# pattern, as it does the kubelet tests).
SUPERVISE_RUN='TestSystemdSupervisedUnit$'

# phases: NAME FLAVOR DRIVER KUBELET RUN, one a line.
phases() {
  cat <<EOF
containerd16-systemd debian systemd no $NODE_SHAPE_CORE|$NODE_SHAPE_MORE
containerd16-cgroupfs debian cgroupfs no $NODE_SHAPE_CORE
containerd2-systemd v2 systemd no $NODE_SHAPE_CORE|$SUPERVISE_RUN
containerd2-cgroupfs v2 cgroupfs no $NODE_SHAPE_CORE
handover-systemd v2 systemd yes $HANDOVER_RUN
EOF
}

# The harness's waits in the guest (PODRUN_E2E_TIMEOUT_SCALE).
TIMEOUT_SCALE=4

# ------------------------------------------------------------------ image --

# image_key: what the image is made of; a change of either makes a new one.
image_key() {
  {
    echo "$SUITE"
    printf '%s\n' "${GUEST_PACKAGES[@]}"
    bash "$TESTBED" packages --list
    declare -f debootstrap_root configure_root make_disk
  } | sha256sum | cut -c1-16
}

IMAGE=

# image: build the image unless built; sets IMAGE to its directory.
cmd_image() {
  local key t0=$SECONDS
  [[ $(id -u) == 0 ]] || die "must run as root (debootstrap, qemu)"
  install_host_packages
  key=$(image_key)
  IMAGE=$GDIR/image-$key
  if [[ -f $IMAGE/built ]]; then
    return 0
  fi
  log "building the guest image $IMAGE (debootstrap of $SUITE: about 4 minutes)"
  build_image "$IMAGE"
  # Older images are another recipe's: gone.
  local old
  for old in "$GDIR"/image-*; do
    [[ $old == "$IMAGE" ]] || rm -rf "$old"
  done
  log "built the guest image in $((SECONDS - t0))s"
}

install_host_packages() {
  bash "$TESTBED" packages qemu-system-x86:/usr/bin/qemu-system-x86_64 qemu-utils:/usr/bin/qemu-img \
    debootstrap:/usr/sbin/debootstrap e2fsprogs:/sbin/mkfs.ext4
}

# build_image OUT: debootstrap, configure, then an ext4 disk made from the
# tree (mkfs.ext4 -d) with the kernel and initrd beside it. The "built"
# stamp is written last.
build_image() {
  local out=$1 work=$1.tmp include m
  # A build cut off (this one or another recipe's) leaves its .tmp, and
  # maybe debootstrap's mounts in it.
  for m in $(awk -v d="$GDIR/" 'index($5, d) == 1 {print $5}' /proc/self/mountinfo | sort -r); do
    umount -l "$m" || die "cannot unmount $m, left by a cut-off build"
  done
  rm -rf "$GDIR"/image-*.tmp "$out"
  mkdir -p "$work"
  debootstrap_root "$work/root"
  configure_root "$work/root"
  make_disk "$work/root" "$work"
  rm -rf "$work/root"
  date -u +%FT%TZ >"$work/built"
  mv "$work" "$out"
}

# debootstrap_root ROOT: bookworm's minimal base with the guest's packages
# and every package hack/testbed.sh checks for.
debootstrap_root() {
  local include
  include=$( (printf '%s\n' "${GUEST_PACKAGES[@]}"; bash "$TESTBED" packages --list) | sort -u | paste -sd,)
  debootstrap --variant=minbase --include="$include" "$SUITE" "$1" "$DEBIAN_MIRROR" \
    >"$1.debootstrap.log" 2>&1 || {
    tail -20 "$1.debootstrap.log" >&2
    die "debootstrap failed (log: $1.debootstrap.log)"
  }
}

# make_disk ROOT OUT: OUT/disk.img, an ext4 filesystem of ROOT's tree, and
# the kernel linux-image-amd64 brought (one version) with its initrd as
# OUT/vmlinuz and OUT/initrd.img.
make_disk() {
  local root=$1 out=$2 kernel
  kernel=$(cd "$root/boot" && ls vmlinuz-* | sed 's/^vmlinuz-//') || die "no kernel in the guest's /boot"
  [[ $kernel != *$'\n'* ]] || die "more than one kernel in the guest's /boot: $kernel"
  cp "$root/boot/vmlinuz-$kernel" "$out/vmlinuz"
  cp "$root/boot/initrd.img-$kernel" "$out/initrd.img"
  mkfs.ext4 -q -F -L podrun-guest -d "$root" "$out/disk.img" "$DISK_SIZE" ||
    die "mkfs.ext4 of the guest's disk failed"
}

# configure_root ROOT: a node that boots to podrun-guest.service and
# nothing else of note: static address on qemu's user network, no getty,
# the packaged containerd and registry services masked (the testbed runs
# its own), the share mounted and `guest.sh inside` run from it.
configure_root() {
  local r=$1
  echo podrun-guest >"$r/etc/hostname"
  printf '127.0.0.1 localhost\n127.0.1.1 podrun-guest\n::1 localhost ip6-localhost ip6-loopback\n' >"$r/etc/hosts"
  echo '/dev/vda / ext4 rw,errors=remount-ro 0 1' >"$r/etc/fstab"
  : >"$r/etc/machine-id"
  mkdir -p "$r/etc/systemd/network"
  cat >"$r/etc/systemd/network/10-guest.network" <<'EOF'
# qemu's user network: the guest is 10.0.2.15, the host's loopback 10.0.2.2.
[Match]
Name=en*

[Network]
Address=10.0.2.15/24
Gateway=10.0.2.2
LinkLocalAddressing=no
IPv6AcceptRA=no
EOF
  cat >"$r/etc/systemd/system/podrun-guest.service" <<EOF
[Unit]
Description=podrun's tests on this node (hack/guest.sh inside)
After=systemd-networkd.service local-fs.target
# Powers the guest off whatever the outcome: the host waits for that.
SuccessAction=poweroff-force
FailureAction=poweroff-force

[Service]
Type=oneshot
ExecStart=/bin/sh -c 'mkdir -p $GUEST_SHARE && mount -t 9p -o trans=virtio,version=9p2000.L,msize=1048576,cache=loose share $GUEST_SHARE && exec /bin/bash $GUEST_SHARE/repo/hack/guest.sh inside'
StandardOutput=tty
StandardError=tty
TTYPath=/dev/ttyS0
TimeoutStartSec=infinity

[Install]
WantedBy=multi-user.target
EOF
  chroot "$r" systemctl enable -q systemd-networkd.service podrun-guest.service
  # wait-online: the address is static, and `inside` waits for it.
  chroot "$r" systemctl mask -q serial-getty@ttyS0.service getty@tty1.service containerd.service \
    docker-registry.service systemd-networkd-wait-online.service apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer fstrim.timer 2>/dev/null
  rm -rf "$r"/var/cache/apt/archives/*.deb "$r"/var/lib/apt/lists/*
}

# ------------------------------------------------------------------- test --

# payload P: the share: this checkout (without .git and bin), bin/podrun,
# the e2e test binary, the corpus, go's test2json and hack/testlog, and
# host/, a testbed directory the guest's testbed takes its registries and
# builds from (PODRUN_TESTBED_REGISTRIES): the host's settings, CA and
# password, its containerd, runc and kubelet, its cribare and mkimage.
payload() {
  local p=$1 name
  rm -rf "$p" && mkdir -p "$p"/{repo,tools,host/tls,host/registry/private,host/opt,host/bin,out}
  tar -C "$REPO" --exclude=./.git --exclude=./bin -cf - . | tar -C "$p/repo" -xf -
  mkdir -p "$p/repo/bin"
  cp "$REPO/bin/podrun" "$p/repo/bin/podrun"
  (cd "$REPO" && go test -c -tags e2e -o "$p/repo/e2e/e2e.test" ./e2e/) ||
    die "go test -c ./e2e/ failed"
  # The Debian package of this checkout, for this machine's architecture:
  # TestSystemdSupervisedUnit installs it and runs its unit.
  bash "$REPO/hack/release.sh" deb "$p/deb" || die "hack/release.sh deb failed"
  (cd "$REPO" && CGO_ENABLED=0 go build -o "$p/tools/testlog" ./hack/testlog) ||
    die "go build ./hack/testlog failed"
  CGO_ENABLED=0 go build -o "$p/tools/test2json" cmd/test2json || die "go build cmd/test2json failed"
  [[ -d $REPO/../shared/corpus ]] || die "the corpus is not beside the repo ($REPO/../shared/corpus)"
  mkdir -p "$p/shared" && cp -r "$REPO/../shared/corpus" "$p/shared/corpus"
  # The host testbed's settings, with its files' paths as the guest sees them.
  sed -e "s|^PODRUN_TESTBED_CA=.*|PODRUN_TESTBED_CA=$GUEST_SHARE/host/tls/ca.crt|" \
    -e "s|^PODRUN_TESTBED_DIR=.*|PODRUN_TESTBED_DIR=$GUEST_SHARE/host|" "$DIR/testbed.env" >"$p/host/testbed.env"
  cp "$DIR/tls/ca.crt" "$p/host/tls/ca.crt"
  cp "$DIR/registry/private/password" "$p/host/registry/private/password"
  for name in containerd-"$(testbed_setting CONTAINERD_V2_VERSION)" runc-"$(testbed_setting RUNC_VERSION)" \
    kubelet-"$(testbed_setting KUBELET_VERSION)"; do
    [[ -f $DIR/opt/$name/bin/built ]] || die "$DIR/opt/$name is not built: bash hack/testbed.sh up && bash hack/testbed.sh kubelet-build"
    # Hard links: the share serves the host's files, nothing is copied.
    cp -al "$DIR/opt/$name" "$p/host/opt/$name"
  done
  for name in cribare mkimage; do
    cp "$DIR/bin/$name" "$DIR/bin/$name.sha256" "$p/host/bin/"
  done
  phases >"$p/phases"
  if [[ -n ${PODRUN_GUEST_SCRIPT:-} ]]; then cp "$PODRUN_GUEST_SCRIPT" "$p/script.sh"; fi
  if [[ -n ${PODRUN_GUEST_CARRY:-} ]]; then
    mkdir -p "$p/carry" && cp -L $PODRUN_GUEST_CARRY "$p/carry/"
  fi
}

# testbed_setting NAME: a version hack/testbed.sh builds (its `pins`).
testbed_setting() {
  bash "$TESTBED" pins | sed -n "s/^$1=//p"
}

cmd_test() {
  local run=$GDIR/run want=("$@") t0=$SECONDS
  [[ $(id -u) == 0 ]] || die "must run as root"
  cmd_image
  [[ -x $REPO/bin/podrun ]] || die "no bin/podrun: make build"
  # The host testbed serves the registries and has built what the guest
  # takes (idempotent, about a second when up and built).
  bash "$TESTBED" up
  bash "$TESTBED" kubelet-build
  log "payload in $run/share"
  payload "$run/share"
  if ((${#want[@]})); then
    local n
    for n in "${want[@]}"; do
      phases | awk -v n="$n" '$1 == n {found=1} END {exit !found}' || die "no phase $n ($0 phases)"
    done
    phases | awk 'BEGIN {for (i = 1; i < ARGC; i++) want[ARGV[i]] = 1; ARGC = 1} $1 in want' "${want[@]}" >"$run/share/phases"
  fi
  if [[ -n ${PODRUN_GUEST_RUN:-} ]]; then
    awk -v r="$PODRUN_GUEST_RUN" '{print $1, $2, $3, $4, r}' "$run/share/phases" >"$run/share/phases.tmp"
    mv "$run/share/phases.tmp" "$run/share/phases"
  fi
  # The phases asked for, for the report: a retry (below) rewrites phases.
  cp "$run/share/phases" "$run/share/phases.all"
  : >"$run/console.log"
  boot "$run"
  if [[ -f $run/stalled ]]; then
    # A stalled guest is killed (boot). Once, its unfinished phases run
    # again in a fresh boot; their stalled logs are kept beside.
    local name f left=()
    while read -r name _; do
      [[ -f $run/share/out/$name.status ]] && continue
      left+=("$name")
      for f in "$run/share/out/$name".*; do
        [[ -e $f ]] && mv "$f" "$run/share/out/$name.stalled${f#"$run/share/out/$name"}"
      done
    done <"$run/share/phases.all"
    if ((${#left[@]})); then
      log "the guest stalled (no output for ${STALL}s) before ${left[*]} finished: running them again in a fresh boot (the stalled logs: $run/share/out/*.stalled.*)"
      awk 'BEGIN {for (i = 1; i < ARGC; i++) want[ARGV[i]] = 1; ARGC = 1} $1 in want' \
        "${left[@]}" <"$run/share/phases.all" >"$run/share/phases"
      boot "$run"
    fi
  fi
  report "$run/share" "$((SECONDS - t0))"
}

# boot RUN: boots the guest on a fresh overlay of the image to run
# RUN/share/phases, and waits for it to power off. A watchdog kills it
# when neither its console nor its phases' logs have changed for STALL
# seconds (no phase is that long silent: the longest whole phase takes
# about 9 minutes) and leaves RUN/stalled: qemu's software emulation has
# once gone silent at 193 % CPU in a phase that passed when run again,
# and the boot's own bound (TIMEOUT) would take CI past its limit.
boot() {
  local run=$1 pid rc=0
  rm -f "$run/disk.qcow2" "$run/qemu.pid" "$run/stalled"
  qemu-img create -q -f qcow2 -F raw -b "$IMAGE/disk.img" "$run/disk.qcow2"
  log "booting the guest (TCG, $MEMORY MiB, 2 CPUs; console: $run/console.log; at most ${TIMEOUT}s, or ${STALL}s without output)"
  touch "$run/console.log"
  (
    timeout --signal=KILL "$TIMEOUT" qemu-system-x86_64 -accel tcg,thread=multi -cpu max -smp 2 -m "$MEMORY" \
      -kernel "$IMAGE/vmlinuz" -initrd "$IMAGE/initrd.img" \
      -append "root=/dev/vda rw console=ttyS0 mitigations=off quiet loglevel=3 systemd.show_status=false systemd.unified_cgroup_hierarchy=1 panic=-1" \
      -drive "file=$run/disk.qcow2,if=virtio,format=qcow2,cache=unsafe" \
      -netdev user,id=n0,net=10.0.2.0/24,host=10.0.2.2 -device virtio-net-pci,netdev=n0 \
      -fsdev "local,id=s0,path=$run/share,security_model=none" -device virtio-9p-pci,fsdev=s0,mount_tag=share \
      -display none -monitor none -serial stdio -no-reboot -pidfile "$run/qemu.pid" </dev/null 2>&1 | tee -a "$run/console.log"
    exit "${PIPESTATUS[0]}"
  ) 2>/dev/null & # (qemu's stderr goes to the console log; this is bash's "Killed")
  pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    sleep 5
    if ! find "$run/console.log" "$run/share/out" -newermt "@$(($(date +%s) - STALL))" -print -quit | grep -q .; then
      log "no output from the guest for ${STALL}s: killing it"
      touch "$run/stalled"
      kill -KILL "$(cat "$run/qemu.pid" 2>/dev/null)" 2>/dev/null || true
      break
    fi
  done
  wait "$pid" || rc=$?
  rm -f "$run/disk.qcow2" "$run/qemu.pid"
  ((rc == 0)) || log "qemu exited $rc$( ((rc == 137)) && echo " (killed)")"
}

# report SHARE SECONDS: each phase's status line (written by the guest),
# and a failure for every phase without one.
report() {
  local share=$1 name fail=0 line
  echo "guest: $(($2 / 60))m$(($2 % 60))s in all"
  while read -r name _; do
    line=$(cat "$share/out/$name.status" 2>/dev/null) || line="$name: did not finish (see the console log)"
    echo "guest: $line"
    [[ $line == "$name: ok"* ]] || fail=1
  done <"$share/phases.all"
  ((fail == 0)) || echo "guest: full logs in $share/out/"
  return $fail
}

# ----------------------------------------------------------------- inside --
# Runs in the guest, from the share, as podrun-guest.service.

cmd_inside() {
  trap 'echo "guest: error: line $LINENO: $BASH_COMMAND exited $?" >&2' ERR
  local share=$GUEST_SHARE src=/root/podrun name flavor driver kubelet run
  # Local copies: the tests write beside their binary, and a local disk is
  # faster than 9p.
  rm -rf "$src" /root/shared && cp -r "$share/repo" "$src" && cp -r "$share/shared" /root/shared
  wait_for_address 10.0.2.15
  proxy_registries "$share/host/testbed.env"
  echo "guest: up after $(cut -d' ' -f1 /proc/uptime)s: kernel $(uname -r), systemd $(systemctl --version | awk 'NR == 1 {print $2}'), $(stat -fc %T /sys/fs/cgroup)"
  export PODRUN_TESTBED_DIR=$GUEST_TESTBED PODRUN_TESTBED_REGISTRIES=$share/host
  export PODRUN_E2E_BINARY=$src/bin/podrun PODRUN_E2E_RESTART_RUNTIME=1 PODRUN_E2E_TIMEOUT_SCALE=$TIMEOUT_SCALE
  PODRUN_E2E_DEB=$(echo "$share"/deb/podrun_*.deb)
  export PODRUN_E2E_DEB
  while read -r name flavor driver kubelet run; do
    inside_phase "$share" "$src" "$name" "$flavor" "$driver" "$kubelet" "$run" </dev/null
  done <"$share/phases"
  sync
}

# wait_for_address ADDR: up to a minute for systemd-networkd to set it.
wait_for_address() {
  local i
  for ((i = 0; i < 600; i++)); do
    ip -4 -o addr show | grep -qF " $1/" && return 0
    sleep 0.1
  done
  echo "guest: no address $1 after a minute" >&2
  return 1
}

# proxy_registries ENV: the host's registries on this guest's loopback, at
# the same ports (see the top).
proxy_registries() {
  local env=$1 addr port
  for addr in $(sed -n 's/^PODRUN_TESTBED_\(MIRROR\|PRIVATE\)=//p' "$env"); do
    port=${addr##*:}
    cat >"/run/systemd/system/podrun-registry-$port.socket" <<EOF
[Socket]
ListenStream=127.0.0.1:$port
EOF
    cat >"/run/systemd/system/podrun-registry-$port.service" <<EOF
[Service]
ExecStart=/lib/systemd/systemd-socket-proxyd 10.0.2.2:$port
EOF
  done
  systemctl daemon-reload
  for addr in $(sed -n 's/^PODRUN_TESTBED_\(MIRROR\|PRIVATE\)=//p' "$env"); do
    systemctl start "podrun-registry-${addr##*:}.socket"
  done
}

# count RE FILE: lines of FILE matching RE (0 without the file).
count() { grep -cE "$1" "$2" 2>/dev/null || true; }

# inside_phase SHARE SRC NAME FLAVOR DRIVER KUBELET RUN: the testbed up
# with that containerd and driver (and the kubelet), the tests, the
# testbed down; NAME.status and NAME.log in the share's out/.
inside_phase() {
  local share=$1 src=$2 name=$3 flavor=$4 driver=$5 kubelet=$6 run=$7 t0=$SECONDS rc=0 setup=ok
  local out=$share/out/$name
  echo "guest: == $name: containerd $flavor, SystemdCgroup $([[ $driver == systemd ]] && echo true || echo false)$([[ $kubelet == yes ]] && echo ", kubelet")"
  export PODRUN_TESTBED_CONTAINERD=$flavor PODRUN_TESTBED_CGROUP_DRIVER=$driver PODRUN_TESTBED_KUBELET_CGROUP_ROOT=/
  {
    bash "$src/hack/testbed.sh" up &&
      if [[ $kubelet == yes ]]; then bash "$src/hack/testbed.sh" kubelet-up; fi
  } >"$out.testbed.log" 2>&1 || setup="testbed up failed (last lines: $(tail -3 "$out.testbed.log" | tr '\n' ' '))"
  if [[ $setup == ok ]]; then
    (
      set -a
      eval "$(bash "$src/hack/testbed.sh" env)"
      set +a
      cd "$src/e2e"
      if [[ -f $share/script.sh ]]; then
        bash "$share/script.sh" 2>&1 | tee "$out.log"
        exit "${PIPESTATUS[0]}"
      fi
      ./e2e.test -test.run "$run" -test.count=1 -test.timeout 50m -test.v=test2json 2>&1 |
        "$share/tools/test2json" -t -p e2e | "$share/tools/testlog" -log "$out.log"
      exit "${PIPESTATUS[2]}"
    ) || rc=$?
  fi
  # The runtimes' and the kubelet's logs, for a failure's post-mortem.
  mkdir -p "$out.logs" && cp "$GUEST_TESTBED"/log/*.log "$out.logs/" 2>/dev/null || true
  # Traced: where a stop hangs shows in the log; bounded, so the next
  # phase (and the report) still come.
  {
    [[ $kubelet == yes ]] && timeout 600 bash -x "$src/hack/testbed.sh" kubelet-down
    timeout 600 bash -x "$src/hack/testbed.sh" down
  } >>"$out.testbed.log" 2>&1 || echo "guest: $name: the testbed's down failed or took over 10 minutes (see $out.testbed.log)"
  local took="$((SECONDS - t0))s"
  if [[ $setup != ok ]]; then
    echo "$name: FAIL: $setup ($took)" >"$out.status"
  elif ((rc != 0)); then
    echo "$name: FAIL: tests failed, exit $rc ($took; $(count '^--- FAIL' "$out.log") failed)" >"$out.status"
  else
    echo "$name: ok ($took; $(count '^ *--- PASS' "$out.log") passed, $(count '^ *--- SKIP' "$out.log") skipped)" >"$out.status"
  fi
  echo "guest: $(cat "$out.status")"
}

# main: the whole file is read before it runs (an edit while it runs does
# not change what runs).
main() {
  case ${1:-} in
  image) cmd_image ;;
  test)
    shift
    cmd_test "$@"
    ;;
  phases) phases ;;
  inside) cmd_inside ;;
  *)
    echo "usage: $0 image | test [PHASE...] | phases" >&2
    exit 2
    ;;
  esac
}
main "$@"; exit $?
