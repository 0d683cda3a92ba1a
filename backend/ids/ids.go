// Package ids holds the typed identifiers that facade methods take. Typing
// them (rather than passing int64) is what lets the authorization tests find
// every method that takes an id and try it with another user's.
package ids

// UserID identifies a user.
type UserID int64

// ConnectionID identifies an endpoint connection.
type ConnectionID int64

// ModelID identifies a model row (not the upstream model name).
type ModelID int64

// FolderID identifies a chat folder.
type FolderID int64

// ChatID identifies a chat.
type ChatID int64

// MessageID identifies one message in a chat.
type MessageID int64

// GroupID identifies a user group.
type GroupID int64

// SessionID is the short public id of a sign-in session (a prefix of its
// token's hash, never the token).
type SessionID string

// AttachmentID identifies an uploaded file (an attachment of a message, or
// an upload not yet sent).
type AttachmentID int64

// BaseID identifies a knowledge base.
type BaseID int64

// DocumentID identifies a document in a knowledge base.
type DocumentID int64

// NoteID identifies a note.
type NoteID int64

// MemoryID identifies one memory.
type MemoryID int64

// SkillID identifies a skill.
type SkillID int64

// ProfileID identifies an SSH connection profile (an agent chat's host).
type ProfileID int64
