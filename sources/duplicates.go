package sources

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// checkDuplicates reports every Pod, Job, ConfigMap or Secret whose
// namespace/name, and every RuntimeClass whose name (it has no
// namespace), was already used by an object of the same kind, naming
// both origins, and every workload (Deployment, CronJob, ...) defined
// twice. (The kubelet drops such pods within one source with a
// FailedValidation event; podrun fails instead.)
func checkDuplicates(set *Set) []error {
	var errs []error
	type entry struct {
		kind   string
		meta   *metav1.ObjectMeta
		origin Origin
	}
	var all []entry
	for _, p := range set.Pods {
		all = append(all, entry{"Pod", &p.ObjectMeta, p.Origin})
		if w := p.Workload; w != nil {
			all = append(all, entry{w.Kind, &metav1.ObjectMeta{Namespace: p.Namespace, Name: w.Name}, p.Origin})
		}
	}
	for _, j := range set.Jobs {
		all = append(all, entry{"Job", &j.Job.ObjectMeta, j.Origin})
		if w := j.Workload; w != nil {
			all = append(all, entry{w.Kind, &metav1.ObjectMeta{Namespace: j.Job.Namespace, Name: w.Name}, j.Origin})
		}
	}
	for _, c := range set.ConfigMaps {
		all = append(all, entry{"ConfigMap", &c.ObjectMeta, c.Origin})
	}
	for _, s := range set.Secrets {
		all = append(all, entry{"Secret", &s.ObjectMeta, s.Origin})
	}
	for _, rc := range set.RuntimeClasses {
		all = append(all, entry{"RuntimeClass", &rc.ObjectMeta, rc.Origin})
	}
	first := map[string]Origin{}
	for _, e := range all {
		key := e.kind + "/" + e.meta.Namespace + "/" + e.meta.Name
		o, seen := first[key]
		if !seen {
			first[key] = e.origin
			continue
		}
		fe := field.Duplicate(field.NewPath("metadata", "name"), e.meta.Name)
		ref := e.meta.Namespace + "/" + e.meta.Name
		if e.meta.Namespace == "" { // cluster-scoped
			ref = e.meta.Name
		}
		errs = append(errs, &Error{
			Origin: e.origin, Kind: e.kind, Name: e.meta.Name, Field: fe.Field,
			Msg: fmt.Sprintf("%s: %s %s is also defined in %s", fe.ErrorBody(), e.kind, ref, o),
		})
	}
	return errs
}
