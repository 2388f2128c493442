package hubid

import (
	"encoding/json"
	"strings"
	"testing"
)

// realInfo is the shape of the Hub's answer for google-bert/bert-base-uncased (trimmed; the
// values are made up).
const realInfo = `{"_id":"621ffdc036468d709f174338","id":"google-bert/bert-base-uncased","private":false,
"sha":"0123456789abcdef0123456789abcdef01234567","gated":false,"tags":["transformers"],
"siblings":[{"rfilename":".gitattributes","blobId":"505a7adf8be9e5fdf06aa9deb95cb50e27f6bb3c","size":491},
{"rfilename":"config.json","blobId":"45a2321a7ecfdaaf60a6c1fd7f5463994cc8907d","size":570},
{"rfilename":"model.safetensors","blobId":"68d45e234eb4a928074dfd868cead0219ab85354","size":440449768,
 "lfs":{"sha256":"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08","size":440449768,"pointerSize":135}},
{"rfilename":"coreml/fill-mask/float32_model.mlpackage/Manifest.json","blobId":"c1a3b4d1b3e4e1d2b86b7ce8ea1b4bd6c2a3a1f2","size":617}]}`

func TestParseInfo(t *testing.T) {
	x, err := ParseInfo([]byte(realInfo))
	if err != nil {
		t.Fatal(err)
	}
	if x.Commit != "0123456789abcdef0123456789abcdef01234567" || len(x.Files) != 4 {
		t.Errorf("%+v", x)
	}
	if f := x.Files["model.safetensors"]; f.SHA256 != "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08" || f.Size != 440449768 {
		t.Errorf("weights %+v", f)
	}
	if f := x.Files["config.json"]; f.SHA256 != "" || f.BlobID != "45a2321a7ecfdaaf60a6c1fd7f5463994cc8907d" || f.Size != 570 {
		t.Errorf("config %+v", f)
	}
	for _, c := range []struct{ in, want string }{
		{`{}`, "not a commit hash"},
		{`[]`, "cannot unmarshal"},
		{`{"sha":"0123456789abcdef0123456789abcdef01234567","siblings":[{"rfilename":"../x"}]}`, `file "../x"`},
		{`{"sha":"0123456789abcdef0123456789abcdef01234567","siblings":[{"rfilename":"a"},{"rfilename":"a"}]}`, "twice"},
		{`{"sha":"0123456789abcdef0123456789abcdef01234567","siblings":[{"rfilename":"a","lfs":{"sha256":"xyz"}}]}`, "not a sha256"},
		{`{"sha":"0123456789abcdef0123456789abcdef01234567","siblings":[{"rfilename":"a","blobId":"ABC"}]}`, "not a git sha1"},
		{`{"sha":"0123456789abcdef0123456789abcdef01234567","siblings":[{"rfilename":"a","size":-5}]}`, "size -5"},
	} {
		if _, err := ParseInfo([]byte(c.in)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.in, err, c.want)
		}
	}
	if u := InfoURL("", Ref{Repo: "o/n", Revision: "refs/pr/1"}); u != "https://huggingface.co/api/models/o/n/revision/refs%2Fpr%2F1?blobs=true" {
		t.Errorf("URL %s", u)
	}
}

// FuzzParseInfo parses arbitrary answers. It must never panic; what it accepts has a commit
// hash, safe paths and well-formed shas, and survives re-encoding.
func FuzzParseInfo(f *testing.F) {
	f.Add([]byte(realInfo))
	f.Add([]byte(`{"sha":"0123456789abcdef0123456789abcdef01234567","siblings":[{"rfilename":"a/./b"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		x, err := ParseInfo(data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "repository info: ") {
				t.Fatalf("error %q", err)
			}
			return
		}
		if !IsCommitHash(x.Commit) {
			t.Fatalf("commit %q", x.Commit)
		}
		type lfs struct {
			SHA256 string `json:"sha256"`
			Size   int64  `json:"size"`
		}
		type sib struct {
			Name   string `json:"rfilename"`
			Size   int64  `json:"size"`
			BlobID string `json:"blobId,omitempty"`
			LFS    *lfs   `json:"lfs,omitempty"`
		}
		var sibs []sib
		for name, fi := range x.Files {
			if checkPath(name) != nil || (fi.SHA256 != "" && !isHexLen(fi.SHA256, 64)) || (fi.BlobID != "" && !isHexLen(fi.BlobID, 40)) || fi.Size < -1 {
				t.Fatalf("accepted %q %+v", name, fi)
			}
			s := sib{Name: name, Size: fi.Size, BlobID: fi.BlobID}
			if fi.SHA256 != "" {
				s.LFS = &lfs{fi.SHA256, fi.Size}
			}
			sibs = append(sibs, s)
		}
		b, _ := json.Marshal(map[string]any{"sha": x.Commit, "siblings": sibs})
		y, err := ParseInfo(b)
		if err != nil || len(y.Files) != len(x.Files) {
			t.Fatalf("re-encoded: %v", err)
		}
		for name, fi := range x.Files {
			if y.Files[name] != fi {
				t.Fatalf("%q: %+v became %+v", name, fi, y.Files[name])
			}
		}
	})
}
