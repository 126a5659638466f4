package runner

import (
	"errors"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
)

func TestPullDecision(t *testing.T) {
	cases := []struct {
		name      string
		policy    v1.PullPolicy
		present   bool
		wantPull  bool
		wantError string
	}{
		{name: "Always pulls a present image", policy: v1.PullAlways, present: true, wantPull: true},
		{name: "Always pulls an absent image", policy: v1.PullAlways, wantPull: true},
		{name: "IfNotPresent uses a present image", policy: v1.PullIfNotPresent, present: true},
		{name: "IfNotPresent pulls an absent image", policy: v1.PullIfNotPresent, wantPull: true},
		{name: "an empty policy behaves as IfNotPresent", policy: "", wantPull: true},
		{name: "Never uses a present image", policy: v1.PullNever, present: true},
		{name: "Never with an absent image is ErrImageNeverPull", policy: v1.PullNever,
			wantError: `ErrImageNeverPull: Container image "busybox:latest" is not present with pull policy of Never`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pull, err := pullDecision(tc.policy, "busybox:latest", tc.present)
			if pull != tc.wantPull {
				t.Errorf("pull = %v, want %v", pull, tc.wantPull)
			}
			switch {
			case tc.wantError == "" && err != nil:
				t.Errorf("err = %v, want nil", err)
			case tc.wantError != "":
				var pe *pullError
				if !errors.As(err, &pe) || pe.Reason != reasonErrImageNeverPull {
					t.Fatalf("err = %v, want a pullError with reason ErrImageNeverPull", err)
				}
				if err.Error() != tc.wantError {
					t.Errorf("err = %q, want %q", err, tc.wantError)
				}
			}
		})
	}
}

func TestImageVolumeHint(t *testing.T) {
	pod := &v1.Pod{Spec: v1.PodSpec{Volumes: []v1.Volume{
		{Name: "art", VolumeSource: v1.VolumeSource{Image: &v1.ImageVolumeSource{Reference: "quay.io/crio/artifact:v2"}}},
		{Name: "tmp", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}},
	}}}
	mounting := &v1.Container{Name: "c", VolumeMounts: []v1.VolumeMount{{Name: "tmp", MountPath: "/tmp"}, {Name: "art", MountPath: "/v"}}}
	other := &v1.Container{Name: "d", VolumeMounts: []v1.VolumeMount{{Name: "tmp", MountPath: "/tmp"}}}
	const old = `failed to generate spec: failed to mkdir "": mkdir : no such file or directory`
	if h := imageVolumeHint(pod, mounting, old); !strings.Contains(h, `container "c" mounts the image volume "art": the runtime must support image volumes`) {
		t.Errorf("hint for an old runtime's error = %q", h)
	}
	if h := imageVolumeHint(pod, other, old); h != "" {
		t.Errorf("hint for a container without an image volume = %q, want none", h)
	}
	for _, msg := range []string{
		"failed to mount image volume: not found",
		`ImageVolumeMountFailed: failed to resolve image "x": not found`,
	} {
		if h := imageVolumeHint(pod, mounting, msg); h != "" {
			t.Errorf("hint for %q, an error about the image volume = %q, want none", msg, h)
		}
	}
}
