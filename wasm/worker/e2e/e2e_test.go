//go:build unix

package e2e

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bertlab/bertlab/api"
	"github.com/bertlab/bertlab/core/engine"
)

// modelName is the model embedded in the Worker (wasm/worker/model/<name>).
const modelName = "bert-tiny-random"

func TestWorkerMatchesNativeHandler(t *testing.T) {
	workerDir, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	wrangler := installWrangler(t, workerDir)
	tmp := t.TempDir()

	// Build as `make worker` does, into the test's own folder.
	build := filepath.Join(tmp, "build")
	start := time.Now()
	runCmd(t, workerDir, nil, "go", "run", "github.com/syumai/workers/cmd/workers-assets-gen", "-mode=go", "-o", build)
	wasm := filepath.Join(build, "app.wasm")
	runCmd(t, workerDir, []string{"GOOS=js", "GOARCH=wasm"}, "go", "build", "-o", wasm, ".")
	t.Logf("built the Worker in %v: app.wasm %s", time.Since(start).Round(time.Millisecond), sizes(t, wasm))

	// The committed wrangler.toml, beside the build; the page is a small stand-in, given with
	// --assets, so that the test does not depend on the page being built.
	toml, err := os.ReadFile(filepath.Join(workerDir, "wrangler.toml"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(tmp, "wrangler.toml"), string(toml))
	assets := filepath.Join(tmp, "assets")
	writeFile(t, filepath.Join(assets, "index.html"), "<!doctype html><title>bertlab</title><h1>bertlab</h1>\n")
	writeFile(t, filepath.Join(assets, "style.css"), "body { font-family: sans-serif }\n")

	worker, pgid := startWrangler(t, wrangler, tmp, assets)

	model, err := engine.Open(os.DirFS(filepath.Join(workerDir, "model", modelName)), modelName)
	if err != nil {
		t.Fatal(err)
	}
	h, err := api.New(model, api.Options{Static: os.DirFS(assets)})
	if err != nil {
		t.Fatal(err)
	}
	native := httptest.NewServer(h)
	defer native.Close()

	long := strings.Repeat("paris ", 80)
	for _, c := range []struct{ method, path, body string }{
		{"GET", "/healthz", ""},
		{"GET", "/", ""},
		{"GET", "/style.css", ""},
		{"POST", "/api/fill-mask", `{"text":"paris is the [MASK] of france"}`},
		{"POST", "/api/fill-mask", `{"text":"no [MASK] happiness [MASK] sound","pair":"london [MASK]","top_k":100}`},
		{"POST", "/api/fill-mask", `{"text":"[MASK] ` + long + `","top_k":2}`},
		{"POST", "/api/tokenize", `{"text":"Héllo wörld, Paris!","pair":"naïve café"}`},
		{"POST", "/api/tokenize", `{"text":"` + long + `"}`},
		{"POST", "/api/attention", `{"text":"the cat sat","pair":"on the mat","layer":1}`},
		{"POST", "/api/attention", `{"text":"` + long + `"}`},
		{"POST", "/api/embed", `{"texts":["paris is a city","cats",""],"pooling":"mean"}`},
		{"POST", "/api/embed", `{"texts":["` + long + `"],"pooling":"cls"}`},
		// Errors.
		{"GET", "/no-such-file.js", ""},
		{"GET", "/api/nope", ""},
		{"GET", "/api/fill-mask", ""},
		{"POST", "/healthz", ""},
		{"POST", "/api/fill-mask", `{"text":"no mask"}`},
		{"POST", "/api/fill-mask", `{"text":"a [MASK]","top_k":101}`},
		{"POST", "/api/fill-mask", `{"text":`},
		{"POST", "/api/tokenize", `{"text":"x","extra":1}`},
		{"POST", "/api/attention", `{"text":"x","layer":2}`},
		{"POST", "/api/embed", `{"texts":[]}`},
		{"POST", "/api/embed", `{"texts":["a"],"pooling":"max"}`},
		{"POST", "/api/tokenize", `{"text":"` + strings.Repeat("a", 70<<10) + `"}`},
	} {
		name := c.method + " " + c.path + " " + short(c.body)
		wc, wt, wb := send(t, worker, c.method, c.path, c.body)
		nc, nt, nb := send(t, native.URL, c.method, c.path, c.body)
		if wc != nc {
			t.Errorf("%s: Worker %d %s, native %d %s", name, wc, short(string(wb)), nc, short(string(nb)))
			continue
		}
		if !strings.HasPrefix(nt, "application/json") {
			if !bytes.Equal(wb, nb) {
				t.Errorf("%s: Worker answered %q, native %q", name, short(string(wb)), short(string(nb)))
			}
			continue
		}
		if wt != nt {
			t.Errorf("%s: Content-Type %q, native %q", name, wt, nt)
		}
		var wv, nv any
		if err := json.Unmarshal(wb, &wv); err != nil {
			t.Errorf("%s: Worker's answer is not JSON: %v: %s", name, err, short(string(wb)))
			continue
		}
		if err := json.Unmarshal(nb, &nv); err != nil {
			t.Fatalf("%s: native answer is not JSON: %v", name, err)
		}
		// The Worker runs the pure-Go kernels, natively they are assembly: float32 rounding differs.
		if where := differ(wv, nv, ""); where != "" {
			t.Errorf("%s: answers differ at %s:\nWorker %s\nnative %s", name, where, short(string(wb)), short(string(nb)))
		}
	}

	measure(t, worker, native.URL, pgid)
}

// installWrangler returns the path of the worker's wrangler, running `npm ci` in workerDir
// when its node_modules are missing (CI installs them first; see api/INTEGRATION.md).
func installWrangler(t *testing.T, workerDir string) string {
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("the Worker test needs Node.js 20 or newer and npm on PATH (%s not found): apt-get install -y nodejs npm", tool)
		}
	}
	out, err := exec.Command("node", "--version").Output()
	if err != nil {
		t.Fatalf("node --version: %v", err)
	}
	var major, minor int
	if _, err := fmt.Sscanf(strings.TrimSpace(string(out)), "v%d.%d", &major, &minor); err != nil || major < 20 || (major == 20 && minor < 3) {
		t.Fatalf("the Worker test needs Node.js 20.3 or newer (wrangler 4.86.0); node --version says %s", strings.TrimSpace(string(out)))
	}
	wrangler := filepath.Join(workerDir, "node_modules", ".bin", "wrangler")
	if _, err := os.Stat(wrangler); err != nil {
		t.Logf("%s missing: running npm ci in %s", wrangler, workerDir)
		runCmd(t, workerDir, nil, "npm", "ci", "--no-audit", "--no-fund")
	}
	return wrangler
}

