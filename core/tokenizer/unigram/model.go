package unigram

import (
	"fmt"
	"math"
	"unicode/utf8"
)

// unkPenalty is what an unknown character costs below the lowest piece score
// (sentencepiece's and HuggingFace's kUnkPenalty).
const unkPenalty = 10.0

// Model is a Unigram language model over pieces: segmentation picks the
// split of a text whose pieces' log-probabilities sum highest (Viterbi).
type Model struct {
	pieces       []string
	scores       []float64
	ids          map[string]int
	unk          int // -1: none
	byteFallback bool
	byteIDs      [256]int // -1 where the byte piece is absent
	minScore     float64
	// trie holds the pieces byte by byte: edges maps node<<8|byte to the
	// child node, and leaf[node] is the id of the piece ending there or -1.
	edges map[uint64]int32
	leaf  []int32
}

func (m *Model) addToTrie(p string, id int) {
	node := int32(0)
	for i := 0; i < len(p); i++ {
		k := uint64(node)<<8 | uint64(p[i])
		child, ok := m.edges[k]
		if !ok {
			child = int32(len(m.leaf))
			m.leaf = append(m.leaf, -1)
			m.edges[k] = child
		}
		node = child
	}
	m.leaf[node] = int32(id)
}

// NewModel makes a Unigram model from pieces and their scores. unk is the id
// of the unknown piece, or -1 for none. With byteFallback, characters that no
// piece covers become the pieces <0x00>..<0xFF> of their UTF-8 bytes when all
// of those exist.
func NewModel(pieces []string, scores []float64, unk int, byteFallback bool) (*Model, error) {
	if len(pieces) != len(scores) {
		return nil, fmt.Errorf("unigram: %d pieces but %d scores", len(pieces), len(scores))
	}
	if len(pieces) == 0 {
		return nil, fmt.Errorf("unigram: empty vocabulary")
	}
	if unk >= len(pieces) || unk < -1 {
		return nil, fmt.Errorf("unigram: unk_id %d out of range [0, %d)", unk, len(pieces))
	}
	m := &Model{pieces: pieces, scores: scores, ids: make(map[string]int, len(pieces)), unk: unk, byteFallback: byteFallback, minScore: math.Inf(1),
		edges: make(map[uint64]int32, len(pieces)), leaf: []int32{-1}}
	for i, p := range pieces {
		// A piece listed twice is the last one, as in HuggingFace's
		// token_to_ids.
		m.ids[p] = i
		m.addToTrie(p, i)
		if math.IsNaN(scores[i]) {
			return nil, fmt.Errorf("unigram: piece %d %q: score is NaN", i, p)
		}
		m.minScore = min(m.minScore, scores[i])
	}
	for b := range m.byteIDs {
		m.byteIDs[b] = -1
		if id, ok := m.ids[fmt.Sprintf("<0x%02X>", b)]; ok {
			m.byteIDs[b] = id
		}
	}
	return m, nil
}

// Size returns the number of pieces.
func (m *Model) Size() int { return len(m.pieces) }

// Piece returns the text of piece id.
func (m *Model) Piece(id int) string {
	if id < 0 || id >= len(m.pieces) {
		return ""
	}
	return m.pieces[id]
}

// ID returns the id of piece, if the vocabulary has it.
func (m *Model) ID(piece string) (int, bool) {
	id, ok := m.ids[piece]
	return id, ok
}

// piece is one token of a segmentation: a byte span of the input and its id.
type piece struct {
	id   int
	s, e int
}

// Segment splits s into pieces by Viterbi, as HuggingFace's Unigram model does
// (encode_optimized): at each character every vocabulary piece starting there
// is a candidate, ties keep the shorter piece, a character no single-character
// piece covers becomes <unk> at the lowest score minus 10, and runs of <unk>
// are fused into one; with byte fallback a piece that is not in the
// vocabulary becomes its bytes' pieces, all with its span.
func (m *Model) Segment(s string) ([]piece, error) {
	type node struct {
		id    int
		score float64
		from  int // -1: unreached
	}
	nodes := make([]node, len(s)+1)
	for i := range nodes {
		nodes[i].from = -1
	}
	unkScore := m.minScore - unkPenalty
	for at := 0; at < len(s); {
		_, mblen := utf8.DecodeRuneInString(s[at:])
		here := nodes[at].score
		single := false
		node := int32(0)
		for l := 1; at+l <= len(s); l++ {
			child, ok := m.edges[uint64(node)<<8|uint64(s[at+l-1])]
			if !ok {
				break
			}
			node = child
			id := int(m.leaf[node])
			if id < 0 {
				continue
			}
			t := &nodes[at+l]
			if c := here + m.scores[id]; t.from < 0 || c > t.score {
				t.score, t.from, t.id = c, at, id
			}
			if l == mblen {
				single = true
			}
		}
		if !single {
			if m.unk < 0 {
				return nil, fmt.Errorf("unigram: %q has no piece and the model has no unk_id", s[at:at+mblen])
			}
			t := &nodes[at+mblen]
			if c := here + unkScore; t.from < 0 || c > t.score {
				t.score, t.from, t.id = c, at, m.unk
			}
		}
		at += mblen
	}
	var rev []piece
	for end := len(s); end > 0; {
		n := nodes[end]
		if n.id == m.unk && len(rev) > 0 && rev[len(rev)-1].id == m.unk && rev[len(rev)-1].s == end {
			rev[len(rev)-1].s = n.from
		} else {
			rev = append(rev, piece{n.id, n.from, end})
		}
		end = n.from
	}
	if len(rev) == 0 {
		return nil, nil
	}
	out := make([]piece, 0, len(rev))
	for i := len(rev) - 1; i >= 0; i-- {
		p := rev[i]
		if p.id == m.unk && m.byteFallback {
			if bs, ok := m.bytePieces(s[p.s:p.e]); ok {
				for _, id := range bs {
					out = append(out, piece{id, p.s, p.e})
				}
				continue
			}
		}
		out = append(out, p)
	}
	return out, nil
}

func (m *Model) bytePieces(s string) ([]int, bool) {
	// A fused unknown span may itself be a piece (HuggingFace looks the
	// fused string up first).
	if id, ok := m.ids[s]; ok {
		return []int{id}, true
	}
	ids := make([]int, len(s))
	for i := 0; i < len(s); i++ {
		if ids[i] = m.byteIDs[s[i]]; ids[i] < 0 {
			return nil, false
		}
	}
	return ids, true
}
