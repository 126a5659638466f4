package cri

import (
	"errors"
	"fmt"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// ErrUnimplemented matches (errors.Is) an error from a call the runtime does
// not implement, such as GetContainerEvents on containerd 1.6. The gRPC
// status stays reachable through status.FromError.
var ErrUnimplemented = errors.New("not implemented by the runtime")

// IsNotFound reports whether err says the sandbox, container or image does
// not exist: gRPC codes.NotFound, or the textual not-found errors that
// runtimes return with codes.Unknown (containerd's "...: not found", CRI-O's
// "... not found: ID does not exist"). Only the runtime's status message is
// read, never podrun's own wrapping of it.
func IsNotFound(err error) bool {
	st, ok := grpcStatus(err)
	if !ok {
		return false
	}
	switch st.Code() {
	case codes.NotFound:
		return true
	case codes.Unknown:
		return notFoundText(st.Message())
	}
	return false
}

// IsUnavailable reports whether err says the runtime went away during the
// call (gRPC codes.Unavailable: a restart, say), so the call may or may not
// have been carried out.
func IsUnavailable(err error) bool {
	st, ok := grpcStatus(err)
	return ok && st.Code() == codes.Unavailable
}

// notFoundText matches the runtimes' not-found messages. containerd wraps its
// errdefs.ErrNotFound, whose text "not found" ends the message ("an error
// occurred when try to find container \"abc\": not found"); CRI-O ends with
// truncindex's "ID does not exist" ("container with ID starting with abc not
// found: ID does not exist"). Requiring the phrase at the end keeps out
// errors that mention something missing along the way ("failed to find
// plugin \"bridge\" in path", "exec: \"x\": executable file not found in
// $PATH: unknown").
func notFoundText(msg string) bool {
	msg = strings.ToLower(strings.TrimSpace(msg))
	return strings.HasSuffix(msg, "not found") || strings.HasSuffix(msg, "id does not exist")
}

// grpcStatus finds the runtime's own status in err's chain, with its
// original message (status.FromError replaces the message with the whole
// wrapped text).
func grpcStatus(err error) (*status.Status, bool) {
	var se interface{ GRPCStatus() *status.Status }
	if !errors.As(err, &se) {
		return nil, false
	}
	st := se.GRPCStatus()
	return st, st != nil
}

// wrap puts a verb phrase in front of an RPC error, keeping the gRPC status
// reachable, and marks codes.Unimplemented so that it matches
// ErrUnimplemented.
func wrap(err error, format string, args ...any) error {
	if status.Code(err) == codes.Unimplemented {
		err = unimplementedError{err}
	}
	return fmt.Errorf(format+": %w", append(args, err)...)
}

// done is the error of a stop or remove call: "not found" counts as done,
// anything else is wrapped.
func done(err error, format string, args ...any) error {
	if err != nil && !IsNotFound(err) {
		return wrap(err, format, args...)
	}
	return nil
}

// unimplementedError is an Unimplemented gRPC error that also matches
// ErrUnimplemented, without changing its text.
type unimplementedError struct{ err error }

func (e unimplementedError) Error() string        { return e.err.Error() }
func (e unimplementedError) Unwrap() error        { return e.err }
func (e unimplementedError) Is(target error) bool { return target == ErrUnimplemented }
