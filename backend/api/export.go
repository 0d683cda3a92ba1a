package api

import (
	"context"
	"io"

	"github.com/llembas/lembas/backend/chat"
	"github.com/llembas/lembas/backend/ids"
)

// ChatExport is a chat ready to be written out as a file: Name and MIME
// for the headers, Write to stream it (it reads the chat as it goes).
type ChatExport struct {
	Name  string
	MIME  string
	Write func(ctx context.Context, w io.Writer) error
}

// ExportRoutes implements the chat export download (httpapi.Exports)
// over the chat service, as the resolved caller: the same export the
// desktop window saves through its own dialog.
type ExportRoutes struct{ chat *chat.Service }

// NewExportRoutes returns the export route's backend.
func NewExportRoutes(c *chat.Service) ExportRoutes { return ExportRoutes{chat: c} }

// ExportChat prepares one of the caller's chats for a download in format
// (chat.ExportMarkdown or chat.ExportJSON); another person's is NotFound.
func (x ExportRoutes) ExportChat(ctx context.Context, c Caller, id int64, format string) (ChatExport, error) {
	e, err := x.chat.Export(ctx, ids.UserID(c.UserID), ids.ChatID(id), format)
	if err != nil {
		return ChatExport{}, err
	}
	return ChatExport{Name: e.Name, MIME: e.MIME, Write: e.Write}, nil
}
