package hub

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"time"

	"github.com/bertlab/bertlab/core/hf"
	"github.com/bertlab/bertlab/internal/hubid"
)

// Client fetches model folders from the Hub into the HF cache.
type Client struct {
	Env
	// HTTP makes the requests; nil for a client that waits at most a minute for an answer's
	// headers and as long as a download takes for its body.
	HTTP *http.Client
	// Progress receives a bar per download (a line per download when it is not a terminal)
	// and notes such as "served from the cache"; nil for silence. Env.NoProgress silences
	// the bars and lines but not the notes.
	Progress io.Writer
	// Retries is how many times an interrupted download is resumed before giving up (0: 3).
	Retries int
}

// New returns a client of the environment env, showing progress on w (nil for none).
func New(env Env, w io.Writer) *Client { return &Client{Env: env, Progress: w} }

// Snapshot is a model folder in the cache.
type Snapshot struct {
	Ref    hubid.Ref
	Commit string   // the commit the revision resolved to
	Dir    string   // snapshots/<commit>: load this folder
	Files  []string // the files of the folder bertlab reads, in the order fetched
	// Fetched is the number of bytes downloaded this time (0 when all came from the cache).
	Fetched int64
}

// unreachable wraps a failure to get any answer from the Hub (no network, refused, timed
// out), after which a cached snapshot is served instead.
type unreachable struct{ err error }

func (u *unreachable) Error() string { return "the Hub did not answer: " + u.err.Error() }
func (u *unreachable) Unwrap() error { return u.err }

// Download makes the model folder of ref complete in the cache and returns it: config.json,
// model.safetensors or model.safetensors.index.json with its shards, and whichever tokenizer
// files the repository has (hubid.TokenizerFiles). Files already in the cache are not
// fetched again. A revision that is a commit hash and is complete in the cache needs no
// network; with HF_HUB_OFFLINE, or when the Hub cannot be reached, the cache alone answers.
// Errors name the repository, the revision and the file.
func (c *Client) Download(ctx context.Context, ref hubid.Ref) (*Snapshot, error) {
	ca := newCache(c.CacheDir, ref.Repo)
	if c.Offline {
		return c.fromCache(ca, ref, "HF_HUB_OFFLINE is set")
	}
	if ref.IsCommit() {
		if s, err := c.fromCache(ca, ref, ""); err == nil && c.complete(ca, s) {
			return s, nil
		}
	}
	s, err := c.fetch(ctx, ca, ref)
	var u *unreachable
	if errors.As(err, &u) {
		if s, err2 := c.fromCache(ca, ref, ""); err2 == nil {
			c.note("hub: %v; using the cached snapshot %s of %s", u, s.Commit[:12], ref)
			return s, nil
		}
	}
	return s, err
}

// complete reports whether every optional file of s's snapshot is known: there, or known
// to be absent.
func (c *Client) complete(ca cache, s *Snapshot) bool {
	for _, name := range hubid.TokenizerFiles {
		if !ca.has(s.Commit, name) && !ca.knownMissing(s.Commit, name) {
			return false
		}
	}
	return true
}

// fromCache serves ref from the cache alone. why, when set, says why no network is used.
func (c *Client) fromCache(ca cache, ref hubid.Ref, why string) (*Snapshot, error) {
	fail := func(format string, args ...any) error {
		msg := fmt.Sprintf(format, args...)
		if why != "" {
			msg = why + ", and " + msg + "; unset HF_HUB_OFFLINE to download it"
		}
		return fmt.Errorf("hub %s: %s", ref, msg)
	}
	commit, err := ca.commit(ref.Revision)
	if err != nil {
		if notExist(err) {
			return nil, fail("the cache %s holds no snapshot of revision %s (no %s)", c.CacheDir, ref.Revision, ca.ref(ref.Revision))
		}
		return nil, fail("%v", err)
	}
	s := &Snapshot{Ref: ref, Commit: commit, Dir: ca.snapshot(commit)}
	need := func(name string) error {
		if !ca.has(commit, name) {
			return fail("%s is not in the cache (no %s)", name, ca.file(commit, name))
		}
		s.Files = append(s.Files, name)
		return nil
	}
	if err := need(hubid.ConfigFile); err != nil {
		return nil, err
	}
	switch {
	case ca.has(commit, hubid.WeightsFile):
		s.Files = append(s.Files, hubid.WeightsFile)
	case ca.has(commit, hubid.WeightsIndexFile):
		s.Files = append(s.Files, hubid.WeightsIndexFile)
		x, err := readIndex(ca.file(commit, hubid.WeightsIndexFile))
		if err != nil {
			return nil, fail("%v", err)
		}
		for _, shard := range x.Shards() {
			if err := need(shard); err != nil {
				return nil, err
			}
		}
	default:
		return nil, fail("neither %s nor %s is in the cache (no %s)", hubid.WeightsFile, hubid.WeightsIndexFile, ca.file(commit, hubid.WeightsFile))
	}
	for _, name := range hubid.TokenizerFiles {
		if ca.has(commit, name) {
			s.Files = append(s.Files, name)
		}
	}
	return s, nil
}

