//go:build !unix

package render

import "time"

// cpuTime falls back to wall time where getrusage is missing; only differences
// are used.
func cpuTime() time.Duration { return time.Duration(time.Now().UnixNano()) }
