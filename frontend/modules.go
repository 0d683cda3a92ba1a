package frontend

import (
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"strings"
)

// staticImport matches a module's static imports and re-exports, at the
// start of a line: `import x from './a.js'`, `import { a,\n b } from
// "./b.js"`, `export * from './c.js'` and `import './d.js'`. Dynamic
// `import('…')` is not matched (it has no space before its parenthesis,
// and a clause holds no parentheses), so lazily loaded modules (KaTeX,
// the self-test) stay out of the graph.
var staticImport = regexp.MustCompile(`(?m)^[ \t]*(?:import|export)[ \t\n][^;()=]*?\bfrom[ \t]*['"]([^'"]+)['"]|^[ \t]*import[ \t]*['"]([^'"]+)['"]`)

// ModuleGraph returns every module that entry (a path in fsys, such as
// "js/main.js") loads by static import, itself first, then breadth first:
// the whole set a browser must fetch before the entry runs. Specifiers are
// resolved as a browser resolves them against a file's URL (relative or
// from the root); a bare specifier or an import of a file that does not
// exist is an error, since the page would not run either.
func ModuleGraph(fsys fs.FS, entry string) ([]string, error) {
	order := []string{entry}
	seen := map[string]bool{entry: true}
	for i := 0; i < len(order); i++ {
		deps, err := imports(fsys, order[i])
		if err != nil {
			return nil, err
		}
		for _, dep := range deps {
			if !seen[dep] {
				seen[dep] = true
				order = append(order, dep)
			}
		}
	}
	return order, nil
}

// imports returns the modules that the module at p imports statically, as
// paths in fsys, in the order they appear.
func imports(fsys fs.FS, p string) ([]string, error) {
	b, err := fs.ReadFile(fsys, p)
	if err != nil {
		return nil, fmt.Errorf("module graph: %w", err)
	}
	var deps []string
	for _, m := range staticImport.FindAllSubmatch(b, -1) {
		spec := string(m[1]) + string(m[2])
		var dep string
		switch {
		case strings.HasPrefix(spec, "/"):
			dep = path.Clean(spec[1:])
		case strings.HasPrefix(spec, "./"), strings.HasPrefix(spec, "../"):
			dep = path.Join(path.Dir(p), spec)
		default:
			return nil, fmt.Errorf("module graph: %s imports %q, which a browser cannot resolve without an import map", p, spec)
		}
		if strings.HasPrefix(dep, "../") {
			return nil, fmt.Errorf("module graph: %s imports %q, outside the site", p, spec)
		}
		if _, err := fs.Stat(fsys, dep); err != nil {
			return nil, fmt.Errorf("module graph: %s imports %q: %w", p, spec, err)
		}
		deps = append(deps, dep)
	}
	return deps, nil
}
