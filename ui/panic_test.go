package ui

import (
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bertlab/bertlab/core/pipeline"
)

// lockEnv is vugu.EventEnv as the browser's renderer provides it, without a DOM: a lock, and a
// count of the renders asked for. With an Env the App works as in the page: the engine is
// called from goroutines.
type lockEnv struct {
	sync.RWMutex
	renders atomic.Int64
}

func (e *lockEnv) UnlockOnly()   { e.Unlock() }
func (e *lockEnv) UnlockRender() { e.renders.Add(1); e.Unlock() }

// panicky is the native engine whose FillMask panics the first time it is called.
type panicky struct {
	*nativeEngine
	panicked atomic.Bool
}

func (e *panicky) FillMask(text, pair string, topK int) (*pipeline.FillMaskResult, error) {
	if e.panicked.CompareAndSwap(false, true) {
		var p []pipeline.MaskResult
		_ = p[3] // index out of range
	}
	return e.nativeEngine.FillMask(text, pair, topK)
}

// settle waits until the App has no request in flight and returns what cond says then.
func settle(t *testing.T, env *lockEnv, a *App, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		env.Lock()
		ok := !a.Busy() && cond()
		env.Unlock()
		if ok {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("%s: not within 30 s", what)
}

// TestPanicKeepsPage: a panic while the page waits for the engine must not end the page: the
// page shows it as an error, and the next click works.
func TestPanicKeepsPage(t *testing.T) {
	eng := &panicky{nativeEngine: newNativeEngine(t)}
	env := &lockEnv{}
	a := &App{Eng: eng, Env: env}
	env.Lock()
	a.Start(ParseRoute("#mask?text=The%20unbelievably%20good%20cat.&masks=1"))
	env.Unlock()
	settle(t, env, a, "the start, with the panicking FillMask", func() bool { return a.Err != "" })
	env.Lock()
	if !strings.HasPrefix(a.Err, "internal error: runtime error: index out of range") {
		t.Errorf("the page should show the panic as an internal error, shows %q", a.Err)
	}
	if !eng.panicked.Load() || len(a.Preds) != 0 {
		t.Errorf("panicked %v, predictions %v", eng.panicked.Load(), a.Preds)
	}
	a.ToggleMask(3) // "cat": the next click
	env.Unlock()
	settle(t, env, a, "predictions after the panic", func() bool { return len(a.Preds) == 2 })
	env.Lock()
	defer env.Unlock()
	want, err := eng.nativeEngine.FillMask("The [MASK] good [MASK].", "", DefaultTopK)
	if err != nil {
		t.Fatal(err)
	}
	if a.Err != "" || a.Preds[1][0] != want.Masks[0].Predictions[0] || a.Preds[3][0] != want.Masks[1].Predictions[0] {
		t.Errorf("after the panic: err %q, predictions %+v, want %+v", a.Err, a.Preds, want.Masks)
	}
	if env.renders.Load() == 0 {
		t.Error("the App asked for no render")
	}
}
