//go:build js && wasm

package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"syscall/js"

	coreengine "github.com/bertlab/bertlab/core/engine"
)

// serveFamilyLab adds the family lab's functions to the `bertlab` object:
//
//	bertlab.familyStart(requestJSON) -> engine.FamilyInfo (a new race, engine.FamilyRequest)
//	bertlab.familyStep() -> engine.FamilyEvents: the race's next step or evaluation
//	bertlab.familyStop() -> engine.FamilyEvents with done: ends the race where it is
//
// (The recorded native run, assets/family/record.json, is fetched by the worker itself:
// assets/worker.js's familyRecord.)
func serveFamilyLab(e *engine, api js.Value) {
	api.Set("familyStart", jsFunc(e.familyStart))
	api.Set("familyStep", jsFunc(e.familyStep))
	api.Set("familyStop", jsFunc(e.familyStop))
}

func (e *engine) familyStart(args []js.Value) (any, error) {
	text, err := textArg(args, "familyStart: want (requestJSON)")
	if err != nil {
		return nil, err
	}
	var req coreengine.FamilyRequest
	if err := json.Unmarshal([]byte(text), &req); err != nil {
		return nil, fmt.Errorf("familyStart: %w", err)
	}
	return e.e.FamilyStart(req)
}

func (e *engine) familyStep([]js.Value) (any, error) {
	return e.e.FamilyStep(context.Background())
}

func (e *engine) familyStop([]js.Value) (any, error) {
	return e.e.FamilyStop()
}
