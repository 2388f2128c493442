package ui

import (
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/vugu/vugu"
	"github.com/vugu/vugu/js"

	"github.com/bertlab/bertlab/core/hf"
	"github.com/bertlab/bertlab/internal/hubid"
)

// HubLoad is the Models view's "Load from the Hub": a model's Hub id and the Hub's address
// (HF_ENDPOINT's equivalent). The page fetches the folder's files from the Hub's resolve URLs,
// as bertlab --model org/name does, and loads them as the user's own files (App.LoadLocal).
// Nothing is fetched unless asked: the page works offline without it.
type HubLoad struct {
	App *App

	ID       string // "org/name[@revision]"
	Endpoint string // "" for hubid.DefaultEndpoint
	Status   string // what is being fetched
	Err      string // why the last load failed before the engine saw the files
	loading  bool
}

// hubFile is one file fetched from the Hub: the status, and the file when it is 200.
type hubFile struct {
	status int
	file   LocalFile
}

// hubFetch gets url: the browser's fetch, which follows the Hub's redirect of LFS files to its
// storage (both answer CORS); the bytes stay a Blob in the browser, for the engine's worker to
// read. progress, when not nil, is told the bytes received so far as they come. Tests without
// a browser replace it.
var hubFetch = browserFetch

func (c *HubLoad) busy() bool { return c.loading || c.App.Loading }

func (c *HubLoad) endpoint() string {
	if c.Endpoint == "" {
		return hubid.DefaultEndpoint
	}
	return c.Endpoint
}

func (c *HubLoad) setID(e vugu.DOMEvent) { c.ID = strings.TrimSpace(e.PropString("target", "value")) }

func (c *HubLoad) setEndpoint(e vugu.DOMEvent) {
	c.Endpoint = strings.TrimRight(strings.TrimSpace(e.PropString("target", "value")), "/")
}

func (c *HubLoad) key(e vugu.DOMEvent) {
	if e.PropString("key") == "Enter" {
		c.ID = strings.TrimSpace(e.PropString("target", "value"))
		c.load()
	}
}

func (c *HubLoad) load() {
	if c.busy() {
		return
	}
	a := c.App
	c.Err, c.Status = "", ""
	a.LoadErr, a.LoadMsg = "", ""
	ref, err := hubid.Parse(c.ID)
	if err != nil {
		c.Err = err.Error()
		return
	}
	c.loading = true
	a.spawn(func() {
		files, err := c.fetch(ref)
		a.Do(func() {
			c.loading, c.Status = false, ""
			if err != nil {
				c.Err = err.Error()
				return
			}
			a.LoadLocal(files)
		})
	})
}

