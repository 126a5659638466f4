// Package jobindexes is the Job API's notation for sets of completion
// indexes ("0,3-5,7"): the format of a success policy's succeededIndexes
// and of a Job's status.completedIndexes and status.failedIndexes. The
// sources' validation and the runner's Job controller both read it, so
// it sits beside the spec, as sources/podresources does.
package jobindexes

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Parse reads a list of indexes below completions, as the API server's
// validateIndexesFormat does: comma-separated intervals, each an index or
// two joined by '-', strictly increasing. Its errors are the API
// server's. The empty string is the empty set.
func Parse(s string, completions int32) ([]int, error) {
	if s == "" {
		return nil, nil
	}
	var out []int
	last := -1
	for _, part := range strings.Split(s, ",") {
		x, y, err := interval(part, completions)
		if err != nil {
			return nil, err
		}
		if last >= 0 && last >= x {
			return nil, fmt.Errorf("non-increasing order, previous: %d, current: %d", last, x)
		}
		for i := x; i <= y; i++ {
			out = append(out, i)
		}
		last = y
	}
	return out, nil
}

func interval(s string, completions int32) (int, int, error) {
	limits := strings.Split(s, "-")
	if len(limits) > 2 {
		return 0, 0, fmt.Errorf("the fragment %q violates the requirement that an index interval can have at most two parts separated by '-'", s)
	}
	x, err := strconv.Atoi(limits[0])
	if err != nil {
		return 0, 0, fmt.Errorf("cannot convert string to integer for index: %q", limits[0])
	}
	if x >= int(completions) {
		return 0, 0, fmt.Errorf("too large index: %q", limits[0])
	}
	if len(limits) == 1 {
		return x, x, nil
	}
	y, err := strconv.Atoi(limits[1])
	if err != nil {
		return 0, 0, fmt.Errorf("cannot convert string to integer for index: %q", limits[1])
	}
	if y >= int(completions) {
		return 0, 0, fmt.Errorf("too large index: %q", limits[1])
	}
	if x >= y {
		return 0, 0, fmt.Errorf("non-increasing order, previous: %d, current: %d", x, y)
	}
	return x, y, nil
}

// Format writes a set of indexes as the Job controller writes
// status.completedIndexes: sorted, runs of consecutive indexes as
// "first-last", two consecutive ones as "1,2", joined by commas
// (orderedIntervals.String).
func Format(indexes []int) string {
	ix := slices.Clone(indexes)
	slices.Sort(ix)
	ix = slices.Compact(ix)
	var b strings.Builder
	for i := 0; i < len(ix); {
		j := i
		for j+1 < len(ix) && ix[j+1] == ix[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(ix[i]))
		if j > i {
			sep := byte('-')
			if j == i+1 {
				sep = ','
			}
			b.WriteByte(sep)
			b.WriteString(strconv.Itoa(ix[j]))
		}
		i = j + 1
	}
	return b.String()
}
