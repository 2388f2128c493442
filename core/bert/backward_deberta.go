package bert

import "github.com/bertlab/bertlab/core/tensor"

// DeBERTa's disentangled attention, backward. For one (sequence, head) pair with queries Q_h and
// keys K_h [S, d], the scaled scores are
//
//	s[i, k] = scale·(Q_h[i]·K_h[k] + Q_h[i]·PK_h[c2p(i, k)] + K_h[k]·PQ_h[p2c(i, k)])
//
// with PK = r·W_Kᵀ + b_K and PQ = r·W_Qᵀ + b_Q [2·span, H] the layer's key and query maps of
// the relative embeddings r (LayerNorm-ed with norm_rel_ebd). Given ds = d loss / d s, the
// relative terms give DQP[i, c2p(i, k)] += ds[i, k] and DKP[k, p2c(i, k)] += ds[i, k]
// ([S, 2·span]), and then d Q_h += scale·DQP·PK_h, d K_h += scale·DKP·PQ_h, d PK_h +=
// scale·DQPᵀ·Q_h, d PQ_h += scale·DKPᵀ·K_h; PK and PQ pass theirs on to W_K, b_K, W_Q, b_Q and
// to r, whose gradient every layer adds to before the LayerNorm's backward gives the relative
// embeddings'.

// disBackward is one layer's share of the disentangled backward.
type disBackward struct {
	job *disentangledJob
	// dqp, dkp are every pair's DQP and DKP: [B·A, S, 2·span] each (nil without c2p or p2c).
	dqp, dkp []float32
}

// relBackward is the backward of the relative embeddings over all layers: their normalised
// values (the layers' input), the LayerNorm statistics, and d loss / d that input.
type relBackward struct {
	normed, mean, rstd []float32 // [2·span, H], [2·span], [2·span]
	d                  []float32 // [2·span, H]
}

// newRelBackward prepares the relative embeddings' backward of a pass (nil without relative
// attention).
func (m *Model) newRelBackward(p *pass) *relBackward {
	dc := m.Config.Disentangled
	if dc == nil || !dc.Relative || m.RelEmb == nil {
		return nil
	}
	H := m.Config.HiddenSize
	n := m.RelEmb.Shape[0]
	r := &relBackward{normed: m.RelEmb.Data, d: make([]float32, n*H)}
	if m.RelLN != nil {
		r.normed, r.mean, r.rstd = make([]float32, n*H), make([]float32, n), make([]float32, n)
		tensor.LayerNorm(r.normed, m.RelEmb.Data, m.RelLN.W.Data, m.RelLN.B.Data, H, p.eps, r.mean, r.rstd)
	}
	return r
}

// newDisBackward prepares layer L's disentangled backward for a pass of B·A pairs.
func (m *Model) newDisBackward(L *Layer, p *pass, pairs int) *disBackward {
	job := m.disentangled(L, p)
	db := &disBackward{job: job}
	W := 2 * job.span
	if job.posK != nil {
		db.dqp = make([]float32, pairs*p.S*W)
	}
	if job.posQ != nil {
		db.dkp = make([]float32, pairs*p.S*W)
	}
	return db
}

// pair is the backward of addDisentangled for pair bh (queries and keys at off, row stride H),
// given ds [S, S]: it adds to d Q_h and d K_h (ws.dq, ws.dk) and keeps DQP and DKP.
func (db *disBackward) pair(ds []float32, bh, off, H, S, d int, scale float32, ws *workspace) {
	D := db.job
	W := 2 * D.span
	hoff := off % H
	if D.posK != nil {
		dqp := db.dqp[bh*S*W : (bh+1)*S*W]
		clear(dqp)
		for i := range S {
			row, idx := dqp[i*W:(i+1)*W], D.c2p[i*S:(i+1)*S]
			for k, v := range ds[i*S : (i+1)*S] {
				row[idx[k]] += v
			}
		}
		tensor.Gemm(false, false, S, d, W, scale, dqp, W, D.posK[hoff:], H, 1, ws.dq[off:], H)
	}
	if D.posQ != nil {
		dkp := db.dkp[bh*S*W : (bh+1)*S*W]
		clear(dkp)
		for i := range S {
			idx := D.p2c[i*S : (i+1)*S]
			for k, v := range ds[i*S : (i+1)*S] {
				dkp[k*W+idx[k]] += v
			}
		}
		tensor.Gemm(false, false, S, d, W, scale, dkp, W, D.posQ[hoff:], H, 1, ws.dk[off:], H)
	}
}

// finish forms d PK and d PQ from every pair, passes them to the layer's key and query maps
// (G's gradients) and adds d r to rb.d. q, k are the layer's queries and keys [B, S, H].
func (db *disBackward) finish(L, G *Layer, q, k []float32, B, S, A, d int, scale float32, rb *relBackward) {
	D := db.job
	W, H := 2*D.span, A*d
	for _, t := range []struct {
		dp, x []float32
		lin   *Linear
		glin  *Linear
	}{{db.dqp, q, &L.Key, &G.Key}, {db.dkp, k, &L.Query, &G.Query}} {
		if t.dp == nil {
			continue
		}
		dpos := make([]float32, W*H) // d PK (or d PQ): [2·span, H], head h in columns h·d…
		for bh := range B * A {
			bi, hd := bh/A, bh%A
			off := bi*S*H + hd*d
			tensor.Gemm(true, false, W, d, S, scale, t.dp[bh*S*W:], W, t.x[off:], H, 1, dpos[hd*d:], H)
		}
		// PK = r·W_Kᵀ + b_K: the map's gradients, and d r += d PK·W_K.
		tensor.LinearBackward(rb.d, t.glin.W.Data, t.glin.B.Data, dpos, rb.normed, t.lin.W.Data, W, H, H, 1)
	}
}

// relEmbBackward adds the relative embeddings' gradient (through their LayerNorm, if any) to g.
func (m *Model) relEmbBackward(rb *relBackward, g *Model) {
	H := m.Config.HiddenSize
	if m.RelLN == nil {
		for i, v := range rb.d {
			g.RelEmb.Data[i] += v
		}
		return
	}
	dIn := make([]float32, len(rb.d))
	tensor.LayerNormBackward(dIn, g.RelLN.W.Data, g.RelLN.B.Data, rb.d, m.RelEmb.Data, m.RelLN.W.Data, rb.mean, rb.rstd, H)
	for i, v := range dIn {
		g.RelEmb.Data[i] += v
	}
}
