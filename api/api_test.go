package api

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/engine"
	"github.com/bertlab/bertlab/core/hf"
	"github.com/bertlab/bertlab/core/pipeline"
	"github.com/bertlab/bertlab/core/tokenizer"
)

// fixture is the random-weight Tiny BERT of the reference fixtures (32 positions, 2 layers,
// 4 heads, hidden 64, 2,000 tokens).
const fixture = "../core/bert/testdata/bert-tiny-random"

// testModel is the fixture model: the handler's engine, and the model and tokenizer the tests
// ask directly for the answers to expect.
type testModel struct {
	Model     *bert.Model
	Tokenizer *tokenizer.Tokenizer
	e         *engine.Engine
}

var loadFixture = sync.OnceValues(func() (testModel, error) {
	f, err := hf.LoadFolder(fixture)
	if err != nil {
		return testModel{}, err
	}
	e, err := engine.New("bert-tiny-random", f.Model, f.Tokenizer)
	return testModel{Model: f.Model, Tokenizer: f.Tokenizer, e: e}, err
})

func fixtureModel(t testing.TB) testModel {
	t.Helper()
	m, err := loadFixture()
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// logBuffer collects what the handler logs.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func newHandler(t testing.TB, opt Options) (*Handler, *logBuffer) {
	t.Helper()
	logs := &logBuffer{}
	if opt.Log == nil {
		opt.Log = log.New(logs, "", 0)
	}
	h, err := New(fixtureModel(t).e, opt)
	if err != nil {
		t.Fatal(err)
	}
	return h, logs
}

// do sends one request to h and returns the status and the body.
func do(t testing.TB, h http.Handler, method, path, body string) (int, []byte, http.Header) {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, path, r)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code, rec.Body.Bytes(), rec.Header()
}

func decodeAs[T any](t testing.TB, body []byte) T {
	t.Helper()
	var v T
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("answer %s: %v", body, err)
	}
	return v
}

func TestHealthz(t *testing.T) {
	h, _ := newHandler(t, Options{})
	for _, method := range []string{http.MethodGet, http.MethodHead} {
		code, body, hdr := do(t, h, method, "/healthz", "")
		if code != http.StatusOK {
			t.Fatalf("%s /healthz: %d %s", method, code, body)
		}
		if ct := hdr.Get("Content-Type"); ct != "application/json; charset=utf-8" {
			t.Errorf("Content-Type %q", ct)
		}
		if method == http.MethodGet && string(body) != `{"ok":true,"model":"bert-tiny-random"}`+"\n" {
			t.Errorf("GET /healthz answered %s", body)
		}
	}
}

