package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// bucket is a token bucket of bytes: rate bytes a second flow in, up to
// burst held. A chunk of n bytes takes n tokens; when fewer are there it
// may still go, after the wait that the missing ones take to flow in (the
// bucket goes into debt, so a chunk larger than burst is paced, not
// refused). A zero rate is no limit.
type bucket struct {
	rate   float64 // bytes a second
	burst  float64 // bytes
	tokens float64 // may be negative: owed by chunks already let through
	last   time.Time
}

func newBucket(rate, burst int64, now time.Time) *bucket {
	return &bucket{rate: float64(rate), burst: float64(burst), tokens: float64(burst), last: now}
}

// take charges n bytes at now and says how long to wait before sending
// them: zero while the bucket holds n, else the time the debt takes to be
// paid at rate.
func (b *bucket) take(n int, now time.Time) time.Duration {
	if b.rate <= 0 {
		return 0
	}
	if now.After(b.last) {
		b.tokens = min(b.burst, b.tokens+now.Sub(b.last).Seconds()*b.rate)
		b.last = now
	}
	b.tokens -= float64(n)
	if b.tokens >= 0 {
		return 0
	}
	return time.Duration(-b.tokens / b.rate * float64(time.Second))
}

// parseRate reads a rate in bytes a second: a number with B, KB, MB, GB
// (powers of 1000), KiB, MiB, GiB (powers of 1024), or kbit, mbit, gbit
// (bits, as tc writes them); "0" is no limit.
func parseRate(s string) (int64, error) {
	units := []struct {
		suffix string
		mult   float64
	}{
		{"kbit", 1e3 / 8}, {"mbit", 1e6 / 8}, {"gbit", 1e9 / 8},
		{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30},
		{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"B", 1},
	}
	num, mult := s, 1.0
	for _, u := range units {
		if strings.HasSuffix(s, u.suffix) {
			num, mult = strings.TrimSuffix(s, u.suffix), u.mult
			break
		}
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || v < 0 || (v > 0 && v*mult < 1) {
		return 0, fmt.Errorf("rate %q: want a number of bytes a second such as 8MB, 512KiB, 64mbit or 0 (no limit)", s)
	}
	return int64(v * mult), nil
}