// startWrangler starts `wrangler dev` in dir on free loopback ports, offline and with its
// home, config and temporary files inside dir, and waits until the Worker answers /healthz. It
// returns the Worker's URL and the process group that wrangler and its workerd processes run in,
// which is stopped when the test ends.
func startWrangler(t *testing.T, wrangler, dir, assets string) (string, int) {
	port, inspector := freePort(t), freePort(t)
	home := filepath.Join(dir, "home")
	tmpDir := filepath.Join(dir, "tmp")
	for _, d := range []string{home, tmpDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(wrangler, "dev",
		"--ip", "127.0.0.1", "--port", strconv.Itoa(port), "--inspector-port", strconv.Itoa(inspector),
		"--assets", assets, "--persist-to", filepath.Join(dir, "state"),
		"--show-interactive-dev-session=false", "--log-level", "warn")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "TMPDIR="+tmpDir,
		"WRANGLER_SEND_METRICS=false", "WRANGLER_SEND_ERROR_REPORTS=false", "WRANGLER_HIDE_BANNER=true",
		"CLOUDFLARE_CF_FETCH_ENABLED=false", "NO_COLOR=1", "CI=1")
	logPath := filepath.Join(dir, "wrangler.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pgid := cmd.Process.Pid
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		syscall.Kill(-pgid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			syscall.Kill(-pgid, syscall.SIGKILL)
			<-exited
		}
		// workerd children may outlive wrangler by a moment; the group is ours alone.
		syscall.Kill(-pgid, syscall.SIGKILL)
		logFile.Close()
	})
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	// A request that arrives while wrangler is still starting may hang: give up on it and ask
	// again. The first answer compiles the module, a second or a few.
	client := &http.Client{Timeout: 10 * time.Second}
	start := time.Now()
	for deadline := time.Now().Add(90 * time.Second); ; {
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("wrangler dev exited (%v) before the Worker answered:\n%s", err, readLog(logPath))
		default:
		}
		resp, err := client.Get(url + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the Worker did not answer /healthz within 90 s (last: %v):\n%s", err, readLog(logPath))
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("wrangler dev answered after %v", time.Since(start).Round(time.Millisecond))
	return url, pgid
}

