// Command corpus-build turns the text of ../shared/data (public-repository files that the
// project never commits) into the built-in model's everyday corpus and evaluation sets under
// build/corpus (scripts/pretrain.sh runs it; see internal/shareddata):
//
//	go run ./cmd/corpus-build -data ../shared/data -out build/corpus
//
// Every file's SHA-256 is checked; a missing file is named with where it comes from.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/bertlab/bertlab/internal/shareddata"
)

func main() {
	data := flag.String("data", "../shared/data", "the folder holding the shared data files")
	out := flag.String("out", "build/corpus", "the folder to write")
	check := flag.Bool("check", false, "only check that every file is there with its SHA-256")
	flag.Parse()
	if flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	if *check {
		if err := shareddata.Check(*data); err != nil {
			fmt.Fprintln(os.Stderr, "corpus-build:", err)
			os.Exit(1)
		}
		fmt.Printf("%s: all %d files present, sha256 checked\n", *data, len(shareddata.All))
		return
	}
	st, err := shareddata.Build(*data, *out)
	if err != nil {
		fmt.Fprintln(os.Stderr, "corpus-build:", err)
		os.Exit(1)
	}
	fmt.Print(st.Markdown())
}
