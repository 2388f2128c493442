// Command tinydata-build writes bertlab's tiny datasets (tinydata/) from Debian packages already
// unpacked into one folder. scripts/tinydata.sh downloads and unpacks them and runs it:
//
//	go run ./cmd/tinydata-build -root DIR -out tinydata \
//	    -package NAME=VERSION=PINNED=SHA256 [-package ...]
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/bertlab/bertlab/internal/tinydatabuild"
)

type packages []tinydatabuild.Package

func (p *packages) String() string { return fmt.Sprint(*p) }

func (p *packages) Set(s string) error {
	f := strings.Split(s, "=")
	if len(f) != 4 || f[0] == "" || f[1] == "" {
		return fmt.Errorf("want NAME=VERSION=PINNED=SHA256, got %q", s)
	}
	*p = append(*p, tinydatabuild.Package{Name: f[0], Version: f[1], Pinned: f[2], SHA256: f[3]})
	return nil
}

func main() {
	var cfg tinydatabuild.Config
	var pkgs packages
	out := flag.String("out", "tinydata", "the tinydata folder to write")
	flag.StringVar(&cfg.Root, "root", "", "the folder the .deb files were unpacked into")
	flag.Var(&pkgs, "package", "NAME=VERSION=PINNED=SHA256 of a package used (repeat)")
	flag.Parse()
	if cfg.Root == "" || len(pkgs) == 0 || flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	cfg.Packages = pkgs
	files, err := tinydatabuild.Build(cfg)
	if err == nil {
		err = tinydatabuild.Write(*out, files)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "tinydata-build:", err)
		os.Exit(1)
	}
	for _, f := range files {
		fmt.Printf("%9d  %s\n", len(f.Data), f.Path)
	}
}
