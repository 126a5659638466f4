package runner

import (
	"fmt"
	"path/filepath"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podrun/podrun/runner/admission"
)

// The kubelet's default masked and read-only paths
// (pkg/securitycontext/util.go, kept in sync with moby's oci/defaults.go),
// sent for every container unless procMount is Unmasked: the kubelet does
// not leave them to the runtime.
// defaultMaskedPaths and defaultReadonlyPaths are fresh copies of the
// runtime defaults listed here, for a container's config to own.
func defaultMaskedPaths() []string {
	return []string{
		"/proc/asound", "/proc/acpi", "/proc/kcore", "/proc/keys",
		"/proc/latency_stats", "/proc/timer_list", "/proc/timer_stats",
		"/proc/sched_debug", "/proc/scsi", "/sys/firmware",
		"/sys/devices/virtual/powercap",
	}
}

func defaultReadonlyPaths() []string {
	return []string{
		"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger",
	}
}

// seccompProfileRoot is --seccomp-profile-root, by default <root-dir>/seccomp
// as the kubelet's (kuberuntime's seccompProfileRoot under its root dir).
func (o *Options) seccompProfileRoot() string {
	if o.SeccompProfileRoot != "" {
		return o.SeccompProfileRoot
	}
	return filepath.Join(o.RootDir, "seccomp")
}

// imageUser is the user an image runs as (CRI ImageStatus): a numeric uid,
// else a user name, else (neither set) root, as the kubelet's getImageUser.
type imageUser struct {
	UID      *int64
	Username string
}

// imageUserOf reads the user from the runtime's image status.
func imageUserOf(img *runtimeapi.Image) imageUser {
	if img != nil {
		if img.Uid != nil {
			uid := img.Uid.Value
			return imageUser{UID: &uid}
		}
		if img.Username != "" {
			return imageUser{Username: img.Username}
		}
	}
	return imageUser{UID: new(int64)}
}

// effectiveSecurityContext is the kubelet's DetermineEffectiveSecurityContext:
// the container's securityContext, with the pod's SELinux options,
// runAsUser, runAsGroup and runAsNonRoot where the container sets none.
func effectiveSecurityContext(pod *v1.Pod, c *v1.Container) *v1.SecurityContext {
	var sc *v1.SecurityContext
	if c.SecurityContext != nil {
		sc = c.SecurityContext.DeepCopy()
	}
	psc := pod.Spec.SecurityContext
	if psc == nil {
		return sc
	}
	if sc == nil {
		sc = &v1.SecurityContext{}
	}
	if sc.SELinuxOptions == nil && psc.SELinuxOptions != nil {
		sc.SELinuxOptions = psc.SELinuxOptions.DeepCopy()
	}
	if sc.RunAsUser == nil && psc.RunAsUser != nil {
		sc.RunAsUser = clonePtr(psc.RunAsUser)
	}
	if sc.RunAsGroup == nil && psc.RunAsGroup != nil {
		sc.RunAsGroup = clonePtr(psc.RunAsGroup)
	}
	if sc.RunAsNonRoot == nil && psc.RunAsNonRoot != nil {
		sc.RunAsNonRoot = clonePtr(psc.RunAsNonRoot)
	}
	return sc
}

func clonePtr[T any](p *T) *T {
	v := *p
	return &v
}

// verifyRunAsNonRoot is the kubelet's verifyRunAsNonRoot: with
// runAsNonRoot, a runAsUser of 0, an image that runs as root, or an image
// whose user is a name (which cannot be checked) are refused.
func verifyRunAsNonRoot(pod *v1.Pod, c *v1.Container, u imageUser) error {
	sc := effectiveSecurityContext(pod, c)
	if sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot {
		return nil
	}
	podName := formatPod(pod.Name, pod.Namespace, string(pod.UID))
	if sc.RunAsUser != nil {
		if *sc.RunAsUser == 0 {
			return &configError{fmt.Sprintf("container's runAsUser breaks non-root policy (pod: %q, container: %s)", podName, c.Name)}
		}
		return nil
	}
	switch {
	case u.UID != nil && *u.UID == 0:
		return &configError{fmt.Sprintf("container has runAsNonRoot and image will run as root (pod: %q, container: %s)", podName, c.Name)}
	case u.UID == nil && u.Username != "":
		return &configError{fmt.Sprintf("container has runAsNonRoot and image has non-numeric user (%s), cannot verify user is non-root (pod: %q, container: %s)", u.Username, podName, c.Name)}
	}
	return nil
}