func readIndex(path string) (*hf.ShardIndex, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return hf.ParseShardIndex(b, path)
}

// fetch resolves ref on the Hub and downloads what the cache lacks. After config.json every
// file is asked for at the commit config.json came from, so that a push during the download
// cannot mix two commits.
func (c *Client) fetch(ctx context.Context, ca cache, ref hubid.Ref) (*Snapshot, error) {
	s := &Snapshot{Ref: ref}
	// get fetches name; found is false when the file is optional and the Hub says it does
	// not exist.
	get := func(name string, optional bool) (found bool, err error) {
		at := ref
		if s.Commit != "" {
			at.Revision = s.Commit
		}
		if s.Commit != "" && optional && ca.knownMissing(s.Commit, name) {
			return false, nil
		}
		m, err := c.head(ctx, hubid.ResolveURL(c.Endpoint, at, name))
		if err != nil {
			if optional && fileMissing(err) {
				if s.Commit != "" {
					ca.markMissing(s.Commit, name) // a cache hint only: failing to write it changes nothing
				}
				return false, nil
			}
			return false, fmt.Errorf("hub %s: %s: %w", ref, name, err)
		}
		if s.Commit == "" {
			switch {
			case m.commit != "":
				s.Commit = m.commit
			case ref.IsCommit():
				s.Commit = ref.Revision
			default:
				return false, fmt.Errorf("hub %s: %s: the answer has no %s header to say which commit %s is", ref, name, headerCommit, ref.Revision)
			}
			s.Dir = ca.snapshot(s.Commit)
			if err := ca.writeRef(ref.Revision, s.Commit); err != nil {
				return false, fmt.Errorf("hub %s: %w", ref, err)
			}
		} else if m.commit != "" && m.commit != s.Commit {
			return false, fmt.Errorf("hub %s: %s: the Hub answered for commit %s, not %s", ref, name, m.commit, s.Commit)
		}
		n, err := c.download(ctx, ca, ref, name, m)
		s.Fetched += n
		if err != nil {
			return false, fmt.Errorf("hub %s: %s: %w", ref, name, err)
		}
		if err := ca.link(s.Commit, name, m.etag); err != nil {
			return false, fmt.Errorf("hub %s: %s: %w", ref, name, err)
		}
		s.Files = append(s.Files, name)
		return true, nil
	}
	if _, err := get(hubid.ConfigFile, false); err != nil {
		return nil, err
	}
	found, err := get(hubid.WeightsFile, true)
	if err != nil {
		return nil, err
	}
	if !found {
		if found, err = get(hubid.WeightsIndexFile, true); err != nil {
			return nil, err
		}
		if !found {
			return nil, fmt.Errorf("hub %s: no %s and no %s at commit %s: bertlab reads safetensors weights (a repository with only pytorch_model.bin needs converting with transformers: save_pretrained(dir, safe_serialization=True))", ref, hubid.WeightsFile, hubid.WeightsIndexFile, s.Commit)
		}
		x, err := readIndex(ca.file(s.Commit, hubid.WeightsIndexFile))
		if err != nil {
			return nil, fmt.Errorf("hub %s: %w", ref, err)
		}
		for _, shard := range x.Shards() {
			if _, err := get(shard, false); err != nil {
				return nil, err
			}
		}
	}
	for _, name := range hubid.TokenizerFiles {
		if _, err := get(name, true); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// meta is what a HEAD request on a resolve URL tells of a file.
type meta struct {
	commit   string // X-Repo-Commit
	etag     string // X-Linked-Etag (LFS: the sha256), else ETag (git blob sha1), normalised
	size     int64  // X-Linked-Size, else Content-Length; -1 when unknown
	location string // where the bytes are: the CDN a LFS file redirects to, else the resolve URL
}

const userAgent = "bertlab-hub/1"

func (c *Client) httpClient() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.ResponseHeaderTimeout = time.Minute
	return &http.Client{Transport: tr}
}

// request makes a request with the headers the Hub expects: the token only to the Hub's own
// host, never to the storage a LFS file redirects to.
func (c *Client) request(ctx context.Context, method, u string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", userAgent)
	req.Header.Set("Accept-Encoding", "identity")
	if c.Token != "" && sameHost(u, c.Endpoint) {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	return req, nil
}

func sameHost(a, b string) bool {
	ua, err1 := url.Parse(a)
	ub, err2 := url.Parse(b)
	return err1 == nil && err2 == nil && ua.Host == ub.Host
}

// head asks for the metadata of a resolve URL. Like huggingface_hub it follows redirects to
// the same host (a renamed repository) but not a LFS file's redirect to its storage: that
// answer carries the file's sha256 and size.
func (c *Client) head(ctx context.Context, u string) (meta, error) {
	hc := *c.httpClient()
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	for hops := 0; ; hops++ {
		req, err := c.request(ctx, http.MethodHead, u)
		if err != nil {
			return meta{}, err
		}
		resp, err := hc.Do(req)
		if err != nil {
			if ctx.Err() != nil {
				return meta{}, ctx.Err()
			}
			return meta{}, &unreachable{err}
		}
		resp.Body.Close()
		h := resp.Header
		if resp.StatusCode >= 300 && resp.StatusCode < 400 {
			loc, err := resp.Location()
			if err != nil {
				return meta{}, fmt.Errorf("redirect %d without a Location", resp.StatusCode)
			}
			if h.Get(headerLinkedETag) == "" && sameHost(loc.String(), u) {
				if hops >= 10 {
					return meta{}, errors.New("more than 10 redirects")
				}
				u = loc.String()
				continue
			}
			return metaOf(h, loc.String())
		}
		if resp.StatusCode >= 400 {
			return meta{}, httpError(resp, req.Header.Get("Authorization") != "")
		}
		if resp.StatusCode != http.StatusOK {
			return meta{}, fmt.Errorf("unexpected answer %s", resp.Status)
		}
		return metaOf(h, u)
	}
}

func metaOf(h http.Header, location string) (meta, error) {
	m := meta{location: location, size: -1}
	m.commit = h.Get(headerCommit)
	if m.commit != "" && !hubid.IsCommitHash(m.commit) {
		return meta{}, fmt.Errorf("%s %q is not a commit hash", headerCommit, m.commit)
	}
	et := h.Get(headerLinkedETag)
	if et == "" {
		et = h.Get("ETag")
	}
	if et == "" {
		return meta{}, errors.New("the answer has no ETag: cannot name the file in the cache")
	}
	var err error
	if m.etag, err = ParseETag(et); err != nil {
		return meta{}, err
	}
	sz := h.Get(headerLinkedSize)
	if sz == "" {
		sz = h.Get("Content-Length")
	}
	if sz != "" {
		n, err := strconv.ParseInt(sz, 10, 64)
		if err != nil || n < 0 {
			return meta{}, fmt.Errorf("size %q is not a byte count", sz)
		}
		m.size = n
	}
	return m, nil
}

// download puts the file m describes into blobs/<etag> unless it is there, and returns the
// bytes fetched. The blob is written as <etag>.incomplete under a lock, checked, and renamed;
// an interrupted download is resumed with a Range request, now (up to Retries times) or by
// the next run.
func (c *Client) download(ctx context.Context, ca cache, ref hubid.Ref, name string, m meta) (int64, error) {
	blob := ca.blob(m.etag)
	if _, err := os.Stat(blob); err == nil {
		return 0, nil
	}
	unlock, err := lockFile(ctx, ca.lock+string(os.PathSeparator)+m.etag+".lock")
	if err != nil {
		return 0, err
	}
	defer unlock()
	if _, err := os.Stat(blob); err == nil {
		return 0, nil // another process fetched it while we waited
	}
	if err := os.MkdirAll(ca.root+string(os.PathSeparator)+"blobs", 0o755); err != nil {
		return 0, err
	}
	inc := blob + ".incomplete"
	retries := c.Retries
	if retries <= 0 {
		retries = 3
	}
	bar := c.newBar(ref, name, m.size)
	defer bar.done()
	var total int64
	for attempt := 0; ; attempt++ {
		n, err := c.fetchInto(ctx, inc, m, bar)
		total += n
		if err == nil {
			break
		}
		var re *resumable
		if !errors.As(err, &re) || attempt >= retries || ctx.Err() != nil {
			return total, err
		}
		bar.note(fmt.Sprintf("%v; resuming", err))
	}
	if st, err := os.Stat(inc); err != nil {
		return total, err
	} else if m.size >= 0 && st.Size() != m.size {
		os.Remove(inc)
		return total, fmt.Errorf("downloaded %d bytes, the Hub said %d (removed; run again)", st.Size(), m.size)
	}
	if _, err := verify(inc, m.etag); err != nil {
		os.Remove(inc)
		return total, fmt.Errorf("%w: the download is corrupt and was removed; run again", err)
	}
	if err := os.Rename(inc, blob); err != nil {
		return total, err
	}
	return total, nil
}

// resumable is a download cut off part way; what came is kept in the .incomplete file.
type resumable struct {
	have, want int64
	err        error
}

func (r *resumable) Error() string {
	want := "?"
	if r.want >= 0 {
		want = strconv.FormatInt(r.want, 10)
	}
	return fmt.Sprintf("download interrupted at %d of %s bytes: %v", r.have, want, r.err)
}
func (r *resumable) Unwrap() error { return r.err }

// fetchInto downloads m.location into inc, going on from inc's size with a Range request
// when it holds part of the file. It returns the bytes fetched.
func (c *Client) fetchInto(ctx context.Context, inc string, m meta, bar *bar) (int64, error) {
	f, err := os.OpenFile(inc, os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	have := st.Size()
	if m.size >= 0 && have > m.size {
		have = 0 // not a prefix of this file
	}
	if m.size >= 0 && have == m.size {
		return 0, nil // complete, but not yet checked and renamed
	}
	req, err := c.request(ctx, http.MethodGet, m.location)
	if err != nil {
		return 0, err
	}
	if have > 0 {
		req.Header.Set("Range", fmt.Sprintf("bytes=%d-", have))
	}
	resp, err := c.httpClient().Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		return 0, &unreachable{err}
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusPartialContent && have > 0:
		first, _, _, err := ParseContentRange(resp.Header.Get("Content-Range"))
		if err != nil {
			return 0, err
		}
		if first != have {
			return 0, fmt.Errorf("asked for bytes from %d, the answer starts at %d", have, first)
		}
	case resp.StatusCode == http.StatusOK:
		have = 0 // the server ignored the range: start again
	case resp.StatusCode == http.StatusRequestedRangeNotSatisfiable:
		if err := f.Truncate(0); err != nil {
			return 0, err
		}
		return 0, &resumable{have: 0, want: m.size, err: errors.New("range not satisfiable: starting again")}
	default:
		return 0, httpError(resp, req.Header.Get("Authorization") != "")
	}
	if err := f.Truncate(have); err != nil {
		return 0, err
	}
	if _, err := f.Seek(have, io.SeekStart); err != nil {
		return 0, err
	}
	bar.set(have)
	n, err := io.Copy(f, io.TeeReader(resp.Body, bar))
	if err != nil {
		if ctx.Err() != nil {
			return n, ctx.Err()
		}
		return n, &resumable{have: have + n, want: m.size, err: err}
	}
	return n, f.Sync()
}

func (c *Client) note(format string, args ...any) {
	if c.Progress != nil {
		fmt.Fprintf(c.Progress, format+"\n", args...)
	}
}
