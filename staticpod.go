package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/podrun/podrun/runner"
	"github.com/podrun/podrun/sources"
)

// What a run with --static-pod-names checks before it starts anything
// (docs/bootstrap.md): that a kubelet would take the manifests as they
// are (sources.StaticPodProblems: warnings, or with --static-pod-strict
// the run's error), and that no kubelet is at work on the node
// (runner.CheckNoKubelet, unless --ignore-running-kubelet).
type staticPodChecks struct {
	Strict            bool   // --static-pod-strict
	IgnoreKubelet     bool   // --ignore-running-kubelet
	KubeletHealthzURL string // --kubelet-healthz
}

// usage refuses the checks' flags without --static-pod-names, which they
// would silently not apply to.
func (s staticPodChecks) usage(staticPodNames bool) error {
	switch {
	case staticPodNames:
		return nil
	case s.Strict:
		return errors.New("--static-pod-strict checks static pods: give --static-pod-names too")
	case s.IgnoreKubelet:
		return errors.New("--ignore-running-kubelet is for static pods: give --static-pod-names too")
	}
	return nil
}

// manifests warns on stderr of each thing a kubelet would refuse or not
// read in set as static pods; with Strict they are the run's error.
func (s staticPodChecks) manifests(set *sources.Set, stderr io.Writer) error {
	problems := sources.StaticPodProblems(set)
	if s.Strict && len(problems) > 0 {
		errs := make([]error, len(problems))
		for i, p := range problems {
			errs[i] = p
		}
		return errors.Join(errs...)
	}
	for _, p := range problems {
		fmt.Fprintf(stderr, "podrun: warning: %v\n", p)
	}
	return nil
}

// kubelet refuses the run where a kubelet is at work, unless told to go
// ahead.
func (s staticPodChecks) kubelet(ctx context.Context, rt runner.Runtime) error {
	if s.IgnoreKubelet {
		return nil
	}
	return runner.CheckNoKubelet(ctx, rt, s.KubeletHealthzURL)
}
