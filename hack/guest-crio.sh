#!/usr/bin/env bash
# hack/guest-crio.sh: CRI-O in the systemd guest, for docs/cri-o.md. Not a
# phase of make test: no CRI-O can be had on the CI machines. With a CRI-O
# build at hand (docs/cri-o.md says how one was made) and Debian 12's
# conmon and its libglib:
#
#   PODRUN_GUEST_SCRIPT=hack/guest-crio.sh \
#   PODRUN_GUEST_CARRY="/path/crio /path/pinns /path/conmon_2.1.6+ds1-1_amd64.deb /path/libglib2.0-0_2.74.6-2+deb12u9_amd64.deb" \
#   bash hack/guest.sh test containerd2-systemd
#
# It runs in the guest instead of the phase's tests, with the phase's
# testbed up: installs what was carried in (/podrun/carry), starts CRI-O
# beside the testbed with the systemd cgroup manager (hack/crio.sh), runs
# the node-shape tests and those a host that forbids lowering
# oom_score_adj cannot run on CRI-O (CRIO_RUN overrides them) and writes
# the test log to /podrun/out/crio.log, CRI-O's to crio-daemon.log.
set -u

CRIO_RUN_DEFAULT='TestE2ECgroup(Guaranteed|QOSClasses|QOSCorpus|OOMKilled|ReclaimedWithoutSandbox)$|TestE2EUsernsHostUsersFalse$|TestE2EReclaimAfterKill9$|TestE2EContainerOOMScoreAdj$|TestE2EBootstrapExample$|TestE2EContainerSecurityContext$|TestE2EConformance/^(admin|pods)$/^(resource|qos|share-process-namespace[.]yaml)$/^(cpu-constraints-pod|qos-pod|qos-pod-5|pod-level-resources)[.]yaml$'

main() {
  local repo=/root/podrun rc
  export PODRUN_E2E_TIMEOUT_SCALE=4
  (cd /podrun/carry && dpkg -i ./*.deb >/dev/null) || { echo "guest-crio: dpkg -i of the carried packages failed"; return 1; }
  mkdir -p /opt/crio && cp /podrun/carry/crio /podrun/carry/pinns /opt/crio/ && chmod 755 /opt/crio/* || return 1
  # systemd-udev gives each new veth a MAC of its own (Debian 12's
  # 99-default.link: MACAddressPolicy=persistent) after the CNI bridge
  # plugin has set one; CRI-O's network status asks the plugin to CHECK,
  # which then fails every sandbox: "Interface vethX Mac doesn't match"
  # (containerd never CHECKs): without this, 10 of these 15 tests failed so.
  sed 's/^MACAddressPolicy=.*/MACAddressPolicy=none/' /usr/lib/systemd/network/99-default.link >/etc/systemd/network/99-default.link
  udevadm control --reload
  cd "$repo" || return 1
  PODRUN_CRIO=/opt/crio/crio PODRUN_CRIO_CGROUP_MANAGER=systemd bash hack/crio.sh up ||
    { tail -30 /var/lib/podrun-testbed/crio/crio.log; return 1; }
  set -a; eval "$(bash hack/crio.sh env)"; set +a
  (cd "$repo/e2e" && ./e2e.test -test.run "${CRIO_RUN:-$CRIO_RUN_DEFAULT}" -test.count=1 -test.timeout 80m -test.v=test2json 2>&1 |
    /podrun/tools/test2json -t -p e2e | /podrun/tools/testlog -log /podrun/out/crio.log; exit "${PIPESTATUS[2]}")
  rc=$?
  cp /var/lib/podrun-testbed/crio/crio.log /podrun/out/crio-daemon.log 2>/dev/null
  bash "$repo/hack/crio.sh" down
  return $rc
}

main "$@"; exit $?
