package tinydatabuild

import (
	"html"
	"strings"
)

// HTMLSections returns the prose of an HTML page of documentation (Sphinx, DocBook, mdBook, as
// Debian ships them), section by section: a heading (h1 to h6) starts a new section, and each
// section is the list of its paragraphs' texts. A paragraph is a <p> element or a DocBook
// <div class="para">, its inline markup dropped, entities decoded and white space collapsed to
// single spaces. Only prose counts: a paragraph stops at the first block element inside it (a
// list, table, code block or nested div), whose text is left out; paragraphs that are titles
// (a class naming "title" or "rubric", as DocBook's sidebars and Sphinx's admonitions have),
// and everything inside <pre>, <script>, <style>, <nav>, <table>, <head> and <footer>, are left
// out. It never fails: malformed markup just yields less text.
func HTMLSections(page string) [][]string {
	var (
		sections [][]string
		cur      []string
		text     strings.Builder
		inPara   string // the element that opened the current paragraph: "p" or "div"
		divDepth int    // open divs inside a "div" paragraph
		stopped  bool   // a block element ended the paragraph's prose
		skip     []string
	)
	flush := func() {
		if inPara != "" && !stopped {
			if t := strings.Join(strings.Fields(html.UnescapeString(text.String())), " "); t != "" {
				cur = append(cur, t)
			}
		}
		text.Reset()
		stopped = true
	}
	endSection := func() {
		if len(cur) > 0 {
			sections = append(sections, cur)
		}
		cur = nil
	}
	for len(page) > 0 {
		lt := strings.IndexByte(page, '<')
		if lt < 0 {
			lt = len(page)
		}
		if len(skip) == 0 && inPara != "" && !stopped {
			text.WriteString(page[:lt])
		}
		page = page[lt:]
		if page == "" {
			break
		}
		if strings.HasPrefix(page, "<!--") {
			end := strings.Index(page, "-->")
			if end < 0 {
				break
			}
			page = page[end+3:]
			continue
		}
		gt := strings.IndexByte(page, '>')
		if gt < 0 {
			break
		}
		tag := page[1:gt]
		page = page[gt+1:]
		closing := strings.HasPrefix(tag, "/")
		name, attrs, _ := strings.Cut(strings.TrimPrefix(tag, "/"), " ")
		name = strings.ToLower(strings.TrimSuffix(strings.TrimSpace(name), "/"))
		if i := strings.IndexAny(name, "\t\n\r"); i >= 0 {
			attrs = name[i:] + " " + attrs
			name = name[:i]
		}
		switch name {
		case "pre", "script", "style", "nav", "table", "head", "footer", "textarea":
			if closing {
				if n := len(skip); n > 0 && skip[n-1] == name {
					skip = skip[:n-1]
				}
			} else {
				if inPara != "" {
					flush()
				}
				skip = append(skip, name)
			}
			continue
		}
		if len(skip) > 0 {
			continue
		}
		switch {
		case len(name) == 2 && name[0] == 'h' && name[1] >= '1' && name[1] <= '6':
			if !closing {
				if inPara != "" {
					flush()
					inPara, divDepth = "", 0
				}
				endSection()
			}
		case name == "p":
			if inPara == "p" {
				flush()
				inPara = ""
			}
			if !closing && inPara == "" {
				inPara, stopped = "p", isTitleClass(attrs)
				text.Reset()
			}
		case name == "div":
			switch {
			case inPara == "div" && closing && divDepth == 0:
				flush()
				inPara = ""
			case inPara == "div" && closing:
				divDepth--
			case inPara == "div":
				divDepth++
				flush()
			case inPara == "p" && !closing:
				flush()
			case !closing && inPara == "" && hasClass(attrs, "para"):
				inPara, divDepth, stopped = "div", 0, false
				text.Reset()
			}
		case name == "br":
			if inPara != "" && !stopped {
				text.WriteByte(' ')
			}
		case name == "ul" || name == "ol" || name == "dl" || name == "li" || name == "dd" || name == "dt" ||
			name == "blockquote" || name == "figure" || name == "img" || name == "section":
			if inPara != "" && !closing {
				flush()
			}
		}
	}
	if inPara != "" {
		flush()
	}
	endSection()
	return sections
}

// hasClass reports whether the attributes of a tag give it class c.
func hasClass(attrs, c string) bool {
	for _, v := range classes(attrs) {
		if v == c {
			return true
		}
	}
	return false
}

func isTitleClass(attrs string) bool {
	for _, v := range classes(attrs) {
		if strings.Contains(v, "title") || strings.Contains(v, "rubric") {
			return true
		}
	}
	return false
}

// classes returns the words of a tag's class attribute ("" or ” quoted).
func classes(attrs string) []string {
	i := strings.Index(attrs, "class=")
	if i < 0 {
		return nil
	}
	v := attrs[i+len("class="):]
	if v == "" {
		return nil
	}
	q := v[0]
	if q != '"' && q != '\'' {
		end := strings.IndexAny(v, " \t\n/")
		if end < 0 {
			end = len(v)
		}
		return []string{v[:end]}
	}
	end := strings.IndexByte(v[1:], q)
	if end < 0 {
		return nil
	}
	return strings.Fields(v[1 : 1+end])
}
