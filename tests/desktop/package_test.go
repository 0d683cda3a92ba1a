package desktop

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llembas/lembas/tests/harness"
)

// TestDebPackage builds the .deb with nfpm from the desktop binary, unpacks
// it into a scratch root with dpkg -x, and checks that the binary, the
// .desktop file and the icons are where a desktop looks for them.
func TestDebPackage(t *testing.T) {
	harness.Require(t, "dpkg", "dpkg-deb")
	bin := harness.Build(t, tags)
	root := harness.RepoRoot()
	// nfpm resolves the paths in build/nfpm.yaml from its working directory.
	work := t.TempDir()
	for _, d := range []string{"build", "assets"} {
		harness.Must(t, os.Symlink(filepath.Join(root, d), filepath.Join(work, d)), "link "+d)
	}
	harness.Must(t, os.MkdirAll(filepath.Join(work, "bin"), 0o755), "bin")
	harness.Must(t, os.Symlink(bin, filepath.Join(work, "bin", "lembas")), "link binary")
	// The nfpm pinned as a tool in go.mod, built from the module.
	nfpm := filepath.Join(work, "nfpm")
	build := exec.Command("go", "build", "-o", nfpm, "github.com/goreleaser/nfpm/v2/cmd/nfpm")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build nfpm: %v\n%s", err, out)
	}
	cmd := exec.Command(nfpm, "package", "-f", "build/nfpm.yaml", "-p", "deb", "-t", work+"/out.deb")
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "VERSION=0.1.0+test")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("nfpm: %v\n%s", err, out)
	}
	scratch := t.TempDir()
	if out, err := exec.Command("dpkg", "-x", work+"/out.deb", scratch).CombinedOutput(); err != nil {
		t.Fatalf("dpkg -x: %v\n%s", err, out)
	}
	for _, p := range []string{
		"usr/bin/lembas",
		"usr/share/applications/lembas.desktop",
		"usr/share/icons/hicolor/scalable/apps/lembas.svg",
		"usr/share/icons/hicolor/48x48/apps/lembas.png",
		"usr/share/icons/hicolor/256x256/apps/lembas.png",
	} {
		if _, err := os.Stat(filepath.Join(scratch, p)); err != nil {
			t.Errorf("%s missing from the package: %v", p, err)
		}
	}
	out, err := exec.Command(filepath.Join(scratch, "usr/bin/lembas"), "version").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "desktop") {
		t.Errorf("packaged binary: %v %s", err, out)
	}
	desktop, _ := os.ReadFile(filepath.Join(scratch, "usr/share/applications/lembas.desktop"))
	for _, want := range []string{"Exec=lembas", "Icon=lembas", "Name=LLeMbas", "StartupWMClass=lembas",
		"Actions=quick-chat;", "[Desktop Action quick-chat]", "Name=Quick chat", "Exec=lembas --quick"} {
		if !strings.Contains(string(desktop), want) {
			t.Errorf(".desktop file lacks %q", want)
		}
	}
	if _, err := exec.LookPath("desktop-file-validate"); err == nil {
		if out, err := exec.Command("desktop-file-validate", filepath.Join(scratch, "usr/share/applications/lembas.desktop")).CombinedOutput(); err != nil {
			t.Errorf("desktop-file-validate: %v\n%s", err, out)
		}
	}
	info, _ := exec.Command("dpkg-deb", "-f", work+"/out.deb", "Depends").Output()
	if !strings.Contains(string(info), "libwebkit2gtk-4.1-0") {
		t.Errorf("Depends: %s", info)
	}
}
