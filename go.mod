module github.com/bertlab/bertlab

go 1.26.0

require (
	golang.org/x/sys v0.50.0
	golang.org/x/text v0.44.0
	gonum.org/v1/gonum v0.17.0
)
