// Package e2e builds the Cloudflare Worker (wasm/worker), runs it locally and offline with
// wrangler dev (workerd) and checks, from a native Go test, that every route answers as the
// native handler does. It also measures the Worker's latency and CPU time per request.
package e2e
