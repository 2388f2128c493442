package ui

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// Views of the page, as they appear in the URL fragment.
const (
	ViewMask      = "mask"
	ViewAttention = "attention"
)

// Route is the page state that the URL fragment carries, so that a view can be shared:
// #mask?text=...&masks=2,5 or #attention?text=...&masks=2&layer=1&head=0.
type Route struct {
	View  string
	Text  string
	Masks []int // word ids, ascending
	Layer int
	Head  int
}

// ParseRoute reads a location.hash ("#mask?text=..."); what it cannot read keeps its default.
func ParseRoute(hash string) (Route, bool) {
	hash = strings.TrimPrefix(hash, "#")
	if hash == "" {
		return Route{View: ViewMask}, false
	}
	view, query, _ := strings.Cut(hash, "?")
	r := Route{View: ViewMask}
	if view == ViewAttention {
		r.View = view
	}
	q, _ := url.ParseQuery(query)
	r.Text = q.Get("text")
	for _, s := range strings.Split(q.Get("masks"), ",") {
		if n, err := strconv.Atoi(strings.TrimSpace(s)); err == nil && n >= 0 && !slices.Contains(r.Masks, n) {
			r.Masks = append(r.Masks, n)
		}
	}
	slices.Sort(r.Masks)
	r.Layer, _ = strconv.Atoi(q.Get("layer"))
	r.Head, _ = strconv.Atoi(q.Get("head"))
	r.Layer, r.Head = max(r.Layer, 0), max(r.Head, 0)
	return r, q.Has("text")
}

// Hash writes the route as a URL fragment: the view, then text, masks, layer and head.
func (r Route) Hash() string {
	// Spaces as %20 rather than "+" and commas left as they are: easier to read, copy and paste
	// in an address bar, and ParseRoute reads both spellings.
	esc := func(s string) string { return strings.ReplaceAll(url.QueryEscape(s), "+", "%20") }
	var b strings.Builder
	view := ViewMask
	if r.View == ViewAttention {
		view = ViewAttention
	}
	b.WriteString("#" + view + "?text=" + esc(r.Text))
	if len(r.Masks) > 0 {
		s := make([]string, len(r.Masks))
		for i, m := range r.Masks {
			s[i] = strconv.Itoa(m)
		}
		b.WriteString("&masks=" + strings.Join(s, ","))
	}
	if view == ViewAttention {
		fmt.Fprintf(&b, "&layer=%d&head=%d", r.Layer, r.Head)
	}
	return b.String()
}
