package fake

import (
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// subscriberBuffer is how many events wait for a slow subscriber; past it,
// events to that subscriber are dropped (a reader that falls behind must
// re-list, as with a real runtime's stream).
const subscriberBuffer = 256

// GetContainerEvents streams container events while EnableEvents is on;
// otherwise it answers Unimplemented with the words gRPC uses for a method
// the server does not have, as containerd 1.6 does.
func (r *runtimeServer) GetContainerEvents(req *runtimeapi.GetEventsRequest, stream grpc.ServerStreamingServer[runtimeapi.ContainerEventResponse]) error {
	s := r.s
	ch := make(chan *runtimeapi.ContainerEventResponse, subscriberBuffer)
	s.mu.Lock()
	if !s.events {
		s.mu.Unlock()
		return status.Error(codes.Unimplemented, "unknown method GetContainerEvents for service runtime.v1.RuntimeService")
	}
	if s.crio.EndEvents {
		s.mu.Unlock()
		return nil
	}
	s.subs[ch] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.subs, ch)
		s.mu.Unlock()
	}()
	// Headers now, so a client can tell the stream is open before any event.
	if err := stream.SendHeader(metadata.MD{}); err != nil {
		return err
	}
	for {
		select {
		case ev := <-ch:
			if err := stream.Send(ev); err != nil {
				return err
			}
		case <-stream.Context().Done():
			return nil
		}
	}
}

// EventSubscribers returns how many GetContainerEvents streams are open, so
// a test can wait for its subscription before it makes events.
func (s *Server) EventSubscribers() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.subs)
}

// emit sends an event about c to every subscriber. Called with s.mu held.
func (s *Server) emit(c *container, typ runtimeapi.ContainerEventType) {
	if len(s.subs) == 0 {
		return
	}
	ev := &runtimeapi.ContainerEventResponse{
		ContainerId:        c.id,
		ContainerEventType: typ,
		CreatedAt:          time.Now().UnixNano(),
		ContainersStatuses: s.containerStatuses(c.sandboxID),
	}
	if p := s.pods[c.sandboxID]; p != nil {
		ev.PodSandboxStatus = s.sandboxStatus(p)
	}
	if s.bareEvents {
		ev.ContainersStatuses = nil
	}
	for ch := range s.subs {
		select {
		case ch <- clone(ev):
		default:
		}
	}
}
