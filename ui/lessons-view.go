package ui

import (
	"fmt"

	"github.com/vugu/vugu"
	"github.com/vugu/vugu/js"
)

// LessonsView is the lesson panel shown above the view a lesson drives: the lessons' numbers
// (done ones ticked), the lesson's text and its task with the page's verdict.
type LessonsView struct {
	App *App
	// check is the verdict computed once per render (the template asks several times).
	check0 *Check
}

func (c *LessonsView) lesson() *Lesson { return c.App.CurrentLesson() }

// html is lesson text as HTML: written in lessons.go, the goal from the URL escaped.
func (c *LessonsView) html(s string) vugu.HTML { return vugu.HTML(c.App.LessonText(s)) }

func (c *LessonsView) number() string {
	return fmt.Sprintf("Lesson %d of %d ·", c.App.Lesson, len(Lessons))
}

// Compute is vugu's hook before each render: the verdict is computed afresh.
func (c *LessonsView) Compute() { c.check0 = nil }

func (c *LessonsView) check() Check {
	if c.check0 == nil {
		ch := c.App.LessonCheck()
		c.check0 = &ch
	}
	return *c.check0
}

func (c *LessonsView) checkAttr() string {
	if c.check().Done {
		return "1"
	}
	return "0"
}

func (c *LessonsView) taskClass() string {
	if c.check().Done {
		return "lessontask done"
	}
	return "lessontask"
}

// doneAttr lists the lessons done, for tests: "1,3".
func (c *LessonsView) doneAttr() string {
	var ids []int
	for i := range Lessons {
		if c.App.LessonDone(i + 1) {
			ids = append(ids, i+1)
		}
	}
	return joinIDs(ids)
}

func (c *LessonsView) dotClass(n int) string {
	cls := "lessondot"
	if n == c.App.Lesson {
		cls += " current"
	}
	if c.App.LessonDone(n) {
		cls += " done"
	}
	return cls
}

// Rendered outlines the parts of the real view the lesson speaks of (after every render: the
// views replace their elements as their answers come), marking each with
// data-lesson-highlight="K" (K: the selector's number in Lesson.Highlight), and clears the
// marks that no longer apply.
func (c *LessonsView) Rendered() {
	doc := js.Global().Get("document")
	if !doc.Truthy() {
		return
	}
	var sels []string
	if l := c.lesson(); l != nil {
		for _, sel := range l.Highlight {
			sels = append(sels, "main "+sel+", .sentence "+sel)
		}
	}
	old := doc.Call("querySelectorAll", "[data-lesson-highlight]")
	for i := 0; i < old.Length(); i++ {
		el, keep := old.Index(i), false
		for _, sel := range sels {
			keep = keep || el.Call("matches", sel).Bool()
		}
		if !keep {
			el.Call("removeAttribute", "data-lesson-highlight")
		}
	}
	for k, sel := range sels {
		els := doc.Call("querySelectorAll", sel)
		for i := 0; i < els.Length(); i++ {
			if el, v := els.Index(i), fmt.Sprint(k+1); el.Call("getAttribute", "data-lesson-highlight").String() != v {
				el.Call("setAttribute", "data-lesson-highlight", v)
			}
		}
	}
}
