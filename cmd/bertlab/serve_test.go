package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer that the server and the test may use at once.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

var listening = regexp.MustCompile(`listening on (http://127\.0\.0\.1:\d+)/`)

// waitListening returns the server's URL once it has printed it, or fails when done reports
// that the server ended first.
func waitListening(t *testing.T, out *syncBuffer, done <-chan error) string {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
		if m := listening.FindStringSubmatch(out.String()); m != nil {
			return m[1]
		}
		select {
		case err := <-done:
			t.Fatalf("serve ended before listening: %v\n%s", err, out.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	t.Fatalf("serve did not print its address:\n%s", out.String())
	return ""
}

func get(t *testing.T, method, url, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestServe(t *testing.T) {
	assets := t.TempDir()
	if err := os.WriteFile(filepath.Join(assets, "index.html"), []byte("<h1>bertlab</h1>"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errs syncBuffer
	stopped := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- serve(ctx, func() { close(stopped) }, []string{"--addr", "127.0.0.1:0", "--model", fixture, "--assets", assets}, &out, &errs)
	}()
	url := waitListening(t, &out, done)
	if !strings.Contains(out.String(), "model bert-tiny-random, page from "+assets) {
		t.Errorf("banner: %s", out.String())
	}
	for _, c := range []struct {
		method, path, body string
		code               int
		has                string
	}{
		{"GET", "/healthz", "", 200, `{"ok":true,"model":"bert-tiny-random"}`},
		{"GET", "/", "", 200, "<h1>bertlab</h1>"},
		{"POST", "/api/fill-mask", `{"text":"paris is the [MASK] of france","top_k":2}`, 200, `"truncated":false`},
		{"POST", "/api/tokenize", `{"text":"paris"}`, 200, `"tokens":["[CLS]","paris","[SEP]"]`},
		{"POST", "/api/attention", `{"text":"paris","layer":1}`, 200, `"num_heads":4`},
		{"POST", "/api/embed", `{"texts":["paris"]}`, 200, `"dim":64`},
		{"POST", "/api/embed", `{"texts":"paris"}`, 400, `"error"`},
		{"GET", "/missing", "", 404, `"error"`},
	} {
		code, body := get(t, c.method, url+c.path, c.body)
		if code != c.code || !strings.Contains(body, c.has) {
			t.Errorf("%s %s: %d %s, want %d with %s", c.method, c.path, code, body, c.code, c.has)
		}
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not shut down")
	}
	select {
	case <-stopped:
	default:
		t.Error("the signal handler was not released at shutdown")
	}
	if !strings.Contains(out.String(), "shutting down") {
		t.Errorf("no shutdown message: %s", out.String())
	}
	if _, err := http.Get(url + "/healthz"); err == nil {
		t.Error("the server still answers after shutdown")
	}
}

func TestServeUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{"serve", "--model", fixture, "extra"}, 2, "no arguments"},
		{[]string{"serve", "--model", ""}, 2, "no model: pass --model"},
		{[]string{"serve", "--model", fixture, "--max-concurrent", "0"}, 2, "--max-concurrent"},
		{[]string{"serve", "--model", filepath.Join(t.TempDir(), "none")}, 1, "none"},
		{[]string{"serve", "--model", fixture, "--assets", filepath.Join(t.TempDir(), "none")}, 1, "--assets"},
		{[]string{"serve", "--model", fixture, "--assets", filepath.Join(fixture, "config.json")}, 1, "not a folder"},
		{[]string{"serve", "--model", fixture, "--addr", "127.0.0.1:99999"}, 1, "99999"},
	} {
		_, stderr, code := bertlab(t, "", c.args...)
		if code != c.code || !strings.Contains(stderr, c.says) {
			t.Errorf("%v: exit %d, stderr %q; want %d saying %q", c.args, code, stderr, c.code, c.says)
		}
	}
}

// TestServeDefaultModel: without --model, serve takes the first model folder under
// ASSETS/models, as `make run` does, and says which.
func TestServeDefaultModel(t *testing.T) {
	t.Setenv("BERTLAB_MODEL", "")
	assets := t.TempDir()
	for _, name := range []string{"b-second", "a-first"} {
		dir := filepath.Join(assets, "models", name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"config.json", "model.safetensors", "vocab.txt"} {
			b, err := os.ReadFile(filepath.Join(fixture, f))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errs syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- serve(ctx, func() {}, []string{"--addr", "127.0.0.1:0", "--assets", assets}, &out, &errs)
	}()
	url := waitListening(t, &out, done)
	want := filepath.Join(assets, "models", "a-first")
	if !strings.Contains(out.String(), "no --model: serving "+want) {
		t.Errorf("serve should say which model it serves:\n%s", out.String())
	}
	if code, body := get(t, http.MethodGet, url+"/healthz", ""); code != 200 || !strings.Contains(body, `"a-first"`) {
		t.Errorf("/healthz: %d %s", code, body)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("serve: %v", err)
	}
}
