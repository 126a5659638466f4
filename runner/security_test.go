package runner

import (
	"reflect"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func securityPod() *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "prod", UID: "u1"},
		Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "app"}}},
	}
}

func TestContainerSecurityContext(t *testing.T) {
	uid := int64(0)
	root := imageUser{UID: &uid}
	cases := []struct {
		name   string
		mutate func(*v1.Pod, *v1.Container)
		image  imageUser
		check  func(*testing.T, *runtimeapi.LinuxContainerSecurityContext)
	}{
		{name: "no securityContext: the image's uid, no no_new_privs, unconfined seccomp, default masked paths", image: root,
			check: func(t *testing.T, sc *runtimeapi.LinuxContainerSecurityContext) {
				if sc.RunAsUser.GetValue() != 0 || sc.RunAsUser == nil || sc.NoNewPrivs || sc.Privileged || sc.ReadonlyRootfs {
					t.Errorf("sc = %v", sc)
				}
				if sc.Seccomp.ProfileType != runtimeapi.SecurityProfile_Unconfined || sc.Apparmor != nil {
					t.Errorf("seccomp = %v apparmor = %v", sc.Seccomp, sc.Apparmor)
				}
				if !reflect.DeepEqual(sc.MaskedPaths, defaultMaskedPaths()) || !reflect.DeepEqual(sc.ReadonlyPaths, defaultReadonlyPaths()) {
					t.Errorf("masked = %v readonly = %v", sc.MaskedPaths, sc.ReadonlyPaths)
				}
			}},
		{name: "an image user name is passed by name", image: imageUser{Username: "nobody"},
			check: func(t *testing.T, sc *runtimeapi.LinuxContainerSecurityContext) {
				if sc.RunAsUser != nil || sc.RunAsUsername != "nobody" {
					t.Errorf("runAsUser = %v username = %q", sc.RunAsUser, sc.RunAsUsername)
				}
			}},
		{name: "pod-level uid, gid, groups and fsGroup; the container's uid wins", image: root,
			mutate: func(p *v1.Pod, c *v1.Container) {
				p.Spec.SecurityContext = &v1.PodSecurityContext{RunAsUser: ptrTo(int64(1000)), RunAsGroup: ptrTo(int64(3000)),
					FSGroup: ptrTo(int64(2000)), SupplementalGroups: []int64{4000, 5000}}
				c.SecurityContext = &v1.SecurityContext{RunAsUser: ptrTo(int64(1001))}
			},
			check: func(t *testing.T, sc *runtimeapi.LinuxContainerSecurityContext) {
				if sc.RunAsUser.GetValue() != 1001 || sc.RunAsGroup.GetValue() != 3000 || sc.RunAsUsername != "" {
					t.Errorf("uid = %v gid = %v", sc.RunAsUser, sc.RunAsGroup)
				}
				if want := []int64{2000, 4000, 5000}; !reflect.DeepEqual(sc.SupplementalGroups, want) {
					t.Errorf("groups = %v, want %v", sc.SupplementalGroups, want)
				}
			}},
		{name: "privileged, read-only root, capabilities as written", image: root,
			mutate: func(_ *v1.Pod, c *v1.Container) {
				c.SecurityContext = &v1.SecurityContext{Privileged: ptrTo(true), ReadOnlyRootFilesystem: ptrTo(true),
					Capabilities: &v1.Capabilities{Add: []v1.Capability{"NET_ADMIN"}, Drop: []v1.Capability{"ALL"}}}
			},
			check: func(t *testing.T, sc *runtimeapi.LinuxContainerSecurityContext) {
				if !sc.Privileged || !sc.ReadonlyRootfs {
					t.Errorf("privileged = %v readonly = %v", sc.Privileged, sc.ReadonlyRootfs)
				}
				if !reflect.DeepEqual(sc.Capabilities.AddCapabilities, []string{"NET_ADMIN"}) || !reflect.DeepEqual(sc.Capabilities.DropCapabilities, []string{"ALL"}) {
					t.Errorf("capabilities = %v", sc.Capabilities)
				}
				if sc.NoNewPrivs {
					t.Errorf("no_new_privs without allowPrivilegeEscalation: false")
				}
			}},
		{name: "allowPrivilegeEscalation false sets no_new_privs", image: root,
			mutate: func(_ *v1.Pod, c *v1.Container) {
				c.SecurityContext = &v1.SecurityContext{AllowPrivilegeEscalation: ptrTo(false)}
			},
			check: func(t *testing.T, sc *runtimeapi.LinuxContainerSecurityContext) {
				if !sc.NoNewPrivs {
					t.Errorf("no no_new_privs")
				}
			}},
		{name: "allowPrivilegeEscalation true leaves it off", image: root,
			mutate: func(_ *v1.Pod, c *v1.Container) {
				c.SecurityContext = &v1.SecurityContext{AllowPrivilegeEscalation: ptrTo(true)}
			},
			check: func(t *testing.T, sc *runtimeapi.LinuxContainerSecurityContext) {
				if sc.NoNewPrivs {
					t.Errorf("no_new_privs")
				}
			}},
		{name: "procMount Unmasked sends empty path lists", image: root,
			mutate: func(_ *v1.Pod, c *v1.Container) {
				pm := v1.UnmaskedProcMount
				c.SecurityContext = &v1.SecurityContext{ProcMount: &pm}
			},
			check: func(t *testing.T, sc *runtimeapi.LinuxContainerSecurityContext) {
				if sc.MaskedPaths == nil || len(sc.MaskedPaths) != 0 || sc.ReadonlyPaths == nil || len(sc.ReadonlyPaths) != 0 {
					t.Errorf("masked = %#v readonly = %#v", sc.MaskedPaths, sc.ReadonlyPaths)
				}
			}},
		{name: "pod seccomp RuntimeDefault", image: root,
			mutate: func(p *v1.Pod, _ *v1.Container) {
				p.Spec.SecurityContext = &v1.PodSecurityContext{SeccompProfile: &v1.SeccompProfile{Type: v1.SeccompProfileTypeRuntimeDefault}}
			},
			check: func(t *testing.T, sc *runtimeapi.LinuxContainerSecurityContext) {
				if sc.Seccomp.ProfileType != runtimeapi.SecurityProfile_RuntimeDefault {
					t.Errorf("seccomp = %v", sc.Seccomp)
				}
			}},
		{name: "the container's Localhost seccomp wins, under the profile root", image: root,
			mutate: func(p *v1.Pod, c *v1.Container) {
				p.Spec.SecurityContext = &v1.PodSecurityContext{SeccompProfile: &v1.SeccompProfile{Type: v1.SeccompProfileTypeRuntimeDefault}}
				c.SecurityContext = &v1.SecurityContext{SeccompProfile: &v1.SeccompProfile{Type: v1.SeccompProfileTypeLocalhost, LocalhostProfile: ptrTo("profiles/audit.json")}}
			},
			check: func(t *testing.T, sc *runtimeapi.LinuxContainerSecurityContext) {
				if sc.Seccomp.ProfileType != runtimeapi.SecurityProfile_Localhost || sc.Seccomp.LocalhostRef != "/var/lib/podrun/seccomp/profiles/audit.json" {
					t.Errorf("seccomp = %v", sc.Seccomp)
				}
			}},
		{name: "AppArmor from the pod, in both forms", image: root,
			mutate: func(p *v1.Pod, _ *v1.Container) {
				p.Spec.SecurityContext = &v1.PodSecurityContext{AppArmorProfile: &v1.AppArmorProfile{Type: v1.AppArmorProfileTypeLocalhost, LocalhostProfile: ptrTo("k8s-deny")}}
			},
			check: func(t *testing.T, sc *runtimeapi.LinuxContainerSecurityContext) {
				if sc.Apparmor.GetProfileType() != runtimeapi.SecurityProfile_Localhost || sc.Apparmor.LocalhostRef != "k8s-deny" || sc.ApparmorProfile != "localhost/k8s-deny" {
					t.Errorf("apparmor = %v %q", sc.Apparmor, sc.ApparmorProfile)
				}
			}},
		{name: "shareProcessNamespace shares the pod's PID namespace", image: root,
			mutate: func(p *v1.Pod, _ *v1.Container) { p.Spec.ShareProcessNamespace = ptrTo(true) },
			check: func(t *testing.T, sc *runtimeapi.LinuxContainerSecurityContext) {
				if sc.NamespaceOptions.Pid != runtimeapi.NamespaceMode_POD {
					t.Errorf("pid = %v", sc.NamespaceOptions.Pid)
				}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pod := securityPod()
			if tc.mutate != nil {
				tc.mutate(pod, &pod.Spec.Containers[0])
			}
			sc, err := containerSecurityContext(pod, &pod.Spec.Containers[0], tc.image, "/var/lib/podrun/seccomp")
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, sc)
		})
	}
}

