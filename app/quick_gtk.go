//go:build desktop && linux && cgo

package main

/*
#cgo pkg-config: gtk+-3.0
#include <gtk/gtk.h>

// Wails v2.9.2 calls gtk_window_resize and gtk_window_set_keep_above on
// whichever goroutine asks (WindowSetSize, WindowSetAlwaysOnTop), not on
// GTK's thread: from a tray click or a handoff the change was sometimes
// lost. These run them on the main loop instead (g_idle_add is the one
// thread-safe way in).

typedef struct { int width, height, above; } lembas_geom;

static GtkWindow *lembas_main_window(void) {
	GList *all = gtk_window_list_toplevels();
	GtkWindow *found = NULL;
	for (GList *l = all; l != NULL && found == NULL; l = l->next) {
		GtkWindow *w = GTK_WINDOW(l->data);
		if (gtk_window_get_window_type(w) == GTK_WINDOW_TOPLEVEL && g_strcmp0(gtk_window_get_title(w), "LLeMbas") == 0)
			found = w;
	}
	g_list_free(all);
	return found;
}

static gboolean lembas_apply(gpointer data) {
	lembas_geom *g = data;
	GtkWindow *w = lembas_main_window();
	if (w != NULL) {
		if (g->width > 0 && g->height > 0) gtk_window_resize(w, g->width, g->height);
		if (g->above >= 0) gtk_window_set_keep_above(w, g->above ? TRUE : FALSE);
	}
	g_free(g);
	return G_SOURCE_REMOVE;
}

static void lembas_geometry(int width, int height, int above) {
	lembas_geom *g = g_new(lembas_geom, 1);
	g->width = width;
	g->height = height;
	g->above = above;
	g_idle_add(lembas_apply, g);
}
*/
import "C"

import "context"

// setGeometry resizes the window (when width and height are > 0) and sets
// or clears always-on-top (above: 1, 0; -1 leaves it), on GTK's thread.
func setGeometry(_ context.Context, width, height, above int) {
	C.lembas_geometry(C.int(width), C.int(height), C.int(above))
}
