package ui

import (
	"fmt"

	"github.com/vugu/vugu/js"
)

// whiteCanvas sizes canvas to w×h CSS pixels, backed by devicePixelRatio device pixels each
// way (sharp on high-density screens), and returns its 2-D context scaled to CSS pixels and
// painted white: not transparent, so an exported PNG reads on any background.
func whiteCanvas(canvas js.Value, w, h float64) js.Value {
	dpr := js.Global().Get("devicePixelRatio").Float()
	if dpr < 1 {
		dpr = 1
	}
	canvas.Set("width", int(w*dpr))
	canvas.Set("height", int(h*dpr))
	canvas.Get("style").Set("width", fmt.Sprintf("%dpx", int(w)))
	canvas.Get("style").Set("height", fmt.Sprintf("%dpx", int(h)))
	ctx := canvas.Call("getContext", "2d")
	ctx.Call("setTransform", dpr, 0, 0, dpr, 0, 0)
	ctx.Set("fillStyle", "#ffffff")
	ctx.Call("fillRect", 0, 0, w, h)
	return ctx
}
