package runner

import "time"

// SetJobBackOff shortens the Job controller's back-off for a test; the
// returned func restores it.
func SetJobBackOff(initial, maxWait time.Duration) (restore func()) {
	i, m := jobPodFailureBackOff, maxJobPodFailureBackOff
	jobPodFailureBackOff, maxJobPodFailureBackOff = initial, maxWait
	return func() { jobPodFailureBackOff, maxJobPodFailureBackOff = i, m }
}
