//go:build js && wasm

// Command app is the bertlab page compiled to WebAssembly, as one module (assets/app.wasm) with
// two roles. On the main thread it is the vugu UI of package ui: it draws and answers clicks.
// Every number comes from the engine (wasm/engine), which is the same module started in a Web
// Worker (assets/worker.js), so that the page stays responsive while it computes. One module
// for both keeps the page's download to one Go runtime and one copy of the libraries they
// share; the main thread compiles it once and hands the compiled module to the worker.
package main

import (
	"fmt"
	"strings"
	"syscall/js"
	"time"

	"github.com/bertlab/bertlab/ui"
	"github.com/bertlab/bertlab/wasm/engine"
	"github.com/vugu/vugu"
	"github.com/vugu/vugu/domrender"
)

func main() {
	if js.Global().Get("document").IsUndefined() {
		// A worker (or Node): no page to draw, the engine's role.
		engine.Serve()
		return
	}
	renderer, err := domrender.New("#vugu_mount_point")
	if err != nil {
		fatal(err)
		return
	}
	defer renderer.Release()
	guardRenders()
	env := renderer.EventEnv()
	buildEnv, err := vugu.NewBuildEnv(env)
	if err != nil {
		fatal(err)
		return
	}

	app := &ui.App{Eng: newWorkerEngine("worker.js"), Env: env, Store: localStore{}}
	history, location := js.Global().Get("history"), js.Global().Get("location")
	app.OnRoute = func(hash string) {
		if location.Get("hash").String() != hash {
			history.Call("replaceState", nil, "", hash)
		}
	}
	app.OnDownload = download
	listen(js.Global(), "hashchange", func(js.Value) {
		r, hasText := ui.ParseRoute(location.Get("hash").String())
		go app.Do(func() { app.ApplyRoute(r, hasText) })
	})
	listen(js.Global().Get("document"), "keydown", func(e js.Value) {
		if e.Get("altKey").Bool() || e.Get("ctrlKey").Bool() || e.Get("metaKey").Bool() {
			return
		}
		// Arrow keys in the text box move the cursor, not the attention view.
		switch e.Get("target").Get("tagName").String() {
		case "TEXTAREA", "INPUT", "SELECT":
			return
		}
		key := e.Get("key").String()
		hash := location.Get("hash").String()
		switch key {
		case "ArrowLeft", "ArrowRight", "ArrowUp", "ArrowDown":
		case "[", "]", "PageUp", "PageDown":
			// They move between lessons, and only there.
			if strings.HasPrefix(hash, "#"+ui.ViewLessons) {
				e.Call("preventDefault")
				go app.Do(func() { app.Key(key) })
			}
			return
		default:
			return
		}
		// The arrows step through the attention and step views and must not scroll them away. The state is
		// behind the render lock, which a JavaScript callback must not wait for; the URL says
		// which view is shown.
		// A lesson over one of those views carries its view's class in the document.
		lessonArrows := strings.HasPrefix(hash, "#"+ui.ViewLessons) && js.Global().Get("document").Call("querySelector", "main .attview, main .stepsview, main .embview").Truthy()
		if strings.HasPrefix(hash, "#"+ui.ViewAttention) || strings.HasPrefix(hash, "#"+ui.ViewSteps) || strings.HasPrefix(hash, "#"+ui.ViewEmbeddings) || lessonArrows {
			e.Call("preventDefault")
		}
		go app.Do(func() { app.Key(key) })
	})

	// A visit without a fragment lands where the user was last, or on the first lesson.
	hash := location.Get("hash").String()
	if hash == "" || hash == "#" {
		hash = ui.Landing(app.Store)
		history.Call("replaceState", nil, "", hash)
	}
	r, hasText := ui.ParseRoute(hash)
	app.Start(r, hasText)
	root := &ui.Root{App: app}
	js.Global().Get("document").Get("body").Get("classList").Call("add", "started")
	// window.bertlabRender holds the count and the last and longest duration of the renders
	// (build and DOM sync, in ms): what the page's own work costs, for tests and for a look in
	// the console.
	stats := js.Global().Get("Object").New()
	js.Global().Set("bertlabRender", stats)
	var longest float64
	for n, ok := 1, true; ok; n, ok = n+1, renderer.EventWait() {
		start := time.Now()
		if err := renderer.Render(buildEnv.RunBuild(root)); err != nil {
			fatal(err)
			return
		}
		ms := float64(time.Since(start).Microseconds()) / 1000
		longest = max(longest, ms)
		stats.Set("count", n)
		stats.Set("last", ms)
		stats.Set("max", longest)
	}
}

// listen adds an event listener. f runs in the JavaScript callback and must not block: work
// that takes the render lock goes to a goroutine.
func listen(target js.Value, event string, f func(js.Value)) {
	target.Call("addEventListener", event, js.FuncOf(func(_ js.Value, args []js.Value) any {
		f(args[0])
		return nil
	}))
}

// download hands data to the user as a file named name (a Blob behind a clicked link).
func download(name string, data []byte) {
	u8 := js.Global().Get("Uint8Array").New(len(data))
	js.CopyBytesToJS(u8, data)
	blob := js.Global().Get("Blob").New([]any{u8}, map[string]any{"type": "application/zip"})
	url := js.Global().Get("URL").Call("createObjectURL", blob)
	a := js.Global().Get("document").Call("createElement", "a")
	a.Set("href", url)
	a.Set("download", name)
	a.Get("style").Set("display", "none")
	body := js.Global().Get("document").Get("body")
	body.Call("appendChild", a)
	a.Call("click")
	a.Call("remove")
	// The browser has read the blob once the click's download started; free it a little later.
	var revoke js.Func
	revoke = js.FuncOf(func(js.Value, []js.Value) any {
		js.Global().Get("URL").Call("revokeObjectURL", url)
		revoke.Release()
		return nil
	})
	js.Global().Call("setTimeout", revoke, 60000)
}

// fatal shows an error the page cannot recover from in place of the page.
func fatal(err error) {
	msg := fmt.Sprintf("bertlab could not start: %v", err)
	js.Global().Get("console").Call("error", msg)
	if el := js.Global().Get("document").Call("getElementById", "boot"); el.Truthy() {
		el.Set("textContent", msg)
	}
}

// localStore is ui.Storage over the browser's localStorage; where it is unavailable (private
// modes, a sandboxed frame) nothing is kept.
type localStore struct{}

func (localStore) Get(key string) (v string) {
	defer func() {
		if recover() != nil {
			v = ""
		}
	}()
	ls := js.Global().Get("localStorage")
	if !ls.Truthy() {
		return ""
	}
	if s := ls.Call("getItem", key); s.Type() == js.TypeString {
		return s.String()
	}
	return ""
}

func (localStore) Set(key, value string) {
	defer func() { recover() }() // a full or refused storage keeps nothing
	if ls := js.Global().Get("localStorage"); ls.Truthy() {
		ls.Call("setItem", key, value)
	}
}
