package ui

import (
	"github.com/vugu/vugu"
)

// Root is the page: header, sentence box, view tabs and the selected view.
type Root struct {
	App *App
}

func (c *Root) tabClass(view string) string {
	if c.App.View == view && c.App.Lesson == 0 {
		return "tab active"
	}
	return "tab"
}

func (c *Root) lessonsTabClass() string {
	if c.App.Lesson > 0 {
		return "tab active"
	}
	return "tab"
}

func (c *Root) busyClass() string {
	if c.App.Busy() {
		return "status busy"
	}
	return "status"
}

func (c *Root) busyText() string {
	switch {
	case c.App.Busy() && !c.App.Loaded:
		return "loading"
	case c.App.Busy():
		return "computing"
	}
	return "ready"
}

func (c *Root) modelNote() string {
	return c.App.Model.Note
}

// keydown commits the text box on Enter (Shift+Enter still starts a new line).
func (c *Root) keydown(e vugu.DOMEvent) {
	if e.PropString("key") == "Enter" && !e.PropBool("shiftKey") {
		e.PreventDefault()
		c.App.Commit()
	}
}
