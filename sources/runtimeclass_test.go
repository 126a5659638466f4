package sources

import (
	"context"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestAdmitRuntimeClass: the API server's RuntimeClass admission over the
// run's RuntimeClasses, as each case's pod and class give it: what the pod
// becomes, or the field and message that refuse it.
func TestAdmitRuntimeClass(t *testing.T) {
	quantities := func(cpu, mem string) v1.ResourceList {
		return v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu), v1.ResourceMemory: resource.MustParse(mem)}
	}
	seconds := func(s int64) *int64 { return &s }
	kata := &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: "kata"}, Handler: "kata"}
	withOverhead := &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: "vm"}, Handler: "kata",
		Overhead: &nodev1.Overhead{PodFixed: quantities("250m", "120Mi")}}
	withScheduling := &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: "sandboxed"}, Handler: "runsc",
		Scheduling: &nodev1.Scheduling{
			NodeSelector: map[string]string{"sandbox": "gvisor", "zone": "a"},
			Tolerations: []v1.Toleration{
				{Key: "sandbox", Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule},
				{Key: "dedicated", Operator: v1.TolerationOpEqual, Value: "gvisor"},
			},
		}}
	classes := map[string]*nodev1.RuntimeClass{"kata": kata, "vm": withOverhead, "sandboxed": withScheduling}

	for _, tc := range []struct {
		name string
		spec v1.PodSpec
		want v1.PodSpec // the pod after admission, when admitted
		err  string     // field: message, when refused
	}{
		{name: "no runtimeClassName: left as it is, an overhead of its own included",
			spec: v1.PodSpec{Overhead: quantities("1", "1Gi")},
			want: v1.PodSpec{Overhead: quantities("1", "1Gi")}},
		{name: "a class of the run: the pod unchanged",
			spec: v1.PodSpec{RuntimeClassName: new("kata")},
			want: v1.PodSpec{RuntimeClassName: new("kata")}},
		{name: "a class the run lacks",
			spec: v1.PodSpec{RuntimeClassName: new("gvisor")},
			err:  `spec.runtimeClassName: Not found: "gvisor": no RuntimeClass "gvisor" in the run: give it with -f (apiVersion node.k8s.io/v1), as the API server refuses the pod without it (RuntimeClass "gvisor" not found)`},
		{name: "the class's overhead is the pod's",
			spec: v1.PodSpec{RuntimeClassName: new("vm")},
			want: v1.PodSpec{RuntimeClassName: new("vm"), Overhead: quantities("250m", "120Mi")}},
		{name: "an overhead of the pod's equal to the class's",
			spec: v1.PodSpec{RuntimeClassName: new("vm"), Overhead: quantities("0.25", "120Mi")},
			want: v1.PodSpec{RuntimeClassName: new("vm"), Overhead: quantities("250m", "120Mi")}},
		{name: "an overhead of the pod's unlike the class's",
			spec: v1.PodSpec{RuntimeClassName: new("vm"), Overhead: quantities("1", "120Mi")},
			err:  `spec.overhead: Forbidden: pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead (RuntimeClass "vm")`},
		{name: "an overhead of the pod's, the class has none",
			spec: v1.PodSpec{RuntimeClassName: new("kata"), Overhead: quantities("1", "120Mi")},
			err:  `spec.overhead: Forbidden: pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead (RuntimeClass "kata" has none)`},
		{name: "scheduling merged: the class's nodeSelector and tolerations added, one the pod's covers dropped",
			spec: v1.PodSpec{RuntimeClassName: new("sandboxed"), NodeSelector: map[string]string{"zone": "a", "disk": "ssd"},
				Tolerations: []v1.Toleration{{Key: "sandbox", Operator: v1.TolerationOpExists}}},
			want: v1.PodSpec{RuntimeClassName: new("sandboxed"), NodeSelector: map[string]string{"zone": "a", "disk": "ssd", "sandbox": "gvisor"},
				Tolerations: []v1.Toleration{{Key: "sandbox", Operator: v1.TolerationOpExists},
					{Key: "dedicated", Operator: v1.TolerationOpEqual, Value: "gvisor"}}}},
		{name: "scheduling on a pod without a nodeSelector",
			spec: v1.PodSpec{RuntimeClassName: new("sandboxed"),
				Tolerations: []v1.Toleration{{Key: "x", Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute, TolerationSeconds: seconds(5)}}},
			want: v1.PodSpec{RuntimeClassName: new("sandboxed"), NodeSelector: map[string]string{"sandbox": "gvisor", "zone": "a"},
				Tolerations: []v1.Toleration{{Key: "x", Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute, TolerationSeconds: seconds(5)},
					{Key: "sandbox", Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule},
					{Key: "dedicated", Operator: v1.TolerationOpEqual, Value: "gvisor"}}}},
		{name: "a nodeSelector key the pod sets to another value",
			spec: v1.PodSpec{RuntimeClassName: new("sandboxed"), NodeSelector: map[string]string{"zone": "b"}},
			err:  `spec.nodeSelector[zone]: Forbidden: conflict: runtimeClass.scheduling.nodeSelector[zone] = a; pod.spec.nodeSelector[zone] = b (RuntimeClass "sandboxed")`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := &v1.Pod{Spec: tc.spec}
			err := admitRuntimeClass(pod, classes)
			switch {
			case tc.err != "":
				if err == nil || err.Field+": "+err.ErrorBody() != tc.err {
					t.Errorf("error %v, want %s", err, tc.err)
				}
			case err != nil:
				t.Errorf("refused: %v", err)
			case !reflect.DeepEqual(pod.Spec, tc.want):
				t.Errorf("pod spec\n%+v\nwant\n%+v", pod.Spec, tc.want)
			}
		})
	}
	if withOverhead.Overhead.PodFixed.Cpu().String() != "250m" || len(withScheduling.Scheduling.NodeSelector) != 2 {
		t.Errorf("admission changed a class: %+v, %+v", withOverhead.Overhead, withScheduling.Scheduling)
	}
}

