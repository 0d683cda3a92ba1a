//go:build desktop && linux && cgo

package main

/*
#include <signal.h>
#include <string.h>

// lembas_onstack re-adds SA_ONSTACK to the handler of sig, if one is set.
// WebKit installs its handlers without it, and the Go runtime then turns
// any signal on a goroutine stack (a nil dereference that recover would
// catch) into "non-Go code set up signal handler without SA_ONSTACK".
static int lembas_onstack(int sig) {
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	if (sigaction(sig, NULL, &sa) != 0) return -1;
	if (sa.sa_handler == SIG_DFL || sa.sa_handler == SIG_IGN) return 0;
	if (sa.sa_flags & SA_ONSTACK) return 0;
	sa.sa_flags |= SA_ONSTACK;
	return sigaction(sig, &sa, NULL) == 0 ? 1 : -1;
}
*/
import "C"

// restoreOnStack re-adds SA_ONSTACK to the fatal-signal handlers (Wails
// #3965, fixed upstream only in 2.12). Call it after the webview starts.
func restoreOnStack() {
	for _, sig := range []C.int{C.SIGSEGV, C.SIGBUS, C.SIGFPE, C.SIGABRT} {
		C.lembas_onstack(sig)
	}
}