func TestFillMaskIsTheCommandsJSON(t *testing.T) {
	h, _ := newHandler(t, Options{})
	m := fixtureModel(t)
	pair := "paris france"
	long := "paris is the [MASK] of france" + strings.Repeat(" london", 40)
	for _, tc := range []struct {
		name, body string
		text       string
		pair       *string
		k          int
		truncated  bool
	}{
		{"default top_k", `{"text":"no [MASK] happiness [MASK] sound"}`, "no [MASK] happiness [MASK] sound", nil, 5, false},
		{"top_k 1", `{"text":"paris is the [MASK] of france","top_k":1}`, "paris is the [MASK] of france", nil, 1, false},
		{"top_k 100", `{"text":"paris is the [MASK] of france","top_k":100}`, "paris is the [MASK] of france", nil, 100, false},
		{"pair", `{"text":"the [MASK] of france","pair":"paris france","top_k":3}`, "the [MASK] of france", &pair, 3, false},
		{"mask in the pair", `{"text":"the capital","pair":"[MASK] france"}`, "the capital", ptr("[MASK] france"), 5, false},
		{"truncated", fmt.Sprintf(`{"text":%q}`, long), long, nil, 5, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body, _ := do(t, h, http.MethodPost, "/api/fill-mask", tc.body)
			if code != http.StatusOK {
				t.Fatalf("%d %s", code, body)
			}
			want, err := pipeline.FillMask(m.Model, m.Tokenizer, tc.text, tc.pair, tc.k)
			if err != nil {
				t.Fatal(err)
			}
			// What `bertlab fill-mask --json` prints, with the flag inserted before the closing brace.
			var cmd bytes.Buffer
			if err := json.NewEncoder(&cmd).Encode(want); err != nil {
				t.Fatal(err)
			}
			wantBody := strings.TrimSuffix(cmd.String(), "}\n") + fmt.Sprintf(`,"truncated":%v}`, tc.truncated) + "\n"
			if string(body) != wantBody {
				t.Errorf("answer\n%s\nwant\n%s", body, wantBody)
			}
			got := decodeAs[FillMaskResponse](t, body)
			for _, mk := range got.Masks {
				if len(mk.Predictions) != tc.k {
					t.Errorf("mask at %d: %d predictions, want %d", mk.Position, len(mk.Predictions), tc.k)
				}
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

func TestTokenize(t *testing.T) {
	h, _ := newHandler(t, Options{})
	m := fixtureModel(t)
	long := strings.Repeat("paris ", 50)
	for _, tc := range []struct {
		body string
		text string
		pair *string
	}{
		{`{"text":"Paris is the capital of France."}`, "Paris is the capital of France.", nil},
		{`{"text":"Héllo wörld","pair":"naïve café"}`, "Héllo wörld", ptr("naïve café")},
		{`{"text":""}`, "", nil},
		{fmt.Sprintf(`{"text":%q}`, long), long, nil},
	} {
		code, body, _ := do(t, h, http.MethodPost, "/api/tokenize", tc.body)
		if code != http.StatusOK {
			t.Fatalf("%s: %d %s", tc.body, code, body)
		}
		got := decodeAs[TokenizeResponse](t, body)
		want, err := pipeline.Encode(m.Tokenizer, tc.text, tc.pair, m.Model.Config.MaxPositionEmbeddings)
		if err != nil {
			t.Fatal(err)
		}
		wantResp := TokenizeResponse{InputIDs: want.IDs, Tokens: want.Tokens, TokenTypeIDs: want.TypeIDs, Offsets: want.CharOffsets, Truncated: want.Truncated}
		if !jsonEqual(t, got, wantResp) {
			t.Errorf("%s: answer %s, want %+v", tc.body, body, wantResp)
		}
		if n := len(got.InputIDs); n > 32 || len(got.Tokens) != n || len(got.TokenTypeIDs) != n || len(got.Offsets) != n {
			t.Errorf("%s: lengths %d %d %d %d", tc.body, n, len(got.Tokens), len(got.TokenTypeIDs), len(got.Offsets))
		}
		if got.Truncated != (tc.text == long) {
			t.Errorf("%s: truncated %v", tc.body, got.Truncated)
		}
	}
	// Offsets are in characters, not bytes: "wörld" is 5 characters at 6..11.
	_, body, _ := do(t, h, http.MethodPost, "/api/tokenize", `{"text":"Héllo wörld"}`)
	if got := decodeAs[TokenizeResponse](t, body); got.Offsets[len(got.Offsets)-2] != [2]int{6, 11} {
		t.Errorf("offsets %v: want the last word at [6, 11] (characters)", got.Offsets)
	}
}

func jsonEqual(t testing.TB, a, b any) bool {
	t.Helper()
	ja, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	jb, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Equal(ja, jb)
}

func TestAttention(t *testing.T) {
	h, _ := newHandler(t, Options{})
	m := fixtureModel(t)
	for layer := 0; layer < 2; layer++ {
		code, body, _ := do(t, h, http.MethodPost, "/api/attention", fmt.Sprintf(`{"text":"the cat sat","pair":"on the mat","layer":%d}`, layer))
		if code != http.StatusOK {
			t.Fatalf("%d %s", code, body)
		}
		got := decodeAs[pipeline.AttentionResult](t, body)
		want, err := pipeline.Attention(m.Model, m.Tokenizer, "the cat sat", ptr("on the mat"), layer)
		if err != nil {
			t.Fatal(err)
		}
		if !jsonEqual(t, got, want) {
			t.Errorf("layer %d: answer differs from pipeline.Attention", layer)
		}
		if got.Layer != layer || got.NumLayers != 2 || got.NumHeads != 4 || len(got.Attentions) != 4 {
			t.Errorf("layer %d: header %+v", layer, got)
		}
	}
	// The layer defaults to 0; a long text is cut to the 32 positions.
	code, body, _ := do(t, h, http.MethodPost, "/api/attention", fmt.Sprintf(`{"text":%q}`, strings.Repeat("cat ", 100)))
	if code != http.StatusOK {
		t.Fatalf("%d %s", code, body)
	}
	got := decodeAs[pipeline.AttentionResult](t, body)
	if got.Layer != 0 || !got.Truncated || len(got.Tokens) != 32 || len(got.Attentions[3]) != 32 || len(got.Attentions[3][31]) != 32 {
		t.Errorf("long text: layer %d truncated %v, %d tokens", got.Layer, got.Truncated, len(got.Tokens))
	}
}

func TestEmbed(t *testing.T) {
	h, _ := newHandler(t, Options{})
	m := fixtureModel(t)
	texts := []string{"paris is a city", "cats", strings.Repeat("long ", 60)}
	for _, pooling := range []string{"", "cls", "mean"} {
		req, _ := json.Marshal(map[string]any{"texts": texts, "pooling": pooling})
		if pooling == "" {
			req, _ = json.Marshal(map[string]any{"texts": texts})
		}
		code, body, _ := do(t, h, http.MethodPost, "/api/embed", string(req))
		if code != http.StatusOK {
			t.Fatalf("%d %s", code, body)
		}
		got := decodeAs[pipeline.EmbedResult](t, body)
		p, _ := pipeline.ParsePooling(pooling)
		want, err := pipeline.Embed(m.Model, m.Tokenizer, texts, p)
		if err != nil {
			t.Fatal(err)
		}
		if !jsonEqual(t, got, want) {
			t.Errorf("pooling %q: answer differs from pipeline.Embed", pooling)
		}
		if got.Pooling != p || got.Dim != 64 || len(got.Vectors) != 3 || len(got.Vectors[1]) != 64 {
			t.Errorf("pooling %q: %s %d %d", pooling, got.Pooling, got.Dim, len(got.Vectors))
		}
		if got.Truncated[0] || got.Truncated[1] || !got.Truncated[2] {
			t.Errorf("pooling %q: truncated %v", pooling, got.Truncated)
		}
	}
}

// TestErrors sends every kind of bad request to every route: each gets its status and a JSON
// {"error": ...} that says what was wrong.
func TestErrors(t *testing.T) {
	h, logs := newHandler(t, Options{MaxTexts: 4})
	big := `{"text":"` + strings.Repeat("a", DefaultMaxBodyBytes) + `"}`
	maskLate := fmt.Sprintf(`{"text":%q}`, strings.Repeat("cat ", 40)+"[MASK]")
	for _, tc := range []struct {
		method, path, body string
		code               int
		says               string
	}{
		{"GET", "/api/fill-mask", "", 405, "POST"},
		{"PUT", "/api/tokenize", `{"text":"x"}`, 405, "POST"},
		{"GET", "/api/embed", "", 405, "POST"},
		{"DELETE", "/api/attention", "", 405, "POST"},
		{"POST", "/healthz", "", 405, "GET"},
		{"POST", "/", "", 405, "GET"},
		{"GET", "/api/nope", "", 404, "/api/fill-mask"},
		{"POST", "/api/nope", "{}", 404, "no route"},
		{"POST", "/api", "{}", 404, "no route"},
		{"POST", "/api/", "{}", 404, "no route"},
		{"POST", "/api/fill-mask/", "{}", 404, "no route"},
		{"GET", "/nothing-here", "", 404, "not found"},
		{"GET", "/", "", 404, "not found"},
		{"POST", "/api/fill-mask", big, 413, "larger than 65536"},
		{"POST", "/api/embed", big, 413, "larger than"},
		{"POST", "/api/fill-mask", "", 400, "empty body"},
		{"POST", "/api/fill-mask", "{", 400, "bad JSON"},
		{"POST", "/api/fill-mask", "[1,2]", 400, "bad JSON"},
		{"POST", "/api/fill-mask", "null", 400, `missing "text"`},
		{"POST", "/api/fill-mask", `{}`, 400, `missing "text"`},
		{"POST", "/api/fill-mask", `{"text":"a [MASK]"} {}`, 400, "trailing data"},
		{"POST", "/api/fill-mask", `{"text":"a [MASK]"}x`, 400, "trailing data"},
		{"POST", "/api/fill-mask", `{"text":"a [MASK]","topk":3}`, 400, "unknown field"},
		{"POST", "/api/fill-mask", `{"text":3}`, 400, "bad JSON"},
		{"POST", "/api/fill-mask", `{"text":"a [MASK]","top_k":"5"}`, 400, "bad JSON"},
		{"POST", "/api/fill-mask", `{"text":"a [MASK]","top_k":2.5}`, 400, "bad JSON"},
		{"POST", "/api/fill-mask", `{"text":"a [MASK]","top_k":0}`, 400, "top_k 0 outside [1, 100]"},
		{"POST", "/api/fill-mask", `{"text":"a [MASK]","top_k":101}`, 400, "top_k 101"},
		{"POST", "/api/fill-mask", `{"text":"a [MASK]","top_k":-1}`, 400, "top_k -1"},
		{"POST", "/api/fill-mask", `{"text":"a [MASK]","top_k":99999999999999999999}`, 400, "bad JSON"},
		{"POST", "/api/fill-mask", `{"text":"no mask here"}`, 400, "[MASK]"},
		{"POST", "/api/fill-mask", `{"text":""}`, 400, "[MASK]"},
		{"POST", "/api/fill-mask", maskLate, 400, "falls after"},
		{"POST", "/api/fill-mask", `{"text":"a [MASK]","pair":7}`, 400, "bad JSON"},
		{"POST", "/api/tokenize", `{"pair":"x"}`, 400, `missing "text"`},
		{"POST", "/api/tokenize", `{"text":["x"]}`, 400, "bad JSON"},
		{"POST", "/api/tokenize", `{"text":"x","layer":1}`, 400, "unknown field"},
		{"POST", "/api/attention", `{"text":"x","layer":2}`, 400, "layer 2 outside [0, 1]"},
		{"POST", "/api/attention", `{"text":"x","layer":-1}`, 400, "layer -1"},
		{"POST", "/api/attention", `{"layer":0}`, 400, `missing "text"`},
		{"POST", "/api/attention", `{"text":"x","layer":"0"}`, 400, "bad JSON"},
		{"POST", "/api/embed", `{}`, 400, `missing "texts"`},
		{"POST", "/api/embed", `{"texts":[]}`, 400, `missing "texts"`},
		{"POST", "/api/embed", `{"texts":"x"}`, 400, "bad JSON"},
		{"POST", "/api/embed", `{"texts":["a","b","c","d","e"]}`, 400, "at most 4"},
		{"POST", "/api/embed", `{"texts":["a"],"pooling":"max"}`, 400, `pooling "max"`},
		{"POST", "/api/embed", `{"texts":["a"],"pooling":"CLS"}`, 400, `pooling "CLS"`},
		{"POST", "/api/embed", `{"texts":[null]}`, 200, ""},
	} {
		t.Run(tc.method+" "+tc.path+" "+trim(tc.body), func(t *testing.T) {
			code, body, hdr := do(t, h, tc.method, tc.path, tc.body)
			if code != tc.code {
				t.Fatalf("status %d, want %d: %s", code, tc.code, body)
			}
			if ct := hdr.Get("Content-Type"); ct != "application/json; charset=utf-8" {
				t.Errorf("Content-Type %q", ct)
			}
			if code == 405 && hdr.Get("Allow") == "" {
				t.Errorf("405 without Allow")
			}
			if tc.code == 200 {
				return
			}
			e := decodeAs[struct {
				Error string `json:"error"`
			}](t, body)
			if !strings.Contains(e.Error, tc.says) {
				t.Errorf("error %q does not say %q", e.Error, tc.says)
			}
		})
	}
	if s := logs.String(); s != "" {
		t.Errorf("bad requests were logged as server errors:\n%s", s)
	}
}

func trim(s string) string {
	if len(s) > 40 {
		return s[:40]
	}
	return s
}

// TestBodyTooLargeWithoutLength streams a body with no Content-Length: the limit holds as the
// body is read.
func TestBodyTooLargeWithoutLength(t *testing.T) {
	h, _ := newHandler(t, Options{MaxBodyBytes: 1000})
	srv := httptest.NewServer(h)
	defer srv.Close()
	pr, pw := io.Pipe()
	go func() {
		pw.Write([]byte(`{"text":"`))
		for i := 0; i < 100; i++ {
			pw.Write(bytes.Repeat([]byte("a"), 100))
		}
		pw.Write([]byte(`"}`))
		pw.Close()
	}()
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/api/tokenize", pr)
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(body), "larger than 1000 bytes") {
		t.Errorf("%d %s", resp.StatusCode, body)
	}
}

func TestNoMLMHead(t *testing.T) {
	m := fixtureModel(t)
	bare, err := bert.NewRandom(m.Model.Config, bert.Heads{Pooler: true}, 1)
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.New("bare", bare, m.Tokenizer)
	if err != nil {
		t.Fatal(err)
	}
	h, err := New(e, Options{Log: log.New(io.Discard, "", 0)})
	if err != nil {
		t.Fatal(err)
	}
	code, body, _ := do(t, h, http.MethodPost, "/api/fill-mask", `{"text":"a [MASK]"}`)
	if code != http.StatusNotImplemented || !strings.Contains(string(body), "no MLM head") {
		t.Errorf("%d %s", code, body)
	}
	if code, body, _ := do(t, h, http.MethodPost, "/api/embed", `{"texts":["a"]}`); code != http.StatusOK {
		t.Errorf("embed without the MLM head: %d %s", code, body)
	}
	if _, err := New(&engine.Engine{}, Options{}); err == nil {
		t.Error("New with an engine without a model: no error")
	}
}

// TestConcurrentFillMask has 8 clients hammer fill-mask over HTTP with 2 computation slots:
// every answer is complete and right.
func TestConcurrentFillMask(t *testing.T) {
	h, logs := newHandler(t, Options{MaxConcurrent: 2})
	srv := httptest.NewServer(h)
	defer srv.Close()
	m := fixtureModel(t)
	texts := []string{"paris is the [MASK] of france", "no [MASK] happiness [MASK] sound", "[MASK]"}
	want := make([]string, len(texts))
	for i, text := range texts {
		res, err := pipeline.FillMask(m.Model, m.Tokenizer, text, nil, 7)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(FillMaskResponse{res, false})
		want[i] = string(b) + "\n"
	}
	const clients, each = 8, 25
	var wg sync.WaitGroup
	errs := make(chan error, clients*each)
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				j := (c + i) % len(texts)
				body, _ := json.Marshal(map[string]any{"text": texts[j], "top_k": 7})
				resp, err := srv.Client().Post(srv.URL+"/api/fill-mask", "application/json", bytes.NewReader(body))
				if err != nil {
					errs <- err
					return
				}
				got, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil {
					errs <- err
					return
				}
				if resp.StatusCode != http.StatusOK || string(got) != want[j] {
					errs <- fmt.Errorf("client %d request %d: %d %s", c, i, resp.StatusCode, got)
					return
				}
			}
		}(c)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if len(h.sem) != 0 {
		t.Errorf("%d computation slots still taken", len(h.sem))
	}
	if s := logs.String(); s != "" {
		t.Errorf("logged:\n%s", s)
	}
}

// TestBusy takes every slot: a request then waits for one until its deadline and gets a 503.
func TestBusy(t *testing.T) {
	h, _ := newHandler(t, Options{MaxConcurrent: 1, Timeout: 50 * time.Millisecond})
	h.sem <- struct{}{}
	start := time.Now()
	code, body, hdr := do(t, h, http.MethodPost, "/api/fill-mask", `{"text":"a [MASK]"}`)
	if code != http.StatusServiceUnavailable || !strings.Contains(string(body), "busy") || hdr.Get("Retry-After") == "" {
		t.Errorf("%d %s %v", code, body, hdr)
	}
	if d := time.Since(start); d < 50*time.Millisecond {
		t.Errorf("answered after %v, before the deadline", d)
	}
	// A bad request is refused without waiting for a slot.
	if code, body, _ := do(t, h, http.MethodPost, "/api/fill-mask", `{"text":"a [MASK]","top_k":0}`); code != http.StatusBadRequest {
		t.Errorf("bad request while busy: %d %s", code, body)
	}
	<-h.sem
	if code, body, _ := do(t, h, http.MethodPost, "/api/fill-mask", `{"text":"a [MASK]"}`); code != http.StatusOK {
		t.Errorf("after the slot was freed: %d %s", code, body)
	}
}

// TestRunDeadline: a computation that outlives the deadline gets a 503, and keeps its slot
// until it ends.
func TestRunDeadline(t *testing.T) {
	h, _ := newHandler(t, Options{MaxConcurrent: 1, Timeout: time.Hour})
	release := make(chan struct{})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err := h.run(ctx, func() (any, error) { <-release; return "late", nil })
	var he *httpError
	if !errors.As(err, &he) || he.code != http.StatusServiceUnavailable || !strings.Contains(he.msg, "longer than") {
		t.Fatalf("got %v", err)
	}
	if len(h.sem) != 1 {
		t.Errorf("the running computation gave up its slot")
	}
	close(release)
	for deadline := time.Now().Add(30 * time.Second); len(h.sem) != 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the slot was not freed within 30 s of the computation's end")
		}
	}
	// A canceled request is not queued.
	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	if _, err := h.run(ctx, func() (any, error) { t.Error("ran a canceled request"); return nil, nil }); err == nil {
		t.Error("canceled request: no error")
	}
}

