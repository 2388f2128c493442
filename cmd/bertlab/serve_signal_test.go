//go:build unix

package main

import (
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestServeStopsOnSIGTERM sends the test process a real SIGTERM while `bertlab serve` runs: the
// command catches it, shuts down and exits 0.
func TestServeStopsOnSIGTERM(t *testing.T) {
	var out, errs syncBuffer
	done := make(chan error, 1)
	codec := make(chan int, 1)
	go func() {
		codec <- run([]string{"serve", "--addr", "127.0.0.1:0", "--model", fixture, "--assets", ""}, strings.NewReader(""), &out, &errs)
		done <- nil
	}()
	url := waitListening(t, &out, done)
	if code, body := get(t, "GET", url+"/healthz", ""); code != 200 {
		t.Fatalf("%d %s", code, body)
	}
	// The handler is installed before the address is printed, so the signal cannot kill the test.
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-codec:
		if code != 0 {
			t.Errorf("exit %d: %s", code, errs.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not stop on SIGTERM")
	}
	if !strings.Contains(out.String(), "API only") || !strings.Contains(out.String(), "shutting down") {
		t.Errorf("output: %s", out.String())
	}
}
