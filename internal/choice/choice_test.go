package choice

import "testing"

type color string

func TestCheck(t *testing.T) {
	allowed := []color{"red", "green"}
	for _, v := range allowed {
		if err := Check("color", v, allowed); err != nil {
			t.Errorf("%s: %v", v, err)
		}
	}
	for _, v := range []color{"", "blue", "Red"} {
		err := Check("color", v, allowed)
		if want := `color "` + string(v) + `" is not one of red, green`; err == nil || err.Error() != want {
			t.Errorf("%q: error %v, want %q", v, err, want)
		}
	}
}
