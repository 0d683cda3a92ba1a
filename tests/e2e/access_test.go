package e2e

import (
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/llembas/lembas/tests/harness"
)

// A model shared with a group that is then deleted stays closed, and its
// access card says so: administrators only, no group chosen.
func TestModelOfADeletedGroupShowsAsClosed(t *testing.T) {
	a := newChatApp(t)
	var picked []struct{ ID int }
	harness.API(t, a.base, "Models.Picker", &picked)
	if len(picked) == 0 {
		t.Fatal("no model")
	}
	var g struct{ ID int }
	harness.API(t, a.base, "Admin.CreateGroup", &g, "Hobbits", []string{})
	harness.API(t, a.base, "Admin.SetModelAccess", nil, picked[0].ID, map[string]any{"users": []int{}, "groups": []int{g.ID}})
	harness.API(t, a.base, "Admin.DeleteGroup", nil, g.ID)
	var access struct {
		Everyone bool
		Users    []int
		Groups   []int
	}
	harness.API(t, a.base, "Admin.ModelAccess", &access, picked[0].ID)
	if access.Everyone || len(access.Users)+len(access.Groups) != 0 {
		t.Fatalf("access after the group went: %+v, want closed to all but administrators", access)
	}

	a.do(chromedp.Navigate(a.base + "/#/settings/models"))
	a.click(".model-row-main")
	a.waitJS(`!!document.querySelector('#model-access input[type=radio]')`)
	a.waitJS(`document.querySelector('#model-access')?.innerText.includes('Only administrators can use this model now')`)
	if !a.bool(`document.querySelector("#model-access input[id$='-chosen']").checked`) {
		t.Error("the card does not show the model as restricted")
	}
	a.shot("model-access-closed")
}