// measure reports the Worker's latency (client side) and CPU time (its workerd processes, from
// /proc) per request, for every route, requests sent one at a time. The native handler's latency
// is given beside it.
func measure(t *testing.T, worker, native string, pgid int) {
	const n = 10
	for _, c := range []struct{ name, method, path, body string }{
		{"healthz", "GET", "/healthz", ""},
		{"fill-mask", "POST", "/api/fill-mask", `{"text":"paris is the [MASK] of france","top_k":5}`},
		{"tokenize", "POST", "/api/tokenize", `{"text":"paris is the capital of france"}`},
		{"attention", "POST", "/api/attention", `{"text":"paris is the capital of france","layer":1}`},
		{"embed x4", "POST", "/api/embed", `{"texts":["paris","is the","capital of","france"],"pooling":"mean"}`},
	} {
		lat := func(url string) []time.Duration {
			var d []time.Duration
			for i := 0; i < n; i++ {
				s := time.Now()
				if code, _, body := send(t, url, c.method, c.path, c.body); code != http.StatusOK {
					t.Fatalf("%s: %d %s", c.name, code, body)
				}
				d = append(d, time.Since(s))
			}
			slices.Sort(d)
			return d
		}
		cpu0, ok := cpuTicks(pgid)
		wl := lat(worker)
		cpu1, _ := cpuTicks(pgid)
		nl := lat(native)
		cpuMsg := "CPU time not measured (no /proc)"
		if ok {
			cpuMsg = fmt.Sprintf("workerd CPU %.1f ms/request", float64(cpu1-cpu0)*1000/float64(clockTicks)/n)
		}
		t.Logf("%-9s Worker latency median %6.1f ms, max %6.1f ms; %s; native median %.2f ms",
			c.name, ms(wl[n/2]), ms(wl[n-1]), cpuMsg, ms(nl[n/2]))
	}
}

// clockTicks is USER_HZ, the unit of utime and stime in /proc/PID/stat (100 on Linux).
const clockTicks = 100

// cpuTicks sums the user and system CPU time of the workerd processes in process group pgid.
func cpuTicks(pgid int) (int64, bool) {
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil || len(stats) == 0 {
		return 0, false
	}
	var sum int64
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		s := string(b)
		open, close := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || close < open || s[open+1:close] != "workerd" {
			continue
		}
		f := strings.Fields(s[close+1:]) // state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime
		if len(f) < 13 || f[2] != strconv.Itoa(pgid) {
			continue
		}
		u, _ := strconv.ParseInt(f[11], 10, 64)
		st, _ := strconv.ParseInt(f[12], 10, 64)
		sum += u + st
	}
	return sum, true
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// differ returns where a and b (decoded JSON) differ, "" when they agree; numbers agree within
// float32 rounding of the kernels.
func differ(a, b any, at string) string {
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok || len(av) != len(bv) {
			return at
		}
		for k := range av {
			if w := differ(av[k], bv[k], at+"."+k); w != "" {
				return w
			}
		}
		return ""
	case []any:
		bv, ok := b.([]any)
		if !ok || len(av) != len(bv) {
			return at
		}
		for i := range av {
			if w := differ(av[i], bv[i], fmt.Sprintf("%s[%d]", at, i)); w != "" {
				return w
			}
		}
		return ""
	case float64:
		bv, ok := b.(float64)
		if !ok || math.Abs(av-bv) > 1e-4+1e-4*math.Abs(bv) {
			return at
		}
		return ""
	}
	if !reflect.DeepEqual(a, b) {
		return at
	}
	return ""
}

func send(t *testing.T, base, method, path, body string) (int, string, []byte) {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, base+path, r)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	client := &http.Client{
		Timeout:       30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s%s: %v", method, base, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s%s: %v", method, base, path, err)
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), b
}

func runCmd(t *testing.T, dir string, env []string, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// sizes reports a file's size and its gzip size (Workers' limits apply to the compressed upload).
func sizes(t *testing.T, path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var z bytes.Buffer
	w, _ := gzip.NewWriterLevel(&z, gzip.BestCompression)
	w.Write(b)
	w.Close()
	return fmt.Sprintf("%.2f MiB, %.2f MiB gzipped", float64(len(b))/(1<<20), float64(z.Len())/(1<<20))
}

func readLog(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

func short(s string) string {
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}
