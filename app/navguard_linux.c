//go:build desktop && linux && cgo

#include <string.h>
#include <gtk/gtk.h>
#include <webkit2/webkit2.h>
#include "_cgo_export.h"

// The window must only ever show the app, which Wails serves at wails://.
// Anything else that would replace it (a file dropped where no drop zone
// took it, a link or script that slipped past the frontend) is refused
// here, whatever the page did or failed to do. Links meant for the outside
// world go through App.OpenURL instead.

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
		lembasNavigationGuard(0);
		return G_SOURCE_REMOVE;
	}
	g_signal_connect(view, "decide-policy", G_CALLBACK(lembas_decide), NULL);
	done = TRUE;
	lembasNavigationGuard(1);
	return G_SOURCE_REMOVE;
}

void lembas_guard_navigation(void) {
	g_idle_add(lembas_install, NULL);
}
