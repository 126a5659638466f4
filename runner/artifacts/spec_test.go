package artifacts

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestParseSpec(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Spec
		err  string
	}{
		{in: "tests:/out=./artifacts", want: Spec{Container: "tests", Path: "/out", HostDir: "./artifacts"}},
		{in: "job/tests:/out/=/tmp/a", want: Spec{Pod: "job", Container: "tests", Path: "/out", HostDir: "/tmp/a"}},
		{in: "ci/job/tests:/out/./r.xml=a", want: Spec{Namespace: "ci", Pod: "job", Container: "tests", Path: "/out/r.xml", HostDir: "a"}},
		// HOSTDIR takes everything after the first '=' after the ':'.
		{in: "c:/out=a=b:c", want: Spec{Container: "c", Path: "/out", HostDir: "a=b:c"}},
		{in: "c:/a,b=x,y", want: Spec{Container: "c", Path: "/a,b", HostDir: "x,y"}},
		{in: "tests", err: "want CONTAINER:PATH=HOSTDIR"},
		{in: "tests:/out", err: "no =HOSTDIR"},
		{in: ":/out=a", err: "no container"},
		{in: "a/b/c/d:/out=a", err: "want CONTAINER:PATH=HOSTDIR"},
		{in: "Tests:/out=a", err: `container name "Tests"`},
		{in: "a_b/c:/out=a", err: `pod name "a_b"`},
		{in: "a.b/p/c:/out=a", err: `namespace "a.b"`},
		{in: "c:out=a", err: `PATH "out" must be absolute`},
		{in: "c:/out=", err: "HOSTDIR is empty"},
	} {
		got, err := ParseSpec(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.HasPrefix(err.Error(), `invalid --copy-out "`+tc.in+`": `) {
				t.Errorf("ParseSpec(%q) = %+v, %v; want an error with %q", tc.in, got, err, tc.err)
			}
			continue
		}
		tc.want.Raw = tc.in
		if err != nil || got != tc.want {
			t.Errorf("ParseSpec(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
}

func testPod(ns, name string, containers ...v1.Container) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1.PodSpec{
			Containers: containers,
			Volumes: []v1.Volume{
				{Name: "out", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}},
				{Name: "host", VolumeSource: v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/srv"}}},
				{Name: "cm", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{}}},
			},
		},
	}
}

func ctr(name string, mounts ...v1.VolumeMount) v1.Container {
	return v1.Container{Name: name, Image: "busybox", VolumeMounts: mounts}
}