// TestPanics: a panic in a route or in a computation is a logged 500, never a crash, and the
// slot is freed.
func TestPanics(t *testing.T) {
	h, logs := newHandler(t, Options{MaxConcurrent: 1})
	h.routes["/api/panic-parse"] = func([]byte) (func() (any, error), error) { panic("parse boom") }
	h.routes["/api/panic-compute"] = func([]byte) (func() (any, error), error) {
		return func() (any, error) { panic("compute boom") }, nil
	}
	h.routes["/api/nan"] = func([]byte) (func() (any, error), error) {
		return func() (any, error) { return []float64{math.NaN()}, nil }, nil
	}
	for _, path := range []string{"/api/panic-parse", "/api/panic-compute", "/api/nan"} {
		code, body, _ := do(t, h, http.MethodPost, path, "{}")
		if code != http.StatusInternalServerError {
			t.Errorf("%s: %d %s", path, code, body)
		}
		e := decodeAs[struct {
			Error string `json:"error"`
		}](t, body)
		if strings.Contains(e.Error, "boom") || strings.Contains(e.Error, "goroutine") {
			t.Errorf("%s: the 500 shows internals: %q", path, e.Error)
		}
	}
	if len(h.sem) != 0 {
		t.Error("a panicking computation kept its slot")
	}
	s := logs.String()
	for _, want := range []string{"parse boom", "compute boom", "goroutine", "/api/nan: encoding the answer"} {
		if !strings.Contains(s, want) {
			t.Errorf("log lacks %q:\n%s", want, s)
		}
	}
}

