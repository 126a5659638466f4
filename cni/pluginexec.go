package cni

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/containernetworking/cni/pkg/invoke"
	"github.com/containernetworking/cni/pkg/types"
	"github.com/containernetworking/cni/pkg/version"
)

// pollExec runs a plugin as libcni's default (invoke.RawExec) does: the
// same stdin, environment, retries on "text file busy", errors and
// stderr. It differs in how it waits: it reads the plugin's output to its
// end, which parks the goroutine in the runtime's poller, and only then
// reaps the process. RawExec waits in a blocking wait(2) while the plugin
// runs, and podrun runs on one P (GOMAXPROCS 1, procs.go): the P stays
// with that thread until sysmon takes it back, up to 10 ms later, so the
// plugins that diagnose starts at once ran one after the other (strace
// -f of a run: portmap's exec, its exit, then bridge's exec).
type pollExec struct {
	invoke.DefaultExec // FindInPath and Decode
}

func newPollExec() *pollExec {
	return &pollExec{invoke.DefaultExec{RawExec: &invoke.RawExec{Stderr: os.Stderr}, PluginDecoder: version.PluginDecoder{}}}
}

// textBusyRetries and textBusyPause are RawExec's: a plugin binary being
// written is tried again a second later, five times.
const (
	textBusyRetries = 5
	textBusyPause   = time.Second
)

func (e *pollExec) ExecPlugin(ctx context.Context, pluginPath string, stdinData []byte, environ []string) ([]byte, error) {
	for i := 0; ; i++ {
		stdout, stderr, err := runPlugin(ctx, pluginPath, stdinData, environ)
		if err != nil && strings.Contains(err.Error(), "text file busy") && i < textBusyRetries {
			time.Sleep(textBusyPause)
			continue
		}
		if err != nil {
			return nil, pluginErr(err, stdout, stderr)
		}
		if len(stderr) > 0 && e.RawExec != nil && e.RawExec.Stderr != nil {
			_, _ = e.RawExec.Stderr.Write(stderr) // informational, as RawExec
		}
		return stdout, nil
	}
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

// pluginErr is RawExec's error for a plugin that failed: the CNI error it
// printed, or what it wrote to stderr.
func pluginErr(err error, stdout, stderr []byte) error {
	emsg := types.Error{}
	if len(stdout) == 0 {
		if len(stderr) == 0 {
			emsg.Msg = fmt.Sprintf("netplugin failed with no error message: %v", err)
		} else {
			emsg.Msg = fmt.Sprintf("netplugin failed: %q: %v", string(stderr), err)
		}
	} else if perr := json.Unmarshal(stdout, &emsg); perr != nil {
		emsg.Msg = fmt.Sprintf("netplugin failed but error parsing its diagnostic message %q: %v", string(stdout), perr)
	}
	return &emsg
}
