package cri

import (
	"context"
	"fmt"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Version returns the runtime's name and version and the CRI version it
// speaks. Unlike the other idempotent calls it is not retried when the
// connection broke under it (serviceConfig): it is Dial's probe.
func (c *Client) Version(ctx context.Context) (*runtimeapi.VersionResponse, error) {
	v, err := call(c, ctx, 0, c.runtime.Version, &runtimeapi.VersionRequest{Version: apiVersion})
	if err != nil {
		return nil, wrap(err, "getting runtime version")
	}
	return v, nil
}

// Status returns the runtime's conditions. verbose asks for the Info map
// too (containerd puts its CNI and runtime configuration there).
func (c *Client) Status(ctx context.Context, verbose bool) (*runtimeapi.StatusResponse, error) {
	st, err := call(c, ctx, 0, c.runtime.Status, &runtimeapi.StatusRequest{Verbose: verbose})
	if err != nil {
		return nil, wrap(err, "getting runtime status")
	}
	return st, nil
}

// NotReadyError says a runtime condition podrun needs is false or missing.
type NotReadyError struct {
	// Condition is RuntimeReady or NetworkReady.
	Condition string
	// Missing is true when the runtime did not report the condition at all.
	Missing bool
	// Reason and Message are the runtime's, when it reported the condition.
	Reason, Message string
}

func (e *NotReadyError) Error() string {
	if e.Missing {
		return fmt.Sprintf("runtime not ready: %s not reported", e.Condition)
	}
	return fmt.Sprintf("runtime not ready: %s=false reason:%s message:%s", e.Condition, e.Reason, e.Message)
}

// CheckReady returns a *NotReadyError unless the runtime reports
// RuntimeReady, and NetworkReady as well when needNetwork is true (pods on
// the host network do not need the runtime's CNI).
func (c *Client) CheckReady(ctx context.Context, needNetwork bool) error {
	_, err := c.ReadyStatus(ctx, needNetwork, false)
	return err
}

// ReadyStatus is CheckReady returning the Status it checked, so a caller
// that also needs the verbose info (the CNI check) asks only once.
func (c *Client) ReadyStatus(ctx context.Context, needNetwork, verbose bool) (*runtimeapi.StatusResponse, error) {
	st, err := c.Status(ctx, verbose)
	if err != nil {
		return nil, fmt.Errorf("checking runtime readiness: %w", err)
	}
	return st, checkConditions(st.GetStatus(), needNetwork)
}

// checkConditions is CheckReady's decision on a status already fetched.
func checkConditions(st *runtimeapi.RuntimeStatus, needNetwork bool) error {
	need := []string{runtimeapi.RuntimeReady}
	if needNetwork {
		need = append(need, runtimeapi.NetworkReady)
	}
	for _, typ := range need {
		var cond *runtimeapi.RuntimeCondition
		for _, c := range st.GetConditions() {
			if c.GetType() == typ {
				cond = c
				break
			}
		}
		switch {
		case cond == nil:
			return &NotReadyError{Condition: typ, Missing: true}
		case !cond.GetStatus():
			return &NotReadyError{Condition: typ, Reason: cond.GetReason(), Message: cond.GetMessage()}
		}
	}
	return nil
}

// CgroupDriver asks the runtime which cgroup driver it uses (the CRI
// RuntimeConfig call, containerd ≥ 2.0 and CRI-O ≥ 1.28): "systemd" or
// "cgroupfs". A runtime that does not implement the call gives an error
// matching ErrUnimplemented; one that answers without a Linux config gives "".
func (c *Client) CgroupDriver(ctx context.Context) (string, error) {
	resp, err := call(c, ctx, 0, c.runtime.RuntimeConfig, &runtimeapi.RuntimeConfigRequest{})
	if err != nil {
		return "", wrap(err, "getting runtime config")
	}
	if resp.GetLinux() == nil {
		return "", nil
	}
	switch resp.GetLinux().GetCgroupDriver() {
	case runtimeapi.CgroupDriver_SYSTEMD:
		return "systemd", nil
	case runtimeapi.CgroupDriver_CGROUPFS:
		return "cgroupfs", nil
	}
	return "", fmt.Errorf("runtime reports unknown cgroup driver %v", resp.GetLinux().GetCgroupDriver())
}