func TestStatic(t *testing.T) {
	static := fstest.MapFS{
		"index.html":           {Data: []byte("<h1>bertlab</h1>")},
		"app.js":               {Data: []byte("console.log(1)")},
		"engine.wasm":          {Data: []byte("\x00asm")},
		"models/tiny/x.json":   {Data: []byte("{}")},
		"docs/index.html":      {Data: []byte("docs")},
		".git/config":          {Data: []byte("secret")},
		"models/.hidden/a.txt": {Data: []byte("secret")},
	}
	h, _ := newHandler(t, Options{Static: static})
	for _, tc := range []struct {
		method, path string
		code         int
		body, ctype  string
	}{
		{"GET", "/", 200, "<h1>bertlab</h1>", "text/html; charset=utf-8"},
		{"HEAD", "/", 200, "", "text/html; charset=utf-8"},
		{"GET", "/app.js", 200, "console.log(1)", "text/javascript; charset=utf-8"},
		{"GET", "/engine.wasm", 200, "\x00asm", "application/wasm"},
		{"GET", "/models/tiny/x.json", 200, "{}", "application/json"},
		{"GET", "/docs/", 200, "docs", "text/html; charset=utf-8"},
		{"GET", "/docs", 301, "", ""},
		{"GET", "/index.html", 301, "", ""},
		{"GET", "/models/", 404, "", "application/json; charset=utf-8"},
		{"GET", "/models", 404, "", "application/json; charset=utf-8"},
		{"GET", "/missing.js", 404, "", "application/json; charset=utf-8"},
		{"GET", "/.git/config", 404, "", "application/json; charset=utf-8"},
		{"GET", "/models/.hidden/a.txt", 404, "", "application/json; charset=utf-8"},
		{"GET", "/../api_test.go", 404, "", "application/json; charset=utf-8"},
		{"GET", "/app.js/", 301, "", ""},
		{"POST", "/app.js", 405, "", "application/json; charset=utf-8"},
	} {
		code, body, hdr := do(t, h, tc.method, tc.path, "")
		if code != tc.code {
			t.Errorf("%s %s: %d %s, want %d", tc.method, tc.path, code, body, tc.code)
			continue
		}
		if tc.body != "" && string(body) != tc.body {
			t.Errorf("%s %s: body %q", tc.method, tc.path, body)
		}
		if tc.ctype != "" && hdr.Get("Content-Type") != tc.ctype {
			t.Errorf("%s %s: Content-Type %q, want %q", tc.method, tc.path, hdr.Get("Content-Type"), tc.ctype)
		}
		if strings.Contains(string(body), "secret") {
			t.Errorf("%s %s: served a hidden file", tc.method, tc.path)
		}
	}
	// The API is still there beside the files.
	if code, body, _ := do(t, h, http.MethodGet, "/healthz", ""); code != 200 {
		t.Errorf("/healthz with static files: %d %s", code, body)
	}
}