// fetch gets ref's model folder: config.json (refused early when the model is too large for
// the page), model.safetensors (or the index and the shards it names), and whichever tokenizer files the repository has. It first asks
// the Hub for the revision's files and their shas (hubid.InfoURL): then only files that exist
// are fetched, all at the commit the revision named then, and each is checked against its sha
// (the sha256 of a LFS file, the git blob sha1 of the others). A mirror without that API is
// read by probing the files, unchecked.
func (c *HubLoad) fetch(ref hubid.Ref) ([]LocalFile, error) {
	c.App.Do(func() { c.Status = fmt.Sprintf("asking %s for %s…", c.endpoint(), ref) })
	var info *hubid.Info
	if r, err := hubFetch(hubid.InfoURL(c.endpoint(), ref), nil); err == nil && r.status == 200 {
		if b, err := readBytes(r.file); err == nil {
			info, _ = hubid.ParseInfo(b) // an answer that does not parse is a mirror's: probe
		}
	}
	at := ref
	if info != nil {
		at.Revision = info.Commit
	}
	get := func(name string, optional bool) (*LocalFile, error) {
		var want hubid.FileInfo
		if info != nil {
			fi, ok := info.Files[name]
			if !ok && optional {
				return nil, nil
			}
			if !ok {
				return nil, fmt.Errorf("%s: %s: not in the repository at commit %s", ref, name, info.Commit)
			}
			want = fi
		}
		u := hubid.ResolveURL(c.endpoint(), at, name)
		c.App.Do(func() { c.Status = fmt.Sprintf("fetching %s from %s (%s)…", name, ref, sizeOf(want.Size)) })
		var shown time.Time
		r, err := hubFetch(u, func(got int64) {
			if time.Since(shown) < 200*time.Millisecond {
				return
			}
			shown = time.Now()
			msg := fmt.Sprintf("fetching %s from %s: %s", name, ref, humanBytes(float64(got)))
			if want.Size > 0 {
				msg += fmt.Sprintf(" of %s (%.0f%%)", humanBytes(float64(want.Size)), 100*float64(got)/float64(want.Size))
			}
			c.App.Do(func() { c.Status = msg + "…" })
		})
		if err != nil {
			return nil, fmt.Errorf("%s: %s: could not reach %s: %v", ref, name, c.endpoint(), err)
		}
		switch {
		case r.status == 200:
			r.file.Name, r.file.Path = name, ref.Repo+"/"+name
			if err := checkSHA(r.file, want); err != nil {
				return nil, fmt.Errorf("%s: %s: %w: the download is corrupt, try again", ref, name, err)
			}
			return &r.file, nil
		case r.status == 404 && optional:
			return nil, nil
		case r.status == 401 || r.status == 403:
			return nil, fmt.Errorf("%s: %s: HTTP %d: the repository is gated or private, or does not exist; the page loads public models (for the others: bertlab --model %s with HF_TOKEN set)", ref, name, r.status, ref.Repo)
		case r.status == 404:
			return nil, fmt.Errorf("%s: %s: not found (HTTP 404): check the id and the revision", ref, name)
		}
		return nil, fmt.Errorf("%s: %s: HTTP %d", ref, name, r.status)
	}
	cfg, err := get(hubid.ConfigFile, false)
	if err != nil {
		return nil, err
	}
	b, err := readLocal(*cfg)
	if err != nil {
		return nil, err
	}
	cfg.Data = b
	if _, _, err := CheckModelSize(b); err != nil {
		return nil, fmt.Errorf("%s: %w", ref, err)
	}
	files := []LocalFile{*cfg}
	w, err := get(hubid.WeightsFile, true)
	if err != nil {
		return nil, err
	}
	if w != nil {
		files = append(files, *w)
	} else {
		shards, err := c.fetchShards(ref, get)
		if err != nil {
			return nil, err
		}
		files = append(files, shards...)
	}
	for _, name := range hubid.TokenizerFiles {
		f, err := get(name, true)
		if err != nil {
			return nil, err
		}
		if f != nil {
			files = append(files, *f)
		}
	}
	return files, nil
}

// fetchShards gets weights saved in shards: model.safetensors.index.json, then each shard it
// names (model-00001-of-00002.safetensors, ...), as transformers' save_pretrained names them.
func (c *HubLoad) fetchShards(ref hubid.Ref, get func(name string, optional bool) (*LocalFile, error)) ([]LocalFile, error) {
	x, err := get(hubid.WeightsIndexFile, true)
	if err != nil {
		return nil, err
	}
	if x == nil {
		return nil, fmt.Errorf("%s: no %s and no %s (the page reads safetensors weights only)", ref, hubid.WeightsFile, hubid.WeightsIndexFile)
	}
	b, err := readBytes(*x)
	if err != nil {
		return nil, err
	}
	x.Data = b
	idx, err := hf.ParseShardIndex(b, ref.String()+": "+hubid.WeightsIndexFile)
	if err != nil {
		return nil, err
	}
	files := []LocalFile{*x}
	for _, name := range idx.Shards() {
		if !hf.IsShardFile(name) {
			return nil, fmt.Errorf("%s: %s names the shard %q: the page reads shards named as transformers names them (model-00001-of-00002.safetensors); the command line reads any (bertlab --model %s)", ref, hubid.WeightsIndexFile, name, ref)
		}
		f, err := get(name, false)
		if err != nil {
			return nil, err
		}
		files = append(files, *f)
	}
	return files, nil
}

func sizeOf(n int64) string {
	if n < 0 {
		return "size unknown"
	}
	return humanBytes(float64(n))
}

