package tinydatabuild

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// docLicences are the licences of the documentation packages as their copyright files give them
// for "Files: *" (for rust-doc, the paragraph of the rust sources; python3.11-doc's file is not
// machine-readable and holds the PSF licence). The build fails when a copyright file no longer
// says so: read it again and update SOURCES.md's template.
var docLicences = map[string]struct{ Licence, Check string }{
	"libreoffice-help-en-us": {"MPL-2.0", "License: MPL-2.0"},
	"python3.11-doc":         {"PSF-2.0 (Python Software Foundation License Version 2)", "PYTHON SOFTWARE FOUNDATION LICENSE VERSION 2"},
	"python-django-doc":      {"BSD-3-Clause", "License: BSD-3-Clause"},
	"python-sqlalchemy-doc":  {"Expat (MIT)", "License: Expat"},
	"python-pandas-doc":      {"BSD-3", "License: BSD-3"},
	"python-sklearn-doc":     {"BSD-3-Clause", "License: BSD-3-Clause"},
	"python-scipy-doc":       {"BSD-3-clause", "License: BSD-3-clause"},
	"rust-doc":               {"MIT or Apache-2.0", "License: MIT or Apache-2.0"},
	"git-doc":                {"GPL-2", "License: GPL-2"},
	"r-doc-html":             {"GPL-2", "License: GPL-2"},
	"linux-doc-6.1":          {"GPL-2", "License: GPL-2"},
	"postgresql-doc-15":      {"PostgreSQL", "License: PostgreSQL"},
	"debian-handbook":        {"GPL-2.0+ or CC-BY-SA-3.0", "License: GPL-2.0+ or CC-BY-SA-3.0"},
}

// DocLicence is one row of SOURCES.md's table of the documentation's licences.
type DocLicence struct {
	Name, Package, Licence, Copyright, Upstream string
}

// Notice is a licence text quoted in SOURCES.md.
type Notice struct {
	Title, From, Text string
}

// corpusLicences reads the copyright files of the corpus's packages: the table of licences and
// the notices that the licences ask to keep with copies.
func corpusLicences(root string) ([]DocLicence, []Notice, error) {
	doc := filepath.Join(root, "usr/share/doc")
	var rows []DocLicence
	var notices []Notice
	for _, src := range DocSources {
		l, ok := docLicences[src.Package]
		if !ok {
			return nil, nil, fmt.Errorf("%s: no licence recorded", src.Package)
		}
		path := filepath.Join(doc, src.Package, "copyright")
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, nil, err
		}
		if !strings.Contains(string(b), l.Check) {
			return nil, nil, fmt.Errorf("%s: the copyright file no longer says %q: read it and update SOURCES.md", src.Package, l.Check)
		}
		row := DocLicence{Name: src.Name, Package: src.Package, Licence: l.Licence}
		if d, err := readDEP5(path); err == nil {
			row.Upstream = d.field("source")
			if c, _, err := d.files("*"); err == nil {
				row.Copyright = strings.Join(strings.Fields(c), " ")
			}
		}
		rows = append(rows, row)
	}
	// The texts that must go with copies: the permissive licences' own words.
	for _, n := range []struct{ pkg, licence, title string }{
		{"postgresql-doc-15", "PostgreSQL", "PostgreSQL licence (postgresql-doc-15)"},
		{"python-django-doc", "BSD-3-Clause", "BSD-3-Clause (python-django-doc)"},
		{"python-pandas-doc", "BSD-3", "BSD-3 (python-pandas-doc)"},
		{"python-sklearn-doc", "BSD-3-Clause", "BSD-3-Clause (python-sklearn-doc)"},
		{"python-scipy-doc", "BSD-3-clause", "BSD-3-clause (python-scipy-doc)"},
		{"python-sqlalchemy-doc", "Expat", "Expat (python-sqlalchemy-doc)"},
		{"rust-doc", "MIT", "MIT (rust-doc)"},
	} {
		path := filepath.Join(doc, n.pkg, "copyright")
		d, err := readDEP5(path)
		if err != nil {
			return nil, nil, err
		}
		text := standaloneLicence(d, n.licence)
		if text == "" {
			return nil, nil, fmt.Errorf("%s: no text of licence %s in its copyright file", n.pkg, n.licence)
		}
		notices = append(notices, Notice{Title: n.title, From: "/usr/share/doc/" + n.pkg + "/copyright", Text: text})
	}
	psf, err := psfLicence(filepath.Join(doc, "python3.11-doc/copyright"))
	if err != nil {
		return nil, nil, err
	}
	notices = append(notices, Notice{Title: "Python Software Foundation License Version 2 (python3.11-doc)", From: "/usr/share/doc/python3.11-doc/copyright", Text: psf})
	return rows, notices, nil
}

// standaloneLicence returns the text of a "License: NAME" paragraph that has no Files field.
func standaloneLicence(d dep5, name string) string {
	for _, p := range d {
		if _, isFiles := p["files"]; isFiles {
			continue
		}
		if l := p["license"]; firstLine(l) == name && strings.Contains(l, "\n") {
			_, text, _ := strings.Cut(l, "\n")
			return strings.TrimSpace(text)
		}
	}
	return ""
}

// psfLicence cuts the PSF licence out of Python's copyright file: from its title to the next
// licence's ("BEOPEN").
func psfLicence(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	s := string(b)
	start := strings.Index(s, "PYTHON SOFTWARE FOUNDATION LICENSE VERSION 2")
	if start < 0 {
		return "", fmt.Errorf("%s: no PSF licence", path)
	}
	end := strings.Index(s[start:], "BEOPEN")
	if end < 0 {
		return "", fmt.Errorf("%s: the PSF licence has no end", path)
	}
	return strings.TrimSpace(s[start : start+end]), nil
}

// npmNotice returns the paragraph of an npm package's file that contains marker, or an error
// saying the package no longer says so.
func npmNotice(root, file, marker string) (string, error) {
	b, err := os.ReadFile(filepath.Join(root, file))
	if err != nil {
		return "", err
	}
	for _, para := range strings.Split(strings.ReplaceAll(string(b), "\r\n", "\n"), "\n\n") {
		if strings.Contains(para, marker) {
			return strings.TrimSpace(para), nil
		}
	}
	return "", fmt.Errorf("%s no longer says %q: read it and update SOURCES.md", file, marker)
}
