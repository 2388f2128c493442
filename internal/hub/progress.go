package hub

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/bertlab/bertlab/internal/hubid"
)

// bar shows one file's download: a progress bar on a terminal, a line at the start and the
// end elsewhere (logs, pipes, tests), nothing with HF_HUB_DISABLE_PROGRESS_BARS. It is an
// io.Writer counting the bytes that go by.
type bar struct {
	w    io.Writer // nil: silent
	pb   *progressbar.ProgressBar
	name string
	size int64
	n    int64
	t0   time.Time
}

func (c *Client) newBar(ref hubid.Ref, name string, size int64) *bar {
	b := &bar{name: name, size: size, t0: time.Now()}
	if c.Progress == nil || c.NoProgress {
		return b
	}
	b.w = c.Progress
	if f, ok := c.Progress.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		b.pb = progressbar.NewOptions64(size,
			progressbar.OptionSetWriter(c.Progress),
			progressbar.OptionSetDescription(fmt.Sprintf("%s %s", ref.Repo, name)),
			progressbar.OptionShowBytes(true),
			progressbar.OptionSetWidth(24),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionShowCount(),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionClearOnFinish())
		return b
	}
	fmt.Fprintf(b.w, "hub: fetching %s %s (%s)\n", ref, name, sizeText(size))
	return b
}

func (b *bar) Write(p []byte) (int, error) {
	b.n += int64(len(p))
	if b.pb != nil {
		b.pb.Add64(int64(len(p)))
	}
	return len(p), nil
}

// set moves the bar to n bytes (where a resumed download starts).
func (b *bar) set(n int64) {
	b.n = n
	if b.pb != nil {
		b.pb.Set64(n)
	}
}

// note prints a line above the bar.
func (b *bar) note(s string) {
	if b.w == nil {
		return
	}
	if b.pb != nil {
		b.pb.Clear()
	}
	fmt.Fprintf(b.w, "hub: %s: %s\n", b.name, s)
}

func (b *bar) done() {
	if b.w == nil {
		return
	}
	if b.pb != nil {
		b.pb.Finish()
	}
	if d := time.Since(b.t0); b.n > 0 {
		fmt.Fprintf(b.w, "hub: %s: %s in %s\n", b.name, sizeText(b.n), d.Round(time.Millisecond))
	}
}

func sizeText(n int64) string {
	switch {
	case n < 0:
		return "size unknown"
	case n >= 1e9:
		return fmt.Sprintf("%.2f GB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.1f kB", float64(n)/1e3)
	}
	return fmt.Sprintf("%d B", n)
}
