package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
)

// httpError is an error with the status code it is answered with.
type httpError struct {
	code int
	msg  string
}

func (e *httpError) Error() string { return e.msg }

func badRequest(format string, a ...any) error {
	return &httpError{http.StatusBadRequest, fmt.Sprintf(format, a...)}
}

// writeErr answers err as JSON: its own status for an *httpError, 400 for any other (the engine's
// errors are about the input it was given). A 500's details go to the log, not to the client.
func writeErr(w http.ResponseWriter, err error) {
	var he *httpError
	if !errors.As(err, &he) {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	msg := he.msg
	if he.code == http.StatusInternalServerError {
		msg = "internal error"
	}
	if he.code == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", "1")
	}
	writeError(w, he.code, msg)
}

func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, map[string]string{"error": msg})
}

func methodNotAllowed(w http.ResponseWriter, allow string) {
	w.Header().Set("Allow", allow)
	writeError(w, http.StatusMethodNotAllowed, "method not allowed; use "+allow)
}

// writeJSON answers v as one JSON document. When v cannot be encoded it answers a 500 instead and
// returns the reason.
func writeJSON(w http.ResponseWriter, code int, v any) error {
	var buf bytes.Buffer
	// The encoder's defaults, as `bertlab fill-mask --json` prints: the same bytes for the same answer.
	err := json.NewEncoder(&buf).Encode(v)
	if err != nil {
		// Only the engine's numbers can fail to encode (a NaN from a broken checkpoint).
		code = http.StatusInternalServerError
		buf.Reset()
		buf.WriteString(`{"error":"internal error"}` + "\n")
	}
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(buf.Len()))
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	w.Write(buf.Bytes())
	return err
}

// readBody reads at most limit bytes of the request body: 413 beyond.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	tooLarge := &httpError{http.StatusRequestEntityTooLarge, fmt.Sprintf("request body larger than %d bytes", limit)}
	if r.ContentLength > limit {
		return nil, tooLarge
	}
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, tooLarge
		}
		return nil, badRequest("reading the request body: %v", err)
	}
	return b, nil
}

// decode parses body as exactly one JSON object into v; unknown fields are errors, so that a
// misspelt option ("topk") is not silently ignored.
func decode(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if errors.Is(err, io.EOF) {
			return badRequest("empty body: send a JSON object")
		}
		return badRequest("bad JSON body: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return badRequest("bad JSON body: trailing data after the JSON object")
	}
	return nil
}