func TestResolve(t *testing.T) {
	pod := testPod("default", "job",
		ctr("tests",
			v1.VolumeMount{Name: "out", MountPath: "/out"},
			v1.VolumeMount{Name: "host", MountPath: "/out/host"},
			v1.VolumeMount{Name: "out", MountPath: "/sub", SubPath: "a/b"},
			v1.VolumeMount{Name: "cm", MountPath: "/etc/cfg"},
			v1.VolumeMount{Name: "out", MountPath: "/outer/", ReadOnly: true},
		),
		ctr("root", v1.VolumeMount{Name: "out", MountPath: "/"}),
	)
	pod.Spec.InitContainers = []v1.Container{ctr("init", v1.VolumeMount{Name: "out", MountPath: "/init"})}
	for _, tc := range []struct {
		container, path string
		want            Source
		err             string
	}{
		{container: "tests", path: "/out", want: Source{Mount: 0, MountPath: "/out", Volume: "out", Kind: KindEmptyDir}},
		{container: "tests", path: "/out/report.xml", want: Source{Mount: 0, MountPath: "/out", Volume: "out", Kind: KindEmptyDir, Rel: "report.xml"}},
		// The deepest mount shows the path.
		{container: "tests", path: "/out/host/x/y", want: Source{Mount: 1, MountPath: "/out/host", Volume: "host", Kind: KindHostPath, Rel: "x/y"}},
		{container: "tests", path: "/out/hostname", want: Source{Mount: 0, MountPath: "/out", Volume: "out", Kind: KindEmptyDir, Rel: "hostname"}},
		// A subPath mount: Rel is below the mount, whose host side is the
		// subpath's bind mount.
		{container: "tests", path: "/sub/r.xml", want: Source{Mount: 2, MountPath: "/sub", Volume: "out", Kind: KindEmptyDir, Rel: "r.xml"}},
		// readOnly does not matter; a trailing slash neither.
		{container: "tests", path: "/outer/x", want: Source{Mount: 4, MountPath: "/outer", Volume: "out", Kind: KindEmptyDir, Rel: "x"}},
		{container: "root", path: "/etc/x", want: Source{Mount: 0, MountPath: "/", Volume: "out", Kind: KindEmptyDir, Rel: "etc/x"}},
		{container: "init", path: "/init/done", want: Source{Mount: 0, MountPath: "/init", Volume: "out", Kind: KindEmptyDir, Rel: "done"}},
		{container: "tests", path: "/output", err: `/output is not on a volume of container "tests" of pod default/job: podrun cannot read an exited container's own filesystem (CRI offers no way in), only its volumes; mount an emptyDir at /output (or a parent directory)`},
		{container: "tests", path: "/etc/cfg/a", err: `on volume "cm", which is not an emptyDir or a hostPath`},
		{container: "nope", path: "/out", err: `pod default/job has no container "nope" (its containers: init, tests, root)`},
	} {
		got, err := Resolve(pod, tc.container, tc.path)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Resolve(%s, %s) = %+v, %v; want %q", tc.container, tc.path, got, err, tc.err)
			}
			continue
		}
		tc.want.Container = tc.container
		if err != nil || got != tc.want {
			t.Errorf("Resolve(%s, %s) = %+v, %v; want %+v", tc.container, tc.path, got, err, tc.want)
		}
	}
}

func TestCheckRun(t *testing.T) {
	out := v1.VolumeMount{Name: "out", MountPath: "/out"}
	a := testPod("default", "a", ctr("tests", out), ctr("side"))
	b := testPod("ci", "b", ctr("tests", out))
	spec := func(s string) Spec {
		sp, err := ParseSpec(s)
		if err != nil {
			t.Fatal(err)
		}
		return sp
	}
	for _, tc := range []struct {
		pods []*v1.Pod
		spec string
		err  string
	}{
		{[]*v1.Pod{a}, "tests:/out/r.xml=x", ""},
		{[]*v1.Pod{a, b}, "a/tests:/out=x", ""},
		{[]*v1.Pod{a, b}, "ci/b/tests:/out=x", ""},
		{[]*v1.Pod{a, b}, "tests:/out=x", `--copy-out tests:/out=x: the pods default/a, ci/b all have a container "tests": name the pod, as POD/tests:/out=x`},
		{[]*v1.Pod{a}, "nope:/out=x", `--copy-out nope:/out=x: pod default/a has no container "nope" (its containers: tests, side)`},
		{[]*v1.Pod{a, b}, "nope:/out=x", `no pod of the run has a container "nope"`},
		{[]*v1.Pod{a, b}, "c/tests:/out=x", `the run has no pod c`},
		{[]*v1.Pod{a, b}, "default/b/tests:/out=x", `the run has no pod default/b`},
		{[]*v1.Pod{a, b}, "b/side:/out=x", `pod ci/b has no container "side"`},
		{[]*v1.Pod{a}, "side:/out=x", `--copy-out side:/out=x: /out is not on a volume of container "side" of pod default/a`},
	} {
		err := CheckRun(tc.pods, []Spec{spec(tc.spec)})
		if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("CheckRun(%s) = %v, want %q", tc.spec, err, tc.err)
		}
	}
	// ForPod gives each pod its own specs.
	specs := []Spec{spec("a/tests:/out=x"), spec("b/tests:/out/y=z")}
	if got := ForPod(b, specs); len(got) != 1 || got[0].Spec.HostDir != "z" || got[0].Source.Rel != "y" || got[0].Err != nil {
		t.Errorf("ForPod(b) = %+v", got)
	}
}
