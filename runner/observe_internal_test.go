package runner

import (
	"testing"
	"time"
)

func TestIdlePollDelay(t *testing.T) {
	for _, tc := range []struct {
		since, want time.Duration
	}{
		{0, pollInterval},                                  // just changed: fast
		{60 * time.Millisecond, pollInterval},              // a quarter is below the floor
		{200 * time.Millisecond, 50 * time.Millisecond},    // a quarter of the quiet time
		{800 * time.Millisecond, maxIdlePollInterval},      // at the cap
		{time.Hour, maxIdlePollInterval},                   // a long quiet run: the cap
		{time.Since(time.Unix(0, 0)), maxIdlePollInterval}, // never changed: the cap
	} {
		if got := idlePollDelay(tc.since); got != tc.want {
			t.Errorf("idlePollDelay(%v) = %v, want %v", tc.since, got, tc.want)
		}
	}
}
