package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/podrun/podrun/runner"
	"github.com/podrun/podrun/runner/report/junit"
)

// junitLogLines is how many of a container's last log lines its JUnit
// testcase carries.
const junitLogLines = 50

// junitReport gathers a run for its --junit report (junit.Report)
// and writes it when the run ends, however it ends; nil without --junit.
type junitReport struct {
	path string
	run  junit.Run
}

// newJUnitReport starts the report of a run with --junit, nil without. The
// report's directory must exist: a run does not go on to fail at its end
// for want of it.
func newJUnitReport(cfg runConfig) (*junitReport, error) {
	if cfg.JUnit == "" {
		return nil, nil
	}
	dir := filepath.Dir(cfg.JUnit)
	if fi, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("--junit %s: %w", cfg.JUnit, err)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("--junit %s: %s is not a directory", cfg.JUnit, dir)
	}
	return &junitReport{path: cfg.JUnit, run: junit.Run{NodeName: cfg.NodeName, Start: time.Now()}}, nil
}

func (j *junitReport) setPods(pods []*v1.Pod) {
	if j != nil {
		j.run.Pods = pods
	}
}

func (j *junitReport) setResult(res *runner.Result) {
	if j != nil {
		j.run.Result = res
	}
}

// write writes the report of a run that ended with err (what the run
// returns: an *exitError or nil) after signal sigCode (0 for none), and
// returns err, or the write's error with it: a run that succeeded but
// whose report could not be written exits 125.
func (j *junitReport) write(err error, sigCode int) error {
	if j == nil {
		return err
	}
	j.run.End, j.run.Interrupt = time.Now(), sigCode
	var ee *exitError
	if errors.As(err, &ee) {
		j.run.Err = ee.err
	} else {
		j.run.Err = err
	}
	werr := junit.WriteFile(j.path, junit.Report(j.run))
	if werr == nil {
		return err
	}
	werr = fmt.Errorf("writing the JUnit report: %w", werr)
	if ee != nil {
		return &exitError{code: ee.code, err: errors.Join(ee.err, werr)}
	}
	if err != nil {
		return podrunError(errors.Join(err, werr))
	}
	return podrunError(werr)
}
