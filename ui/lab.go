package ui

import (
	"fmt"
	"strconv"
	"strings"
)

// NumSteps is how many operations the "Inside a layer" view walks through (pipeline.Steps).
const NumSteps = 10

// NSPCount is how many next-sentence instances the masking lab shows.
const NSPCount = 6

// numLayers is the loaded model's layer count (1 before a model is loaded).
func (a *App) numLayers() int {
	if a.Info != nil && a.Info.Config.NumHiddenLayers > 0 {
		return a.Info.Config.NumHiddenLayers
	}
	return 1
}

// fetchSteps asks the engine for the walk through the selected layer for the selected token,
// unless it is already shown. Called with the render lock held.
func (a *App) fetchSteps() {
	if !a.Loaded || a.View != ViewSteps || a.Tok == nil || len(a.Tok.Tokens) == 0 {
		return
	}
	a.Layer = min(max(a.Layer, 0), a.numLayers()-1)
	a.Token = min(max(a.Token, 0), len(a.Tok.Tokens)-1)
	a.StepI = min(max(a.StepI, 0), NumSteps-1)
	text, layer, token := a.MaskedText, a.Layer, a.Token
	key := fmt.Sprintf("%d|%d|%s", layer, token, text)
	if a.Steps != nil && a.stepsKey == key {
		return
	}
	a.stepsReq++
	n := a.stepsReq
	a.busy++
	a.spawn(func() {
		defer a.Do(func() { a.busy-- })
		r, err := a.Eng.Steps(text, layer, token)
		a.Do(func() {
			if n != a.stepsReq {
				return
			}
			if err != nil {
				a.Err = err.Error()
				return
			}
			a.Steps, a.stepsKey = r, key
			a.stepsGen++
		})
	})
}

// SelectToken makes token position i the one the step view follows.
func (a *App) SelectToken(i int) {
	a.Token = i
	a.fetchSteps()
	a.writeRoute()
}

// GoStep shows step i of the walk.
func (a *App) GoStep(i int) {
	a.StepI = min(max(i, 0), NumSteps-1)
	a.writeRoute()
}

// StepBy moves through the walk by d steps (stopping at either end).
func (a *App) StepBy(d int) { a.GoStep(a.StepI + d) }

// LayerBy moves the step view to another layer, wrapping around.
func (a *App) LayerBy(d int) {
	L := a.numLayers()
	a.Layer = ((a.Layer+d)%L + L) % L
	a.writeRoute()
	a.fetchSteps()
}

// stepKey handles the arrow keys in the step view: ← → steps, ↑ ↓ layers.
func (a *App) stepKey(key string) bool {
	switch key {
	case "ArrowLeft":
		a.StepBy(-1)
	case "ArrowRight":
		a.StepBy(1)
	case "ArrowUp":
		a.LayerBy(-1)
	case "ArrowDown":
		a.LayerBy(1)
	default:
		return false
	}
	return true
}

// LabText is the text the masking lab masks: the chosen corpus sample, else the sentence.
func (a *App) LabText() string {
	if a.Sample > 0 && a.Sample <= len(a.Samples) {
		return a.Samples[a.Sample-1]
	}
	return a.Text
}

// fetchLab asks the engine for the masking of the lab's text and for the NSP pairs, unless
// they are already shown. Called with the render lock held.
func (a *App) fetchLab() {
	if !a.Loaded || a.View != ViewMasking {
		return
	}
	if a.Sample > 0 && a.Samples == nil {
		a.busy++
		a.spawn(func() {
			defer a.Do(func() { a.busy-- })
			s, err := a.Eng.Samples()
			a.Do(func() {
				if err != nil {
					a.Err = err.Error()
					return
				}
				if len(s) == 0 {
					s = []string{}
				}
				a.Samples = s
				a.Sample = min(a.Sample, len(s))
				a.writeRoute()
				a.fetchLab()
			})
		})
		return
	}
	text, seed, ww := a.LabText(), a.Seed, a.WholeWord
	key := fmt.Sprintf("%d|%v|%s", seed, ww, text)
	if a.Lab == nil || a.labKey != key {
		a.labReq++
		n := a.labReq
		a.busy++
		a.spawn(func() {
			defer a.Do(func() { a.busy-- })
			r, err := a.Eng.MaskLab(text, seed, ww)
			a.Do(func() {
				if n != a.labReq {
					return
				}
				if err != nil {
					a.Err = err.Error()
					return
				}
				a.Lab, a.labKey = r, key
			})
		})
	}
	if nk := strconv.Itoa(seed); a.nspKey != nk {
		a.nspReq++
		n := a.nspReq
		a.busy++
		a.spawn(func() {
			defer a.Do(func() { a.busy-- })
			pairs, err := a.Eng.NSPPairs(seed, NSPCount)
			a.Do(func() {
				if n != a.nspReq {
					return
				}
				if err != nil {
					a.Err = err.Error()
					return
				}
				a.NSP, a.nspKey = pairs, nk
			})
		})
	}
}

// Reroll draws new masks and pairs: the next seed.
func (a *App) Reroll() { a.SetSeed(strconv.Itoa(a.Seed + 1)) }

// SetSeed takes the seed box's value.
func (a *App) SetSeed(s string) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 0 {
		return
	}
	a.Seed = n
	a.writeRoute()
	a.fetchLab()
}

// ToggleWholeWord switches whole-word masking on or off.
func (a *App) ToggleWholeWord() {
	a.WholeWord = !a.WholeWord
	a.writeRoute()
	a.fetchLab()
}

// SampleBy shows another corpus sample: d sentences on (the first one from the sentence box).
func (a *App) SampleBy(d int) {
	if n := len(a.Samples); n > 0 {
		a.Sample = ((max(a.Sample, 1)-1+d)%n+n)%n + 1
	} else {
		a.Sample = max(a.Sample+d, 1)
	}
	a.writeRoute()
	a.fetchLab()
}

// UseLabText masks the sentence of the text box again.
func (a *App) UseLabText() {
	a.Sample = 0
	a.writeRoute()
	a.fetchLab()
}