// checkSHA checks a fetched file against the Hub's sha: the sha256 of a LFS file (hashed by
// hubSHA256), else the git blob sha1; nothing when the Hub gave neither.
func checkSHA(f LocalFile, want hubid.FileInfo) error {
	switch {
	case want.SHA256 != "":
		got, err := hubSHA256(f)
		if err != nil {
			return err
		}
		if got != "" && got != want.SHA256 {
			return fmt.Errorf("sha256 %s, the Hub gave %s", got, want.SHA256)
		}
	case want.BlobID != "":
		b, err := readBytes(f)
		if err != nil {
			return err
		}
		h := sha1.New()
		fmt.Fprintf(h, "blob %d\x00", len(b))
		h.Write(b)
		if got := hex.EncodeToString(h.Sum(nil)); got != want.BlobID {
			return fmt.Errorf("git blob sha1 %s, the Hub gave %s", got, want.BlobID)
		}
	}
	return nil
}

// hubSHA256 hashes a fetched file: in the browser with crypto.subtle, so that the weights
// never come into Go's memory ("" where the page has no crypto.subtle: not a secure context).
var hubSHA256 = func(f LocalFile) (string, error) {
	if f.Data != nil {
		s := sha256.Sum256(f.Data)
		return hex.EncodeToString(s[:]), nil
	}
	subtle := js.Global().Get("crypto").Get("subtle")
	if !subtle.Truthy() {
		return "", nil
	}
	buf, err := awaitPromise(f.Handle.Call("arrayBuffer"))
	if err != nil {
		return "", err
	}
	d, err := awaitPromise(subtle.Call("digest", "SHA-256", buf))
	if err != nil {
		return "", err
	}
	sum := make([]byte, 32)
	js.CopyBytesToGo(sum, js.Global().Get("Uint8Array").New(d))
	return hex.EncodeToString(sum), nil
}

// readBytes returns a fetched file's bytes: its Data, or its Blob's bytes copied into Go.
func readBytes(f LocalFile) ([]byte, error) {
	if f.Data != nil {
		return f.Data, nil
	}
	buf, err := awaitPromise(f.Handle.Call("arrayBuffer"))
	if err != nil {
		return nil, err
	}
	u8 := js.Global().Get("Uint8Array").New(buf)
	b := make([]byte, u8.Get("length").Int())
	js.CopyBytesToGo(b, u8)
	return b, nil
}

// browserFetch fetches url with the browser's fetch. The body is read chunk by chunk, for
// progress, into a Blob: the bytes stay in the browser, Go sees only their count.
func browserFetch(url string, progress func(got int64)) (hubFile, error) {
	if !js.Global().Truthy() {
		return hubFile{}, errors.New("no browser")
	}
	resp, err := awaitPromise(js.Global().Call("fetch", url))
	if err != nil {
		return hubFile{}, err
	}
	st := resp.Get("status").Int()
	if !resp.Get("ok").Bool() {
		return hubFile{status: st}, nil
	}
	var blob js.Value
	if body := resp.Get("body"); progress != nil && body.Truthy() {
		reader := body.Call("getReader")
		chunks := js.Global().Get("Array").New()
		var got int64
		for {
			r, err := awaitPromise(reader.Call("read"))
			if err != nil {
				return hubFile{}, err
			}
			if r.Get("done").Bool() {
				break
			}
			v := r.Get("value")
			chunks.Call("push", v)
			got += int64(v.Get("length").Int())
			progress(got)
		}
		blob = js.Global().Get("Blob").New(chunks)
	} else if blob, err = awaitPromise(resp.Call("blob")); err != nil {
		return hubFile{}, err
	}
	return hubFile{status: st, file: LocalFile{Size: int64(blob.Get("size").Float()), Handle: blob}}, nil
}

// awaitPromise waits for a JavaScript promise (await's callbacks on its then).
func awaitPromise(p js.Value) (js.Value, error) {
	res, err := await(func(ok, fail js.Value) { p.Call("then", ok, fail) })
	if err != nil || len(res) == 0 {
		return js.Undefined(), err
	}
	return res[0], nil
}