func TestAcceptsGzip(t *testing.T) {
	for _, tc := range []struct {
		header string
		want   bool
	}{
		{"", false},
		{"gzip", true},
		{"gzip, deflate, br, zstd", true},
		{"deflate, br", false},
		{"GZIP", true},
		{"br;q=1.0, gzip;q=0.8", true},
		{"gzip;q=0", false},
		{"gzip; q=0.000", false},
		{"*", true},
		{"*;q=0", false},
		{"gzip;q=0, *", false},
		{"*;q=0, gzip", true},
		{"identity", false},
	} {
		if got := acceptsGzip(tc.header); got != tc.want {
			t.Errorf("acceptsGzip(%q) = %v, want %v", tc.header, got, tc.want)
		}
	}
}

// TestStaticGzip: a file with a gzipped twin is sent as the twin, with the file's content type,
// to clients that accept gzip, and as itself to the others or when the twin is older.
func TestStaticGzip(t *testing.T) {
	plain := []byte("\x00asm wasm bytes, several times over; wasm bytes, several times over")
	var zb bytes.Buffer
	zw := gzip.NewWriter(&zb)
	zw.Write(plain)
	zw.Close()
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	static := fstest.MapFS{
		"index.html":    {Data: []byte("<h1>bertlab</h1>"), ModTime: now},
		"app.wasm":      {Data: plain, ModTime: now},
		"app.wasm.gz":   {Data: zb.Bytes(), ModTime: now},
		"stale.wasm":    {Data: plain, ModTime: now},
		"stale.wasm.gz": {Data: zb.Bytes(), ModTime: now.Add(-time.Hour)},
		"alone.wasm.gz": {Data: zb.Bytes(), ModTime: now},
	}
	h, _ := newHandler(t, Options{Static: static})
	for _, tc := range []struct {
		method, path, accept string
		code                 int
		gzipped              bool
	}{
		{"GET", "/app.wasm", "gzip, deflate", 200, true},
		{"HEAD", "/app.wasm", "gzip", 200, true},
		{"GET", "/app.wasm", "", 200, false},
		{"GET", "/app.wasm", "gzip;q=0", 200, false},
		{"GET", "/stale.wasm", "gzip", 200, false},
		{"GET", "/alone.wasm", "gzip", 404, false},
		{"GET", "/app.wasm.gz", "gzip", 200, false}, // the twin itself, as a file
	} {
		req := httptest.NewRequest(tc.method, tc.path, nil)
		if tc.accept != "" {
			req.Header.Set("Accept-Encoding", tc.accept)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		what := tc.method + " " + tc.path + " (Accept-Encoding: " + tc.accept + ")"
		if rec.Code != tc.code {
			t.Errorf("%s: %d, want %d", what, rec.Code, tc.code)
			continue
		}
		if tc.code != 200 {
			continue
		}
		enc := rec.Header().Get("Content-Encoding")
		if got := enc == "gzip"; got != tc.gzipped {
			t.Errorf("%s: Content-Encoding %q, want gzipped %v", what, enc, tc.gzipped)
		}
		if tc.path == "/app.wasm" || tc.path == "/stale.wasm" {
			if ct := rec.Header().Get("Content-Type"); ct != "application/wasm" {
				t.Errorf("%s: Content-Type %q", what, ct)
			}
			// The answer varies with Accept-Encoding where a usable twin exists.
			if v, want := rec.Header().Get("Vary"), map[bool]string{true: "Accept-Encoding"}[tc.path == "/app.wasm"]; v != want {
				t.Errorf("%s: Vary %q, want %q", what, v, want)
			}
		}
		if tc.method == "HEAD" {
			continue
		}
		body := rec.Body.Bytes()
		if tc.gzipped {
			zr, err := gzip.NewReader(bytes.NewReader(body))
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			if body, err = io.ReadAll(zr); err != nil {
				t.Fatalf("%s: %v", what, err)
			}
		}
		want := plain
		if tc.path == "/app.wasm.gz" {
			want = zb.Bytes()
		}
		if !bytes.Equal(body, want) {
			t.Errorf("%s: body %q", what, body)
		}
	}
}
