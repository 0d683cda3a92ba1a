package render_test

import (
	"fmt"

	"github.com/llembas/lembas/backend/render"
)

func ExampleRenderer_Markdown() {
	r := render.New()
	fmt.Print(r.Markdown("# Hi\n\n[docs](https://example.com), $x^2$ for $5, ![cat](https://cats.example/c.png)"))
	// Output:
	// <h1 id="h-hi">Hi</h1>
	// <p><a href="https://example.com" rel="nofollow noreferrer noopener" target="_blank">docs</a>, <span class="math math-inline">x^2</span> for $5, <a href="https://cats.example/c.png" rel="nofollow noreferrer noopener" target="_blank">image: cat (not loaded)</a></p>
}

func ExampleStream() {
	r := render.New()
	s := r.NewStream()
	for _, delta := range []string{"Hello ", "world.\n\n", "```sh\n", "ls\n", "```\n"} {
		f := s.Append(delta)
		fmt.Printf("seal=%d op=%q tail=%q\n", len(f.Seal), f.Op, f.Tail)
	}
	f := s.Finish()
	fmt.Printf("reset=%v op=%q\n", f.Reset, f.Op)
	// Output:
	// seal=0 op="replace" tail="<p>Hello</p>\n"
	// seal=0 op="replace" tail="<p>Hello world.</p>\n"
	// seal=1 op="replace" tail="<div class=\"code-block\"><div class=\"code-head\"><span class=\"code-lang\">sh</span><button type=\"button\" class=\"code-copy\" data-copy=\"\">Copy</button></div><pre class=\"chroma\"><code></code></pre></div>\n"
	// seal=0 op="append" tail="ls\n"
	// seal=1 op="replace" tail=""
	// reset=false op=""
}
