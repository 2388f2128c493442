package ui

import (
	"fmt"

	"github.com/vugu/vugu/js"
)

// downloadPNG saves the first canvas that matches selector, as drawn, as the PNG file name, through
// one hidden link that every view reuses: it keeps the last export's blob URL (tests read it back).
func downloadPNG(selector, name string) {
	canvas := js.Global().Get("document").Call("querySelector", selector)
	if canvas.IsUndefined() || canvas.IsNull() {
		return
	}
	var done js.Func
	done = js.FuncOf(func(_ js.Value, args []js.Value) any {
		defer done.Release()
		// A panic in a browser callback would end the page's program.
		defer func() {
			if r := recover(); r != nil {
				js.Global().Get("console").Call("error", fmt.Sprint("export PNG: ", r))
			}
		}()
		if len(args) == 0 || args[0].IsNull() {
			return nil
		}
		doc := js.Global().Get("document")
		a := doc.Call("querySelector", "a[data-role=\"export-link\"]")
		if a.IsNull() {
			a = doc.Call("createElement", "a")
			a.Call("setAttribute", "data-role", "export-link")
			a.Get("style").Set("display", "none")
			doc.Get("body").Call("appendChild", a)
		} else if old := a.Get("href").String(); old != "" {
			js.Global().Get("URL").Call("revokeObjectURL", old)
		}
		// A string: vugu's js.Value cannot be passed to Set.
		a.Set("href", js.Global().Get("URL").Call("createObjectURL", args[0]).String())
		a.Set("download", name)
		a.Call("click")
		return nil
	})
	canvas.Call("toBlob", done, "image/png")
}