func TestContainerSecurityContextErrors(t *testing.T) {
	pod := securityPod()
	pod.Spec.Containers[0].SecurityContext = &v1.SecurityContext{SeccompProfile: &v1.SeccompProfile{Type: v1.SeccompProfileTypeLocalhost}}
	_, err := containerSecurityContext(pod, &pod.Spec.Containers[0], imageUser{}, "/x")
	if err == nil || !strings.Contains(err.Error(), "localhostProfile must be set") {
		t.Errorf("err = %v", err)
	}
}

func TestVerifyRunAsNonRoot(t *testing.T) {
	zero, thousand := int64(0), int64(1000)
	cases := []struct {
		name      string
		pod, ctr  *v1.SecurityContext
		podNon    *bool
		podUser   *int64
		image     imageUser
		wantError string
	}{
		{name: "not asked", image: imageUser{UID: &zero}},
		{name: "runAsNonRoot false", ctr: &v1.SecurityContext{RunAsNonRoot: ptrTo(false)}, image: imageUser{UID: &zero}},
		{name: "an image running as root is refused", ctr: &v1.SecurityContext{RunAsNonRoot: ptrTo(true)}, image: imageUser{UID: &zero},
			wantError: `container has runAsNonRoot and image will run as root (pod: "web_prod(u1)", container: app)`},
		{name: "an image with a user name cannot be verified", ctr: &v1.SecurityContext{RunAsNonRoot: ptrTo(true)}, image: imageUser{Username: "app"},
			wantError: `container has runAsNonRoot and image has non-numeric user (app), cannot verify user is non-root (pod: "web_prod(u1)", container: app)`},
		{name: "an image with a numeric non-root user passes", ctr: &v1.SecurityContext{RunAsNonRoot: ptrTo(true)}, image: imageUser{UID: &thousand}},
		{name: "runAsUser 1000 passes over a root image", ctr: &v1.SecurityContext{RunAsNonRoot: ptrTo(true), RunAsUser: &thousand}, image: imageUser{UID: &zero}},
		{name: "runAsUser 0 breaks the policy", ctr: &v1.SecurityContext{RunAsNonRoot: ptrTo(true), RunAsUser: &zero}, image: imageUser{UID: &thousand},
			wantError: `container's runAsUser breaks non-root policy (pod: "web_prod(u1)", container: app)`},
		{name: "pod-level runAsNonRoot with pod-level runAsUser", podNon: ptrTo(true), podUser: &thousand, image: imageUser{UID: &zero}},
		{name: "pod-level runAsNonRoot over a root image", podNon: ptrTo(true), image: imageUser{UID: &zero},
			wantError: "image will run as root"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pod := securityPod()
			pod.Spec.Containers[0].SecurityContext = tc.ctr
			if tc.podNon != nil || tc.podUser != nil {
				pod.Spec.SecurityContext = &v1.PodSecurityContext{RunAsNonRoot: tc.podNon, RunAsUser: tc.podUser}
			}
			err := verifyRunAsNonRoot(pod, &pod.Spec.Containers[0], tc.image)
			switch {
			case tc.wantError == "" && err != nil:
				t.Errorf("err = %v, want none", err)
			case tc.wantError != "" && (err == nil || !strings.Contains(err.Error(), tc.wantError)):
				t.Errorf("err = %v, want %q", err, tc.wantError)
			}
		})
	}
}

func TestImageUserOf(t *testing.T) {
	if u := imageUserOf(&runtimeapi.Image{Uid: &runtimeapi.Int64Value{Value: 1000}}); u.UID == nil || *u.UID != 1000 {
		t.Errorf("uid image: %+v", u)
	}
	if u := imageUserOf(&runtimeapi.Image{Username: "app"}); u.UID != nil || u.Username != "app" {
		t.Errorf("named image: %+v", u)
	}
	if u := imageUserOf(&runtimeapi.Image{}); u.UID == nil || *u.UID != 0 {
		t.Errorf("no user is root: %+v", u)
	}
}
