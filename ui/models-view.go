package ui

import (
	"errors"
	"fmt"
	"strings"

	"github.com/vugu/vugu"
	"github.com/vugu/vugu/js"
)

// ModelsView is "Models": the loaded model's config, parameter count and heads, and loading a
// BERT folder of the user's own from a file picker or by drag and drop.
type ModelsView struct {
	App *App

	over bool // files are dragged over the drop zone
}

func (c *ModelsView) config() [][2]string {
	i := c.App.Info
	cf := i.Config
	act := cf.HiddenAct
	if act == "" {
		act = "gelu"
	}
	rows := [][2]string{
		{"layers", fmt.Sprint(cf.NumHiddenLayers)},
		{"hidden", fmt.Sprint(cf.HiddenSize)},
		{"heads", fmt.Sprint(cf.NumAttentionHeads)},
		{"intermediate", fmt.Sprint(cf.IntermediateSize)},
		{"vocab", fmt.Sprint(cf.VocabSize)},
		{"positions", fmt.Sprint(cf.MaxPositionEmbeddings)},
		{"act", act},
		{"parameters", groupDigits(i.Parameters)},
	}
	if t := tokenizerNames[i.Tokenizer]; t != "" {
		rows = append(rows, [2]string{"tokenizer", t + ", mask " + i.MaskToken})
	}
	return rows
}

// tokenizerNames name the engine's kinds of tokenizer as the Models view shows them.
var tokenizerNames = map[string]string{"wordpiece": "WordPiece", "bpe": "byte-level BPE", "unigram": "SentencePiece Unigram"}

func (c *ModelsView) heads() string { return strings.Join(c.App.Info.Heads, ", ") }

func (c *ModelsView) limit() string { return humanBytes(MaxBrowserWeights) }

func (c *ModelsView) dropClass() string {
	if c.over {
		return "dropzone over"
	}
	return "dropzone"
}

func (c *ModelsView) dragOver(e vugu.DOMEvent) {
	e.PreventDefault()
	c.over = true
}

func (c *ModelsView) dragLeave() { c.over = false }

// drop loads what was dropped: files, or whole folders. A folder shows up in
// dataTransfer.files as an unreadable entry, so the items are asked for their file-system
// entries (webkitGetAsEntry, which only answers while the event is dispatched) and the
// folders are read after the handler returns.
func (c *ModelsView) drop(e vugu.DOMEvent) {
	e.PreventDefault()
	c.over = false
	dt := e.JSEvent().Get("dataTransfer")
	entries, dirs := dropEntries(dt)
	if dirs == 0 {
		c.App.LoadLocal(fileList(dt.Get("files")))
		return
	}
	a := c.App
	a.LoadErr, a.LoadMsg = "", ""
	a.busy++
	a.Loading = true
	a.spawn(func() {
		var files []LocalFile
		var err error
		for _, ent := range entries {
			if err = readEntry(ent, &files, 0); err != nil {
				break
			}
		}
		a.Do(func() {
			a.busy--
			a.Loading = false
			if err != nil {
				a.LoadErr = "reading the dropped folder: " + err.Error()
				return
			}
			a.LoadLocal(files)
		})
	})
}

// dropEntries returns the file-system entries of a drop's items, and how many are folders.
func dropEntries(dt js.Value) (entries []js.Value, dirs int) {
	items := dt.Get("items")
	if items.IsUndefined() || items.IsNull() {
		return nil, 0
	}
	for i := range items.Length() {
		it := items.Index(i)
		if it.Get("kind").String() != "file" || it.Get("webkitGetAsEntry").Type() != js.TypeFunction {
			continue
		}
		ent := it.Call("webkitGetAsEntry")
		if ent.IsNull() || ent.IsUndefined() {
			continue
		}
		if ent.Get("isDirectory").Truthy() {
			dirs++
		}
		entries = append(entries, ent)
	}
	return entries, dirs
}

// Bounds on reading a dropped folder: a whole disk dropped by mistake is not walked.
const (
	maxDropFiles = 20000
	maxDropDepth = 8
)

// readEntry appends the files under a FileSystemEntry to out, with their paths in the drop
// (a folder's files as FOLDER/NAME). Folders whose names start with "." (.git, .cache) are
// skipped. It blocks on the browser's callbacks: call it from a goroutine.
func readEntry(ent js.Value, out *[]LocalFile, depth int) error {
	if len(*out) >= maxDropFiles {
		return fmt.Errorf("more than %d files: drop the model's folder itself", maxDropFiles)
	}
	name := ent.Get("name").String()
	if !ent.Get("isDirectory").Truthy() {
		res, err := await(func(ok, fail js.Value) { ent.Call("file", ok, fail) })
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		f := res[0]
		*out = append(*out, LocalFile{Name: name, Path: strings.TrimPrefix(ent.Get("fullPath").String(), "/"), Size: int64(f.Get("size").Float()), Handle: f})
		return nil
	}
	if depth > 0 && strings.HasPrefix(name, ".") {
		return nil
	}
	if depth >= maxDropDepth {
		return nil
	}
	r := ent.Call("createReader")
	for {
		// readEntries answers in batches (100 in Chromium) until it answers none.
		res, err := await(func(ok, fail js.Value) { r.Call("readEntries", ok, fail) })
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		batch := res[0]
		if batch.Length() == 0 {
			return nil
		}
		for i := range batch.Length() {
			if err := readEntry(batch.Index(i), out, depth+1); err != nil {
				return err
			}
		}
	}
}

// await calls start with a success and a failure callback and waits for one of them.
func await(start func(ok, fail js.Value)) ([]js.Value, error) {
	type answer struct {
		args []js.Value
		err  error
	}
	ch := make(chan answer, 1)
	ok := js.FuncOf(func(_ js.Value, args []js.Value) any {
		ch <- answer{args: append([]js.Value(nil), args...)}
		return nil
	})
	fail := js.FuncOf(func(_ js.Value, args []js.Value) any {
		msg := "failed"
		if len(args) > 0 {
			msg = args[0].Call("toString").String()
		}
		ch <- answer{err: errors.New(msg)}
		return nil
	})
	start(ok.Value, fail.Value)
	a := <-ch
	ok.Release()
	fail.Release()
	return a.args, a.err
}

func (c *ModelsView) picked(e vugu.DOMEvent) {
	input := e.JSEventTarget()
	files := fileList(input.Get("files"))
	// Picking the same files again must fire change again.
	input.Set("value", "")
	c.App.LoadLocal(files)
}

// fileList turns a FileList into LocalFiles.
func fileList(list js.Value) []LocalFile {
	if list.IsUndefined() || list.IsNull() {
		return nil
	}
	var out []LocalFile
	for i := range list.Length() {
		f := list.Index(i)
		lf := LocalFile{Name: f.Get("name").String(), Size: int64(f.Get("size").Float()), Handle: f}
		if p := f.Get("webkitRelativePath"); p.Type() == js.TypeString {
			lf.Path = p.String()
		}
		out = append(out, lf)
	}
	return out
}
