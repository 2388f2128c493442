package dataset

import (
	"strings"
	"testing"
)

func TestParseSQuAD(t *testing.T) {
	// "Café" is 4 characters and 5 bytes: answer_start counts characters.
	good := `{"version": "1.1", "data": [{"title": "T", "paragraphs": [{"context": "Café: the sky is blue.",
		"qas": [{"id": "q1", "question": "What color is the sky?", "answers": [{"text": "blue", "answer_start": 17}, {"text": "blue.", "answer_start": 17}]}]}]}]}`
	ex, err := ParseSQuAD(strings.NewReader(good))
	if err != nil {
		t.Fatal(err)
	}
	if len(ex) != 1 || ex[0].ID != "q1" || ex[0].Title != "T" || len(ex[0].Answers) != 2 || ex[0].Answers[0].Start != 17 {
		t.Errorf("parsed %+v", ex)
	}
	tests := []struct{ name, in, want string }{
		{"syntax", "{\"data\": [\n  {\"title\": }]}", "line 2, column 13"},
		{"type", `{"data": [{"paragraphs": [{"context": 5}]}]}`, "context"},
		{"no data", `{"version": "1.1"}`, `no "data"`},
		{"no questions", `{"data": []}`, "no questions"},
		{"empty context", `{"data": [{"paragraphs": [{"context": " ", "qas": []}]}]}`, "data[0].paragraphs[0]: empty context"},
		{"no id", `{"data": [{"paragraphs": [{"context": "c", "qas": [{"question": "q", "answers": [{"text": "c", "answer_start": 0}]}]}]}]}`, "qas[0]: no id"},
		{"duplicate id", `{"data": [{"paragraphs": [{"context": "c", "qas": [{"id": "x", "question": "q", "answers": [{"text": "c", "answer_start": 0}]},
			{"id": "x", "question": "q", "answers": [{"text": "c", "answer_start": 0}]}]}]}]}`, "already used at data[0].paragraphs[0].qas[0]"},
		{"empty question", `{"data": [{"paragraphs": [{"context": "c", "qas": [{"id": "x", "question": "", "answers": []}]}]}]}`, "empty question"},
		{"v2", `{"data": [{"paragraphs": [{"context": "c", "qas": [{"id": "x", "question": "q", "is_impossible": true, "answers": []}]}]}]}`, "SQuAD v2"},
		{"no answers", `{"data": [{"paragraphs": [{"context": "c", "qas": [{"id": "x", "question": "q", "answers": []}]}]}]}`, "no answers"},
		{"no start", `{"data": [{"paragraphs": [{"context": "c", "qas": [{"id": "x", "question": "q", "answers": [{"text": "c"}]}]}]}]}`, "no answer_start"},
		{"past the end", `{"data": [{"paragraphs": [{"context": "abc", "qas": [{"id": "x", "question": "q", "answers": [{"text": "c", "answer_start": 3}]}]}]}]}`, "past the context's 3 characters"},
		{"mismatch", `{"data": [{"paragraphs": [{"context": "Café blue!", "qas": [{"id": "x", "question": "q", "answers": [{"text": "blue", "answer_start": 6}]}]}]}]}`, `"blue" is not the context's "lue!"`},
		{"negative start", `{"data": [{"paragraphs": [{"context": "c", "qas": [{"id": "x", "question": "q", "answers": [{"text": "c", "answer_start": -1}]}]}]}]}`, "answer_start -1"},
	}
	for _, tc := range tests {
		_, err := ParseSQuAD(strings.NewReader(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want it to contain %q", tc.name, err, tc.want)
		}
	}
}
