//go:build desktop && linux && cgo

#include <string.h>
#include <gtk/gtk.h>
#include <webkit2/webkit2.h>
#include "_cgo_export.h"

// What the app adds to Wails' web view (webview_linux.go explains why):
// a navigation guard, and file drops taken from GTK itself.

// The window must only ever show the app, which Wails serves at wails://.
// Anything else that would replace it (WebKit opening a dropped file, a
// link or script that slipped past the frontend) is refused here, whatever
// the page did or failed to do. Links meant for the outside world go
// through App.OpenURL instead.
static gboolean lembas_decide(WebKitWebView *view, WebKitPolicyDecision *decision,
                              WebKitPolicyDecisionType type, gpointer data) {
	if (type != WEBKIT_POLICY_DECISION_TYPE_NAVIGATION_ACTION &&
	    type != WEBKIT_POLICY_DECISION_TYPE_NEW_WINDOW_ACTION)
		return FALSE;
	WebKitNavigationAction *action = webkit_navigation_policy_decision_get_navigation_action(
		WEBKIT_NAVIGATION_POLICY_DECISION(decision));
	WebKitURIRequest *req = webkit_navigation_action_get_request(action);
	const char *uri = req ? webkit_uri_request_get_uri(req) : NULL;
	if (type == WEBKIT_POLICY_DECISION_TYPE_NAVIGATION_ACTION && uri != NULL &&
	    (strncmp(uri, "wails:", 6) == 0 || strcmp(uri, "about:blank") == 0))
		return FALSE; // WebKit's default: go ahead
	webkit_policy_decision_ignore(decision);
	lembasNavigationRefused((char *)(uri ? uri : ""), type == WEBKIT_POLICY_DECISION_TYPE_NEW_WINDOW_ACTION);
	return TRUE;
}

// Files dropped from outside. WebKit asks GTK for the drag's data while the
// pointer moves; its URI list comes by drag-data-received, and is kept
// with the drag it belongs to. On drag-drop, the local files of that
// drag's list go to Go. Nothing here is reachable from the page, unlike
// Wails' own EnableFileDrop, whose "DD:" message any script can forge.
static GdkDragContext *lembas_drag = NULL;
static gchar **lembas_uris = NULL;
static GdkDragContext *lembas_dropped = NULL; // dropped before its list came

static void lembas_deliver(gchar **uris) {
	guint n = g_strv_length(uris);
	char **paths = g_new0(char *, n + 1);
	int count = 0;
	for (guint i = 0; i < n; i++) {
		gchar *p = g_filename_from_uri(uris[i], NULL, NULL); // NULL unless file://
		if (p != NULL)
			paths[count++] = p;
	}
	if (count > 0)
		lembasFilesDropped(paths, count);
	g_strfreev(paths);
}

static void lembas_forget(void) {
	g_strfreev(lembas_uris);
	lembas_uris = NULL;
	if (lembas_drag != NULL)
		g_object_unref(lembas_drag);
	lembas_drag = NULL;
}

static void lembas_data(GtkWidget *w, GdkDragContext *ctx, gint x, gint y, GtkSelectionData *data,
                        guint info, guint time, gpointer user) {
	gchar **uris = data ? gtk_selection_data_get_uris(data) : NULL;
	if (uris == NULL)
		return; // some other type WebKit asked for
	if (lembas_dropped != NULL && lembas_dropped == ctx) {
		// WebKit asked only once the drop had happened.
		g_object_unref(lembas_dropped);
		lembas_dropped = NULL;
		lembas_deliver(uris);
		g_strfreev(uris);
		return;
	}
	lembas_forget();
	lembas_uris = uris;
	lembas_drag = g_object_ref(ctx);
}

static gboolean lembas_drop(GtkWidget *w, GdkDragContext *ctx, gint x, gint y, guint time, gpointer user) {
	if (lembas_dropped != NULL)
		g_object_unref(lembas_dropped);
	lembas_dropped = NULL;
	if (lembas_drag != ctx || lembas_uris == NULL) {
		// No list of this drag's yet: take it if WebKit asks for it now.
		lembas_forget();
		lembas_dropped = g_object_ref(ctx);
		return FALSE;
	}
	lembas_deliver(lembas_uris);
	lembas_forget();
	return FALSE; // WebKit goes on with its own drop, which the page cancels
}

static WebKitWebView *lembas_find_view(GtkWidget *w) {
	if (WEBKIT_IS_WEB_VIEW(w))
		return WEBKIT_WEB_VIEW(w);
	if (!GTK_IS_CONTAINER(w))
		return NULL;
	WebKitWebView *found = NULL;
	GList *kids = gtk_container_get_children(GTK_CONTAINER(w));
	for (GList *l = kids; l != NULL && found == NULL; l = l->next)
		found = lembas_find_view(GTK_WIDGET(l->data));
	g_list_free(kids);
	return found;
}

static int lembas_tries = 0;

static gboolean lembas_install(gpointer data) {
	static gboolean done = FALSE;
	if (done)
		return G_SOURCE_REMOVE;
	GList *all = gtk_window_list_toplevels();
	WebKitWebView *view = NULL;
	for (GList *l = all; l != NULL && view == NULL; l = l->next)
		view = lembas_find_view(GTK_WIDGET(l->data));
	g_list_free(all);
	if (view == NULL) {
		if (++lembas_tries < 50)
			return G_SOURCE_CONTINUE; // the window may not be built yet: try again
		lembasWebViewHooked(0);
		return G_SOURCE_REMOVE;
	}
	g_signal_connect(view, "decide-policy", G_CALLBACK(lembas_decide), NULL);
	g_signal_connect(view, "drag-data-received", G_CALLBACK(lembas_data), NULL);
	g_signal_connect(view, "drag-drop", G_CALLBACK(lembas_drop), NULL);
	done = TRUE;
	lembasWebViewHooked(1);
	return G_SOURCE_REMOVE;
}

void lembas_hook_webview(void) {
	g_timeout_add(20, lembas_install, NULL);
}
