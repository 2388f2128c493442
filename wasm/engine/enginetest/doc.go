// Package enginetest runs the WebAssembly engine (wasm/engine, in the page's module wasm/app)
// in Node from a native test and compares its answers with the native engine's.
package enginetest
