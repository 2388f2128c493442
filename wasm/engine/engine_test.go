//go:build js && wasm

package engine

import (
	"strings"
	"syscall/js"
	"testing"
)

// TestJSFuncAnswers checks what every engine function returns to JavaScript: the handler's
// value as JSON, its error as {"error": ...}, and a panic as an error instead of the end of
// the module.
func TestJSFuncAnswers(t *testing.T) {
	for _, tc := range []struct {
		name string
		h    func([]js.Value) (any, error)
		want string
	}{
		{"value", func(args []js.Value) (any, error) { return map[string]int{"n": args[0].Int()}, nil }, `{"n":7}`},
		{"error", func([]js.Value) (any, error) { return nil, errString("no model loaded") }, `{"error":"no model loaded"}`},
		{"panic", func(args []js.Value) (any, error) { return args[5].Int(), nil }, `{"error":"internal error: runtime error: index out of range [5] with length 1"}`},
		{"js panic", func(args []js.Value) (any, error) { return args[0].Get("x").Int(), nil }, `{"error":"internal error: syscall/js: call of Value.Get on number"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := jsFunc(tc.h)
			defer f.Release()
			got := f.Invoke(7)
			if got.Type() != js.TypeString || got.String() != tc.want {
				t.Errorf("got %v, want %s", got, tc.want)
			}
		})
	}
}

type errString string

func (e errString) Error() string { return string(e) }

// TestBytesOf checks load's reading of one field: absent, a string, a Uint8Array, and the
// wrong types, which must be errors that name the field (not panics).
func TestBytesOf(t *testing.T) {
	u8 := js.Global().Get("Uint8Array").New(3)
	js.CopyBytesToJS(u8, []byte{1, 2, 3})
	obj := js.Global().Get("Object").New()
	obj.Set("str", "abc")
	obj.Set("u8", u8)
	obj.Set("num", 5)
	obj.Set("bool", true)
	obj.Set("plain", js.Global().Get("Object").New())
	for _, tc := range []struct {
		field, want, err string
	}{
		{"missing", "", ""},
		{"str", "abc", ""},
		{"u8", "\x01\x02\x03", ""},
		{"num", "", "load: num must be a string or a Uint8Array, not a number"},
		{"bool", "", "load: bool must be a string or a Uint8Array, not a boolean"},
		{"plain", "", "load: plain must be a string or a Uint8Array"},
	} {
		b, err := bytesOf(obj, tc.field)
		if tc.err != "" {
			if err == nil || !strings.HasPrefix(err.Error(), tc.err) {
				t.Errorf("%s: err %v, want %q", tc.field, err, tc.err)
			}
			continue
		}
		if err != nil || string(b) != tc.want {
			t.Errorf("%s: %q, %v; want %q", tc.field, b, err, tc.want)
		}
	}
}
