//go:build js && wasm

package main

import "syscall/js"

// renderGuardJS keeps DOM events that the browser fires in the middle of a render away from the
// renderer until the render is over.
//
// vugu's renderer holds its lock while it writes the DOM (window.vuguRender), and its event
// handler waits for the same lock. Chrome fires some events synchronously from a DOM change: a
// focused textarea that is removed or replaced gets "blur" and, when it was edited, "change"
// (vugu/vugu#229). Passed on at once, such an event waits for a lock that its own goroutine
// holds: the Go program stops with "all goroutines are asleep - deadlock!" and the page is dead.
// Here the event's data is copied and handed to the renderer just after, on a timer, if its
// element is still in the document (vugu panics on an event whose element the render removed;
// that element's handlers are gone, and so is what the event was about). window.bertlabDeferred
// counts the deferred events, window.bertlabDropped those of removed elements.
const renderGuardJS = `(function () {
	const state = window.vuguState, render = window.vuguRender, deliver = state.eventHandlerFunc;
	let depth = 0;
	window.bertlabDeferred = 0;
	window.bertlabDropped = 0;
	window.vuguRender = function () {
		depth++;
		try { return render.apply(this, arguments); } finally { depth--; }
	};
	state.eventHandlerFunc = function (buf) {
		if (depth === 0) { return deliver.call(null, buf); }
		const ev = state.activeEvent, el = ev && ev.currentTarget, data = buf.slice();
		setTimeout(function () {
			if (el && el.isConnected) { window.bertlabDeferred++; deliver.call(null, data); }
			else { window.bertlabDropped++; }
		}, 0);
	};
})();`

// guardRenders installs renderGuardJS; it runs once, after domrender.New.
func guardRenders() {
	js.Global().Call("eval", renderGuardJS)
}
