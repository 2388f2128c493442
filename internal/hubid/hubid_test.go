package hubid

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	good := []struct {
		in         string
		repo, rev  string
		url        string
		commitHash bool
	}{
		{"google-bert/bert-base-uncased", "google-bert/bert-base-uncased", "main", "https://huggingface.co/google-bert/bert-base-uncased/resolve/main/config.json", false},
		{"org/name@v1.0", "org/name", "v1.0", "https://huggingface.co/org/name/resolve/v1.0/config.json", false},
		{"org/name@refs/pr/1", "org/name", "refs/pr/1", "https://huggingface.co/org/name/resolve/refs%2Fpr%2F1/config.json", false},
		{"Org_1/a.b-c@0123456789abcdef0123456789abcdef01234567", "Org_1/a.b-c", "0123456789abcdef0123456789abcdef01234567", "https://huggingface.co/Org_1/a.b-c/resolve/0123456789abcdef0123456789abcdef01234567/config.json", true},
	}
	for _, c := range good {
		r, err := Parse(c.in)
		if err != nil {
			t.Errorf("%q: %v", c.in, err)
			continue
		}
		if r.Repo != c.repo || r.Revision != c.rev || r.IsCommit() != c.commitHash {
			t.Errorf("%q: %+v", c.in, r)
		}
		if u := ResolveURL("", r, ConfigFile); u != c.url {
			t.Errorf("%q: URL %s, want %s", c.in, u, c.url)
		}
		if back, err := Parse(r.String()); err != nil || back != r {
			t.Errorf("%q: String %q parses to %+v, %v", c.in, r.String(), back, err)
		}
	}
	bad := []struct{ in, want string }{
		{"", "want org/name"},
		{"bert-base-uncased", "want org/name"},
		{"org/", "name \"\" is empty"},
		{"/name", "org \"\" is empty"},
		{"a/b/c", "more than one '/'"},
		{"org/na me", "has ' '"},
		{"org/name@", "empty revision"},
		{"org/name@a@b", "has '@'"},
		{"org/-name", "start or end"},
		{"org/name.", "start or end"},
		{"org/a--b", "-- or .."},
		{"org/a..b", "-- or .."},
		{"org/name.git", ".git"},
		{"org/" + strings.Repeat("a", 97), "longer than 96"},
		{"org/name@../../etc", "segment"},
		{"org/name@a//b", "segment"},
		{"org/name@/main", "segment"},
		{"org/name@ma in", "has ' '"},
		{"org/ñame", "has 'ñ'"},
	}
	for _, c := range bad {
		_, err := Parse(c.in)
		if err == nil {
			t.Errorf("%q: accepted", c.in)
			continue
		}
		if !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "hub id") {
			t.Errorf("%q: error %q, want it to say %q", c.in, err, c.want)
		}
	}
}

func TestResolveURLEndpoint(t *testing.T) {
	r := Ref{Repo: "o/n", Revision: "main"}
	if u := ResolveURL("http://127.0.0.1:9/mirror/", r, "sub dir/x#y.json"); u != "http://127.0.0.1:9/mirror/o/n/resolve/main/sub%20dir/x%23y.json" {
		t.Errorf("URL %s", u)
	}
}

// FuzzParse parses arbitrary ids. It must never panic; an id it accepts names a repo of two
// safe parts and a revision that stays inside a folder, prints back to itself, and gives a
// resolve URL under the endpoint.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"org/name", "org/name@main", "a/b@refs/pr/1", "a/b@..", "a/b/c", "@", "/", "a/b@c@d"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := Parse(s)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "hub id ") {
				t.Fatalf("error %q does not start with hub id", err)
			}
			return
		}
		org, name, _ := strings.Cut(r.Repo, "/")
		for _, p := range []string{org, name} {
			if checkPart(p) != nil {
				t.Fatalf("accepted part %q", p)
			}
		}
		for _, seg := range strings.Split(r.Revision, "/") {
			if seg == "" || seg == "." || seg == ".." {
				t.Fatalf("accepted revision %q", r.Revision)
			}
		}
		if back, err := Parse(r.String()); err != nil || back != r {
			t.Fatalf("%q -> %+v -> %q -> %+v, %v", s, r, r.String(), back, err)
		}
		u := ResolveURL("https://hub.example", r, ConfigFile)
		if !strings.HasPrefix(u, "https://hub.example/"+r.Repo+"/resolve/") || strings.Count(u, "/") != 7 {
			t.Fatalf("URL %s", u)
		}
	})
}
