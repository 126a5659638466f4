package sources

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
)

const (
	// maxManifestSize caps a file, stdin or HTTP body, as the kubelet's
	// maxConfigLength does.
	maxManifestSize = 10 << 20
	// httpTimeout is the kubelet's HTTP source client timeout.
	httpTimeout = 10 * time.Second
)

// Load reads every -f spec in order and returns everything decoded, or
// an error: all problems found, joined, one *Error each.
//
// A spec is:
//   - "-": Options.Stdin (at most once);
//   - an http:// or https:// URL: one GET with Options.HTTPHeaders; any
//     status but 200, an empty body or a body over 10 MiB is an error;
//   - a directory: like the kubelet's static-pod directory, every regular
//     file (symlinks followed) whose name does not start with "." in
//     lexical order; subdirectories are not entered;
//   - anything else: a file (a named pipe such as <(cmd) works too).
//
// Reading stdin or a named pipe stops when ctx is cancelled (see pipe.go).
// Files are capped at 10 MiB. A file, stdin or body that holds no object
// is an error; an empty directory is not. Two objects of one kind with
// the same namespace and name are an error naming both.
func Load(ctx context.Context, specs []string, opts Options) (*Set, error) {
	set := &Set{}
	var errs []error
	stdinUsed := false
	for _, spec := range specs {
		if err := ctx.Err(); err != nil {
			return nil, &Error{Origin: Origin{Source: displayName(spec)}, Err: err}
		}
		if spec == "-" {
			if stdinUsed {
				errs = append(errs, &Error{Origin: Origin{Source: "stdin"}, Msg: "stdin given more than once"})
				continue
			}
			stdinUsed = true
		}
		inputs, err := read(ctx, spec, opts)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, in := range inputs {
			s, derrs := decodeSource(sourceFor(in.name), in.data, opts)
			errs = append(errs, derrs...)
			if len(derrs) == 0 && s.len() == 0 {
				errs = append(errs, &Error{Origin: Origin{Source: displayName(in.name)}, Msg: "no objects found"})
			}
			set.append(s)
		}
	}
	errs = append(errs, checkDuplicates(set)...)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return set, nil
}

// input is the content of one source: a file, stdin or a URL.
type input struct {
	name string // as passed to sourceFor
	data []byte
}

func displayName(spec string) string {
	if spec == "-" {
		return "stdin"
	}
	return spec
}

// read returns the inputs of one spec.
func read(ctx context.Context, spec string, opts Options) ([]input, error) {
	fail := func(msg string, err error) ([]input, error) {
		return nil, &Error{Origin: Origin{Source: displayName(spec)}, Msg: msg, Err: err}
	}
	switch {
	case spec == "-":
		if opts.Stdin == nil {
			return fail("no stdin to read", nil)
		}
		data, err := readStdin(ctx, opts.Stdin)
		if err != nil {
			return fail("reading", err)
		}
		return []input{{spec, data}}, nil
	case isURL(spec):
		data, err := fetch(ctx, spec, opts)
		if err != nil {
			return fail("", err)
		}
		return []input{{spec, data}}, nil
	}
	fi, err := os.Stat(spec)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the source already names the path
		}
		if errors.Is(err, fs.ErrNotExist) {
			return fail("", fs.ErrNotExist)
		}
		return fail("", err)
	}
	if !fi.IsDir() {
		data, err := readFile(ctx, spec)
		if err != nil {
			if ctx.Err() != nil {
				return fail("reading", err)
			}
			return fail("", err)
		}
		return []input{{spec, data}}, nil
	}
	return readDir(ctx, spec)
}

// readDir reads a directory the way the kubelet's file source does
// (pkg/kubelet/config/file.go): names starting with "." are skipped,
// entries are sorted lexically, subdirectories and other non-regular
// files are skipped.
func readDir(ctx context.Context, dir string) ([]input, error) {
	entries, err := os.ReadDir(dir) // sorted by name
	if err != nil {
		return nil, &Error{Origin: Origin{Source: dir}, Err: err}
	}
	var inputs []input
	var errs []error
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		name := filepath.Join(dir, e.Name())
		fi, err := os.Stat(name)
		if err != nil {
			errs = append(errs, &Error{Origin: Origin{Source: name}, Err: err})
			continue
		}
		if !fi.Mode().IsRegular() {
			continue
		}
		data, err := readFile(ctx, name)
		if err != nil {
			errs = append(errs, &Error{Origin: Origin{Source: name}, Err: err})
			continue
		}
		inputs = append(inputs, input{name, data})
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return inputs, nil
}

// errTooLarge is returned for input over maxManifestSize.
var errTooLarge = fmt.Errorf("larger than the %d MiB limit", maxManifestSize>>20)

func readCapped(r io.Reader) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxManifestSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxManifestSize {
		return nil, errTooLarge
	}
	return data, nil
}

// fetch GETs a manifest URL like the kubelet's HTTP source
// (pkg/kubelet/config/http.go).
func fetch(ctx context.Context, url string, opts Options) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	for k, vs := range opts.HTTPHeaders {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	client := opts.HTTPClient
	if client == nil {
		client = &http.Client{Timeout: httpTimeout}
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("unexpected HTTP status %s", resp.Status)
	}
	data, err := readCapped(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("reading body: %w", err)
	}
	if len(data) == 0 {
		return nil, errors.New("zero-length data received")
	}
	return data, nil
}
