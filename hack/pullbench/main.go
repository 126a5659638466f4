// Command pullbench times CRI PullImage of a set of images, one at a time
// and a few at once (issue 18: the limit of podrun's pulls ahead,
// docs/images.md). Before each trial it removes the images from the
// runtime, so that every trial downloads and unpacks them all; it removes
// them again at the end. It speaks CRI only, as podrun does.
//
//	go run ./hack/pullbench -images A,B,C -limits 1,2,3 -rounds 3
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/podrun/podrun/cri"
)

func main() {
	endpoint := flag.String("endpoint", os.Getenv("CONTAINER_RUNTIME_ENDPOINT"), "CRI endpoint")
	images := flag.String("images", "", "images to pull, comma-separated")
	limits := flag.String("limits", "1,2,3", "how many pulls at once, comma-separated")
	rounds := flag.Int("rounds", 3, "trials of each limit")
	flag.Parse()
	if err := run(*endpoint, strings.Split(*images, ","), *limits, *rounds); err != nil {
		fmt.Fprintln(os.Stderr, "pullbench:", err)
		os.Exit(1)
	}
}

func run(endpoint string, images []string, limitList string, rounds int) error {
	ctx := context.Background()
	rt, err := cri.Dial(ctx, endpoint, cri.WithCallTimeout(10*time.Minute))
	if err != nil {
		return err
	}
	defer rt.Close()
	remove := func() error {
		for _, img := range images {
			if err := rt.RemoveImage(ctx, img); err != nil {
				return err
			}
		}
		return nil
	}
	defer remove()
	var ls []int
	for _, l := range strings.Split(limitList, ",") {
		limit, err := strconv.Atoi(l)
		if err != nil || limit < 1 {
			return fmt.Errorf("bad limit %q", l)
		}
		ls = append(ls, limit)
	}
	// The limits take turns in each round, so that a machine whose load
	// changes meanwhile weighs on each alike.
	times := make([][]time.Duration, len(ls))
	for range rounds {
		for i, limit := range ls {
			if err := remove(); err != nil {
				return err
			}
			d, err := pullAll(ctx, rt, images, limit)
			if err != nil {
				return err
			}
			times[i] = append(times[i], d)
		}
	}
	for i, limit := range ls {
		slices.Sort(times[i])
		fmt.Printf("limit %d: median %v (of %v)\n", limit, times[i][len(times[i])/2].Round(time.Millisecond), times[i])
	}
	return nil
}

// pullAll pulls the images, limit at a time, and returns the wall time.
func pullAll(ctx context.Context, rt *cri.Client, images []string, limit int) (time.Duration, error) {
	start := time.Now()
	sem := make(chan struct{}, limit)
	errs := make([]error, len(images))
	var wg sync.WaitGroup
	for i, img := range images {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			_, errs[i] = rt.PullImage(ctx, img, nil, nil)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return 0, err
		}
	}
	return time.Since(start), nil
}
