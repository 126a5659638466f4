package main

import (
	"testing"
	"time"
)

func TestBucketTake(t *testing.T) {
	t0 := time.Unix(1000, 0)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	type step struct {
		n    int
		at   time.Time
		wait time.Duration
	}
	for _, tc := range []struct {
		name        string
		rate, burst int64
		steps       []step
	}{
		{"no limit", 0, 0, []step{{1 << 20, t0, 0}, {1 << 20, t0, 0}}},
		{"within the burst", 8e6, 64e3, []step{{32e3, t0, 0}, {32e3, t0, 0}}},
		// 64 KB of burst, then 32 KB owed: 4 ms at 8 MB/s.
		{"past the burst", 8e6, 64e3, []step{{32e3, t0, 0}, {32e3, t0, 0}, {32e3, t0, 4 * time.Millisecond}}},
		// Debt adds up: a second 32 KB owes 64 KB, 8 ms from t0.
		{"debt adds up", 8e6, 64e3, []step{{64e3, t0, 0}, {32e3, t0, 4 * time.Millisecond}, {32e3, t0, 8 * time.Millisecond}}},
		// Paid back with time: after 4 ms the 32 KB debt is gone, the next 32 KB waits 4 ms again.
		{"refills with time", 8e6, 64e3, []step{{64e3, t0, 0}, {32e3, t0, 4 * time.Millisecond}, {32e3, ms(4), 4 * time.Millisecond}}},
		// Never more than the burst: a long pause refills to 64 KB only.
		{"capped at the burst", 8e6, 64e3, []step{{64e3, t0, 0}, {96e3, ms(10000), 4 * time.Millisecond}}},
		// A chunk larger than the burst is paced, not refused.
		{"larger than the burst", 8e6, 16e3, []step{{80e3, t0, 8 * time.Millisecond}}},
		// Steady state: 8 MB in 32 KB chunks, each sent when the last one's wait ended, takes 1 s less the burst's share.
		{"steady", 1e6, 0, []step{{1e3, t0, time.Millisecond}, {1e3, ms(1), time.Millisecond}, {1e3, ms(2), time.Millisecond}}},
		// A clock that goes back (a chunk stamped before the last) changes nothing.
		{"earlier time", 1e6, 0, []step{{1e3, ms(5), time.Millisecond}, {1e3, ms(4), 2 * time.Millisecond}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newBucket(tc.rate, tc.burst, t0)
			for i, s := range tc.steps {
				if got := b.take(s.n, s.at); got != s.wait {
					t.Errorf("step %d: take(%d, t0+%v) = %v, want %v", i, s.n, s.at.Sub(t0), got, s.wait)
				}
			}
		})
	}
}

func TestParseRate(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		bad  bool
	}{
		{"8MB", 8e6, false},
		{"8MiB", 8 << 20, false},
		{"512KiB", 512 << 10, false},
		{"100mbit", 12.5e6, false},
		{"1gbit", 125e6, false},
		{"1.5MB", 1.5e6, false},
		{"1000", 1000, false},
		{"0", 0, false},
		{"", 0, true},
		{"fast", 0, true},
		{"-1MB", 0, true},
		{"0.1B", 0, true},
		{"8 MB", 0, true},
	} {
		got, err := parseRate(tc.in)
		if (err != nil) != tc.bad || got != tc.want {
			t.Errorf("parseRate(%q) = %d, %v; want %d, error %v", tc.in, got, err, tc.want, tc.bad)
		}
	}
}
