package ui

import "testing"

func TestHeadViewLayoutAt(t *testing.T) {
	// Rows 1, 2, 4 on the left (x 0..60), columns 5, 6 on the right (x 280..), 20 px a row from y 28.
	g := headViewLayout{top: 28, rowH: 20, labelRight: 60, rightLeft: 280, rows: []int{1, 2, 4}, cols: []int{5, 6}}
	tests := []struct {
		name    string
		x, y    float64
		i       int
		key, ok bool
	}{
		{"first query", 10, 30, 1, false, true},
		{"third query, on the column's edge", 60, 28 + 2*20 + 19, 4, false, true},
		{"below the queries", 10, 28 + 3*20, 0, false, false},
		{"above the rows (captions)", 10, 20, 0, false, false},
		{"between the columns", 150, 30, 0, false, false},
		{"first key", 280, 30, 5, true, true},
		{"second key", 400, 28 + 20 + 5, 6, true, true},
		{"below the keys (the left column is longer)", 400, 28 + 2*20 + 5, 0, false, false},
		{"left of the canvas", -1, 30, 0, false, false},
	}
	for _, tt := range tests {
		i, key, ok := g.at(tt.x, tt.y)
		if i != tt.i || key != tt.key || ok != tt.ok {
			t.Errorf("%s: at(%v, %v) = %d, %t, %t; want %d, %t, %t", tt.name, tt.x, tt.y, i, key, ok, tt.i, tt.key, tt.ok)
		}
	}
	if _, _, ok := (headViewLayout{}).at(10, 30); ok {
		t.Error("a head view not drawn yet found a token")
	}
}
