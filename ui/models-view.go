package ui

import (
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
	return [][2]string{
		{"layers", fmt.Sprint(cf.NumHiddenLayers)},
		{"hidden", fmt.Sprint(cf.HiddenSize)},
		{"heads", fmt.Sprint(cf.NumAttentionHeads)},
		{"intermediate", fmt.Sprint(cf.IntermediateSize)},
		{"vocab", fmt.Sprint(cf.VocabSize)},
		{"positions", fmt.Sprint(cf.MaxPositionEmbeddings)},
		{"act", act},
		{"parameters", groupDigits(i.Parameters)},
	}
}

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

func (c *ModelsView) drop(e vugu.DOMEvent) {
	e.PreventDefault()
	c.over = false
	c.App.LoadLocal(fileList(e.JSEvent().Get("dataTransfer").Get("files")))
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
