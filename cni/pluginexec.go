package cni

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"

	"github.com/containernetworking/cni/pkg/invoke"
	"github.com/containernetworking/cni/pkg/version"
)

// pollExec runs a plugin as libcni's default (invoke.RawExec) does, the
// same stdin and environment, but waits for it differently: it reads the
// plugin's output to its end, which parks the goroutine in the runtime's
// poller, and only then reaps the process. RawExec waits in a blocking
// wait(2) while the plugin runs, and podrun runs on one P (GOMAXPROCS 1,
// procs.go): the P stays with that thread until sysmon takes it back, up
// to 10 ms later, so the plugins that diagnose starts at once ran one
// after the other (strace -f of a run: portmap's exec, its exit, then
// bridge's). A plugin that fails is run again by RawExec itself, so that
// what went wrong is said in libcni's words (and a binary being written
// is retried as libcni does); that is only on a broken network config.
type pollExec struct {
	invoke.DefaultExec // FindInPath and Decode, and RawExec for failures
}

func newPollExec() *pollExec {
	return &pollExec{invoke.DefaultExec{RawExec: &invoke.RawExec{Stderr: os.Stderr}, PluginDecoder: version.PluginDecoder{}}}
}

func (e *pollExec) ExecPlugin(ctx context.Context, pluginPath string, stdinData []byte, environ []string) ([]byte, error) {
	stdout, stderr, err := runPlugin(ctx, pluginPath, stdinData, environ)
	if err != nil {
		return e.RawExec.ExecPlugin(ctx, pluginPath, stdinData, environ)
	}
	if len(stderr) > 0 && e.RawExec.Stderr != nil {
		_, _ = e.RawExec.Stderr.Write(stderr) // informational, as RawExec has it
	}
	return stdout, nil
}

// runPlugin runs one plugin to its end and returns what it wrote.
func runPlugin(ctx context.Context, path string, stdin []byte, environ []string) (stdout, stderr []byte, err error) {
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	defer outR.Close()
	errR, errW, err := os.Pipe()
	if err != nil {
		outW.Close()
		return nil, nil, err
	}
	defer errR.Close()
	c := exec.CommandContext(ctx, path)
	c.Env = environ
	c.Stdin = bytes.NewReader(stdin)
	c.Stdout, c.Stderr = outW, errW
	err = c.Start()
	outW.Close() // the plugin holds its own copies
	errW.Close()
	if err != nil {
		return nil, nil, err
	}
	var errBuf bytes.Buffer
	errDone := make(chan struct{})
	go func() {
		_, _ = io.Copy(&errBuf, errR)
		close(errDone)
	}()
	stdout, _ = io.ReadAll(outR) // to the plugin's exit (or its closing stdout)
	<-errDone
	err = c.Wait()
	return stdout, errBuf.Bytes(), err
}
