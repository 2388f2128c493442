package hub

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestParseETag(t *testing.T) {
	const sha = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
	for in, want := range map[string]string{
		`"` + sha + `"`:   sha,
		`W/"` + sha + `"`: sha,
		sha:               sha,
		` "abc-1.2_x" `:   "abc-1.2_x",
	} {
		if got, err := ParseETag(in); err != nil || got != want {
			t.Errorf("%q: %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", `""`, `W/""`, `"../x"`, `"a/b"`, `".hidden"`, `"a b"`, `"` + strings.Repeat("a", 129) + `"`} {
		if got, err := ParseETag(in); err == nil {
			t.Errorf("%q accepted as %q", in, got)
		}
	}
}

func TestParseContentRange(t *testing.T) {
	good := map[string][3]int64{"bytes 0-9/10": {0, 9, 10}, "bytes 100-199/*": {100, 199, -1}, "bytes 5-5/6": {5, 5, 6}}
	for in, want := range good {
		a, b, n, err := ParseContentRange(in)
		if err != nil || [3]int64{a, b, n} != want {
			t.Errorf("%q: %d %d %d %v, want %v", in, a, b, n, err, want)
		}
	}
	for _, in := range []string{"", "bytes */10", "bytes 9-0/10", "bytes 0-9/9", "bytes -1-2/3", "bytes 0-+1/3", "items 0-1/2", "bytes 0-99999999999999999999/1", "bytes 1-2"} {
		if _, _, _, err := ParseContentRange(in); err == nil {
			t.Errorf("%q accepted", in)
		}
	}
}

func TestHTTPErrorText(t *testing.T) {
	for _, c := range []struct {
		e    HTTPError
		want []string
	}{
		{HTTPError{Status: 401}, []string{"401 Unauthorized", "HF_TOKEN"}},
		{HTTPError{Status: 401, Token: true}, []string{"HF_TOKEN was refused"}},
		{HTTPError{Status: 403, Code: "GatedRepo", Message: "restricted"}, []string{"403", "accept", "the Hub says: restricted"}},
		{HTTPError{Status: 404, Code: "RepoNotFound"}, []string{"no such repository"}},
		{HTTPError{Status: 404, Code: "RevisionNotFound"}, []string{"no such revision"}},
		{HTTPError{Status: 404, Code: "EntryNotFound"}, []string{"no such file"}},
	} {
		for _, w := range c.want {
			if !strings.Contains(c.e.Error(), w) {
				t.Errorf("%+v: %q lacks %q", c.e, c.e.Error(), w)
			}
		}
	}
	if !fileMissing(&HTTPError{Status: 404, Code: "EntryNotFound"}) || fileMissing(&HTTPError{Status: 404, Code: "RepoNotFound"}) || fileMissing(&HTTPError{Status: 401}) {
		t.Error("fileMissing")
	}
}

func TestVerify(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	os.WriteFile(p, []byte("hello\n"), 0o644)
	// git hash-object of "hello\n" and sha256sum of it, computed by git and coreutils.
	for _, etag := range []string{"ce013625030ba8dba906f756967f9e9ca394464a", "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03"} {
		if _, err := verify(p, etag); err != nil {
			t.Error(err)
		}
		bad := strings.Repeat("0", len(etag))
		if _, err := verify(p, bad); err == nil || !strings.Contains(err.Error(), etag) {
			t.Errorf("%s: %v", bad, err)
		}
	}
	if kind, err := verify(p, "not-a-hash"); kind != "" || err != nil {
		t.Errorf("a mirror's ETag: %q %v", kind, err)
	}
}

func TestEnvFrom(t *testing.T) {
	home := t.TempDir()
	os.WriteFile(filepath.Join(home, "token"), []byte("hf_fromfile\n"), 0o600)
	for _, c := range []struct {
		env  map[string]string
		want Env
	}{
		{map[string]string{"HF_HOME": home}, Env{Endpoint: "https://huggingface.co", CacheDir: filepath.Join(home, "hub"), Token: "hf_fromfile"}},
		{map[string]string{"HF_HOME": home, "HF_HUB_CACHE": "/c", "HF_TOKEN": "hf_env", "HF_ENDPOINT": "http://m:8/", "HF_HUB_OFFLINE": "yes", "HF_HUB_DISABLE_PROGRESS_BARS": "1"},
			Env{Endpoint: "http://m:8", CacheDir: "/c", Token: "hf_env", Offline: true, NoProgress: true}},
		{map[string]string{"XDG_CACHE_HOME": "/x", "HF_HUB_OFFLINE": "0", "HF_TOKEN_PATH": "/nonexistent"}, Env{Endpoint: "https://huggingface.co", CacheDir: "/x/huggingface/hub"}},
	} {
		if got := EnvFrom(func(k string) string { return c.env[k] }); got != c.want {
			t.Errorf("%v: %+v, want %+v", c.env, got, c.want)
		}
	}
}

// FuzzParseETag reads arbitrary ETag headers. It must never panic, and what it accepts must be
// a safe file name: no separator, not "." or "..", not hidden, at most 128 bytes.
func FuzzParseETag(f *testing.F) {
	f.Add(`"abc"`)
	f.Add(`W/"../x"`)
	f.Fuzz(func(t *testing.T, v string) {
		e, err := ParseETag(v)
		if err != nil {
			return
		}
		if e == "" || len(e) > maxETag || e[0] == '.' || strings.ContainsAny(e, "/\\\x00 \"") || filepath.Base(e) != e {
			t.Fatalf("accepted %q as %q", v, e)
		}
	})
}

// FuzzParseContentRange reads arbitrary Content-Range headers. It must never panic; a range it
// accepts is non-negative and ordered, and reads back the same from its canonical form.
func FuzzParseContentRange(f *testing.F) {
	f.Add("bytes 0-9/10")
	f.Add("bytes 1-2/*")
	f.Fuzz(func(t *testing.T, v string) {
		a, b, n, err := ParseContentRange(v)
		if err != nil {
			return
		}
		if a < 0 || b < a || (n != -1 && n <= b) {
			t.Fatalf("%q: %d-%d/%d", v, a, b, n)
		}
		tot := "*"
		if n >= 0 {
			tot = strconv.FormatInt(n, 10)
		}
		back := "bytes " + strconv.FormatInt(a, 10) + "-" + strconv.FormatInt(b, 10) + "/" + tot
		if a2, b2, n2, err := ParseContentRange(back); err != nil || a2 != a || b2 != b || n2 != n {
			t.Fatalf("%q read as %q, which reads as %d-%d/%d (%v)", v, back, a2, b2, n2, err)
		}
	})
}
