package runner

import "time"

// SetJobBackOff shortens the Job controller's back-off for a test; the
// returned func restores it.
func SetJobBackOff(initial, maxWait time.Duration) (restore func()) {
	i, m := jobPodFailureBackOff, maxJobPodFailureBackOff
	jobPodFailureBackOff, maxJobPodFailureBackOff = initial, maxWait
	return func() { jobPodFailureBackOff, maxJobPodFailureBackOff = i, m }
}

// SetSafetyPollInterval changes how often the observer lists while events
// stream, for a test that counts calls; the returned func restores it.
func SetSafetyPollInterval(d time.Duration) (restore func()) {
	old := safetyPollInterval
	safetyPollInterval = d
	return func() { safetyPollInterval = old }
}

// PullHeadStart is how long an ahead pull is under way before the next
// one in the plan is sent.
const PullHeadStart = pullHeadStart
