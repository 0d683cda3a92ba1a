package sshx_test

import "os"

func ciStrict() bool { return os.Getenv("CI") == "true" }
