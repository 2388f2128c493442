//go:build js && wasm

package main

import (
	"encoding/json"

	"github.com/bertlab/bertlab/core/engine"
)

// The family lab's questions (ui.FamilyLabEngine), asked of the worker's engine.

func (e *workerEngine) FamilyStart(req engine.FamilyRequest) (*engine.FamilyInfo, error) {
	b, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	var info engine.FamilyInfo
	return &info, e.call(&info, "familyStart", string(b))
}

func (e *workerEngine) FamilyStep() (*engine.FamilyEvents, error) {
	var r engine.FamilyEvents
	return &r, e.call(&r, "familyStep")
}

func (e *workerEngine) FamilyStop() (*engine.FamilyEvents, error) {
	var r engine.FamilyEvents
	return &r, e.call(&r, "familyStop")
}

// FamilyRecord is family/record.json as the worker fetched it (assets/worker.js).
func (e *workerEngine) FamilyRecord() ([]byte, error) {
	var raw json.RawMessage
	return raw, e.call(&raw, "familyRecord")
}
