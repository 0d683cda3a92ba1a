//go:build desktop

package main

import "testing"

// TestDocumentName: the save dialog's name for a document is a base name
// a file system takes, whatever the document's display name holds.
func TestDocumentName(t *testing.T) {
	for name, want := range map[string]string{
		"notes.pdf":             "notes.pdf",
		"../../etc/passwd":      "passwd",
		`C:\Users\x\report.txt`: "report.txt",
		".bashrc":               "bashrc",
		"...":                   "file",
		"":                      "file",
		"a\r\nb\x00c.txt":       "a  bc.txt", // a space each for CR and LF
		"evil\u202etxt.exe":     "eviltxt.exe",
		"Résumé 2026.md":        "Résumé 2026.md",
		"trailing/":             "file",
	} {
		if got := documentName(name); got != want {
			t.Errorf("documentName(%q) = %q, want %q", name, got, want)
		}
	}
}