// containerSecurityContext is the kubelet's determineEffectiveSecurityContext
// (kuberuntime/security_context.go): the effective securityContext
// converted (capabilities as written, privileged, read-only root, uid and
// gid, SELinux), seccomp and AppArmor profiles, the image's user when no
// runAsUser is set, the namespaces, the pod's fsGroup and supplementalGroups,
// no_new_privs only when allowPrivilegeEscalation is false
// (securitycontext.AddNoNewPrivileges), and the masked and read-only paths.
func containerSecurityContext(pod *v1.Pod, c *v1.Container, u imageUser, seccompRoot string) (*runtimeapi.LinuxContainerSecurityContext, error) {
	esc := effectiveSecurityContext(pod, c)
	out := &runtimeapi.LinuxContainerSecurityContext{}
	var procMount *v1.ProcMountType
	if esc != nil {
		procMount = esc.ProcMount
		if caps := esc.Capabilities; caps != nil {
			out.Capabilities = &runtimeapi.Capability{}
			for _, a := range caps.Add {
				out.Capabilities.AddCapabilities = append(out.Capabilities.AddCapabilities, string(a))
			}
			for _, d := range caps.Drop {
				out.Capabilities.DropCapabilities = append(out.Capabilities.DropCapabilities, string(d))
			}
		}
		if o := esc.SELinuxOptions; o != nil {
			out.SelinuxOptions = &runtimeapi.SELinuxOption{User: o.User, Role: o.Role, Type: o.Type, Level: o.Level}
		}
		if esc.RunAsUser != nil {
			out.RunAsUser = &runtimeapi.Int64Value{Value: *esc.RunAsUser}
		}
		if esc.RunAsGroup != nil {
			out.RunAsGroup = &runtimeapi.Int64Value{Value: *esc.RunAsGroup}
		}
		out.Privileged = esc.Privileged != nil && *esc.Privileged
		out.ReadonlyRootfs = esc.ReadOnlyRootFilesystem != nil && *esc.ReadOnlyRootFilesystem
		// AddNoNewPrivileges: only an explicit false sets no_new_privs.
		out.NoNewPrivs = esc.AllowPrivilegeEscalation != nil && !*esc.AllowPrivilegeEscalation
	}

	var err error
	if out.Seccomp, err = seccompProfile(pod, c, seccompRoot); err != nil {
		return nil, &configError{err.Error()}
	}
	if out.Apparmor, out.ApparmorProfile, err = appArmorRuntimeProfile(pod, c); err != nil {
		return nil, &configError{err.Error()}
	}
	if out.RunAsUser == nil {
		if u.UID != nil {
			out.RunAsUser = &runtimeapi.Int64Value{Value: *u.UID}
		}
		out.RunAsUsername = u.Username
	}
	out.NamespaceOptions = namespaceOptions(pod)
	if psc := pod.Spec.SecurityContext; psc != nil {
		if psc.FSGroup != nil {
			out.SupplementalGroups = append(out.SupplementalGroups, *psc.FSGroup)
		}
		out.SupplementalGroups = append(out.SupplementalGroups, psc.SupplementalGroups...)
	}
	if procMount != nil && *procMount == v1.UnmaskedProcMount {
		out.MaskedPaths, out.ReadonlyPaths = []string{}, []string{}
	} else {
		out.MaskedPaths = defaultMaskedPaths()
		out.ReadonlyPaths = defaultReadonlyPaths()
	}
	return out, nil
}

// seccompProfile is the kubelet's getSeccompProfile with --seccomp-default
// off (its default): the container's profile, else the pod's, else
// Unconfined; a Localhost profile is a file under the seccomp profile root.
func seccompProfile(pod *v1.Pod, c *v1.Container, root string) (*runtimeapi.SecurityProfile, error) {
	var p *v1.SeccompProfile
	if c.SecurityContext != nil && c.SecurityContext.SeccompProfile != nil {
		p = c.SecurityContext.SeccompProfile
	} else if psc := pod.Spec.SecurityContext; psc != nil {
		p = psc.SeccompProfile
	}
	if p == nil {
		return &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_Unconfined}, nil
	}
	switch p.Type {
	case v1.SeccompProfileTypeRuntimeDefault:
		return &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_RuntimeDefault}, nil
	case v1.SeccompProfileTypeLocalhost:
		if p.LocalhostProfile == nil || *p.LocalhostProfile == "" {
			return nil, fmt.Errorf("localhostProfile must be set if seccompProfile type is Localhost.")
		}
		return &runtimeapi.SecurityProfile{
			ProfileType:  runtimeapi.SecurityProfile_Localhost,
			LocalhostRef: filepath.Join(root, *p.LocalhostProfile),
		}, nil
	}
	return &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_Unconfined}, nil
}

// appArmorRuntimeProfile is the kubelet's getAppArmorProfile: the
// container's effective profile (admission.AppArmorProfile) as a CRI
// profile and in the deprecated string form; none when nothing is asked.
func appArmorRuntimeProfile(pod *v1.Pod, c *v1.Container) (*runtimeapi.SecurityProfile, string, error) {
	p := admission.AppArmorProfile(pod, c)
	if p == nil {
		return nil, "", nil
	}
	switch p.Type {
	case v1.AppArmorProfileTypeRuntimeDefault:
		return &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_RuntimeDefault}, v1.DeprecatedAppArmorBetaProfileRuntimeDefault, nil
	case v1.AppArmorProfileTypeUnconfined:
		return &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_Unconfined}, v1.DeprecatedAppArmorBetaProfileNameUnconfined, nil
	case v1.AppArmorProfileTypeLocalhost:
		if p.LocalhostProfile == nil {
			return nil, "", fmt.Errorf("missing localhost apparmor profile name")
		}
		return &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_Localhost, LocalhostRef: *p.LocalhostProfile},
			v1.DeprecatedAppArmorBetaProfileNamePrefix + *p.LocalhostProfile, nil
	}
	return nil, "", fmt.Errorf("unknown apparmor profile type: %q", p.Type)
}
