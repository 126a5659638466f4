package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/podrun/podrun/cri"
	"github.com/podrun/podrun/cri/fake"
)

// TestSupervisionWatchesKubelet: a supervised run with --static-pod-names
// looks for a kubelet every kubeletWatchInterval, not at once, and hands
// over once the kubelet's healthz answers ok; after stop it looks no more.
func TestSupervisionWatchesKubelet(t *testing.T) {
	t.Setenv("NOTIFY_SOCKET", "")
	_, endpoint := fake.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rt, err := cri.Dial(ctx, endpoint)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	var up, asked atomic.Bool
	healthz := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		asked.Store(true)
		if !up.Load() {
			http.Error(w, "not yet", http.StatusInternalServerError)
			return
		}
		_, _ = w.Write([]byte("ok"))
	}))
	defer healthz.Close()
	cfg := runConfig{Supervise: true, StaticPodNames: true, StaticPod: staticPodChecks{KubeletHealthzURL: healthz.URL}}

	start := time.Now()
	s, err := startSupervision(ctx, cfg, rt, 1)
	if err != nil {
		t.Fatal(err)
	}
	up.Store(true)
	select {
	case <-s.handOver:
	case <-time.After(5 * kubeletWatchInterval):
		t.Fatalf("no hand-over %v after the kubelet's healthz answered ok", 5*kubeletWatchInterval)
	}
	if d := time.Since(start); d < kubeletWatchInterval {
		t.Errorf("handed over after %v, before the first kubeletWatchInterval (%v)", d, kubeletWatchInterval)
	}
	if !s.handedOver() {
		t.Error("handedOver() = false after the hand-over")
	}
	s.stop("done")

	up.Store(false)
	s, err = startSupervision(ctx, cfg, rt, 1)
	if err != nil {
		t.Fatal(err)
	}
	s.stop("done")
	asked.Store(false)
	time.Sleep(kubeletWatchInterval + kubeletWatchInterval/2)
	if asked.Load() || s.handedOver() {
		t.Errorf("after stop: healthz asked %v, handed over %v; want neither", asked.Load(), s.handedOver())
	}
}