// TestMergeTolerations: the API server's MergeTolerations, a toleration
// another one covers dropped, of two equal ones the first kept.
func TestMergeTolerations(t *testing.T) {
	s := func(n int64) *int64 { return &n }
	exists := v1.Toleration{Key: "k", Operator: v1.TolerationOpExists}
	equal := v1.Toleration{Key: "k", Operator: v1.TolerationOpEqual, Value: "v"}
	all := v1.Toleration{Operator: v1.TolerationOpExists}
	noExec5 := v1.Toleration{Key: "k", Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute, TolerationSeconds: s(5)}
	noExec9 := v1.Toleration{Key: "k", Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute, TolerationSeconds: s(9)}
	for _, tc := range []struct {
		name          string
		first, second []v1.Toleration
		want          []v1.Toleration
	}{
		{"none", nil, nil, nil},
		{"disjoint", []v1.Toleration{equal}, []v1.Toleration{{Key: "o", Operator: v1.TolerationOpExists}},
			[]v1.Toleration{equal, {Key: "o", Operator: v1.TolerationOpExists}}},
		{"Exists covers Equal of its key", []v1.Toleration{equal}, []v1.Toleration{exists}, []v1.Toleration{exists}},
		{"an empty key with Exists covers everything", []v1.Toleration{equal, noExec5}, []v1.Toleration{all}, []v1.Toleration{all}},
		{"equal ones once", []v1.Toleration{exists}, []v1.Toleration{exists}, []v1.Toleration{exists}},
		{"the shorter NoExecute toleration is covered by the longer", []v1.Toleration{noExec5}, []v1.Toleration{noExec9}, []v1.Toleration{noExec9}},
	} {
		if got := mergeTolerations(tc.first, tc.second); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

// TestLoadRuntimeClasses: a pod's RuntimeClass may come from another -f
// source than the pod; a class no source has refuses the pod naming its
// file, document and field.
func TestLoadRuntimeClasses(t *testing.T) {
	dir := t.TempDir()
	rc := filepath.Join(dir, "rc.yaml")
	writeFile(t, rc, "apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata: {name: vm}\nhandler: kata\noverhead: {podFixed: {memory: 64Mi}}\n")
	pod := filepath.Join(dir, "pod.yaml")
	writeFile(t, pod, namedPod("other")+"---\n"+strings.Replace(podYAML, "spec:\n", "spec:\n  runtimeClassName: vm\n", 1))
	set, err := Load(context.Background(), []string{pod, rc}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(set.RuntimeClasses) != 1 || set.Pods[1].Spec.Overhead.Memory().String() != "64Mi" || set.Pods[0].Spec.Overhead != nil {
		t.Errorf("pods %+v / %+v, classes %d: want the class's overhead on web alone", set.Pods[0].Spec, set.Pods[1].Spec, len(set.RuntimeClasses))
	}

	_, err = Load(context.Background(), []string{pod}, Options{})
	want := pod + `: document 2 (Pod "web"): spec.runtimeClassName: Not found: "vm": no RuntimeClass "vm" in the run: give it with -f (apiVersion node.k8s.io/v1), as the API server refuses the pod without it (RuntimeClass "vm" not found)`
	if err == nil || err.Error() != want {
		t.Errorf("Load without the class: %v\nwant %s", err, want)
	}

	// The name the API server validates.
	_, err = Decode("p.yaml", []byte(strings.Replace(podYAML, "spec:\n", "spec:\n  runtimeClassName: Kata\n", 1)), Options{})
	if err == nil || !strings.Contains(err.Error(), `p.yaml: document 1 (Pod "web"): spec.runtimeClassName: Invalid value: "Kata": a lowercase RFC 1123 subdomain`) {
		t.Errorf("runtimeClassName Kata: %v", err)
	}
}

// TestAdmitRuntimeClassOfWorkloads: a Job's template is admitted once for
// the pods the run makes from it, and a Deployment's pod as the pod it is;
// a refusal names the template's field path.
func TestAdmitRuntimeClassOfWorkloads(t *testing.T) {
	const rc = "apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata: {name: vm}\nhandler: kata\noverhead: {podFixed: {memory: 64Mi}}\n---\n"
	job := `apiVersion: batch/v1
kind: Job
metadata: {name: j}
spec:
  template:
    spec:
      runtimeClassName: CLASS
      restartPolicy: Never
      containers: [{name: c, image: busybox}]
`
	deploy := `apiVersion: apps/v1
kind: Deployment
metadata: {name: d}
spec:
  selector: {matchLabels: {app: d}}
  template:
    metadata: {labels: {app: d}}
    spec:
      runtimeClassName: CLASS
      containers: [{name: c, image: busybox}]
`
	set, err := Decode("w.yaml", []byte(rc+strings.ReplaceAll(job+"---\n"+deploy, "CLASS", "vm")), Options{NodeName: "n"})
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Jobs) != 1 || len(set.Pods) != 1 {
		t.Fatalf("%d jobs, %d pods", len(set.Jobs), len(set.Pods))
	}
	if got := set.Jobs[0].Pod(0, -1).Spec.Overhead.Memory().String(); got != "64Mi" {
		t.Errorf("the Job's pod's overhead %s, want the class's 64Mi", got)
	}
	if got := set.Pods[0].Spec.Overhead.Memory().String(); got != "64Mi" {
		t.Errorf("the Deployment's pod's overhead %s, want the class's 64Mi", got)
	}
	_, err = Decode("w.yaml", []byte(strings.ReplaceAll(job+"---\n"+deploy, "CLASS", "gvisor")), Options{NodeName: "n"})
	for _, want := range []string{
		`w.yaml: document 1 (Job "j"): spec.template.spec.runtimeClassName: Not found: "gvisor"`,
		`w.yaml: document 2 (Deployment "d"): spec.template.spec.runtimeClassName: Not found: "gvisor"`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v\nlacks %s", err, want)
		}
	}
}
