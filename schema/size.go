package schema

import (
	"fmt"
	"strconv"
	"strings"
)

// Size is a number of bytes written with a unit, like 2GiB or 512MiB; 0
// means "not given". Its text form is what a flag takes.
type Size int64

var sizeUnits = []struct {
	suffix string
	mult   float64
}{
	{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10},
	{"TB", 1e12}, {"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3},
	{"T", 1 << 40}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}, {"B", 1},
}

// ParseSize reads sizes like 2GiB, 512MiB, 1.5G, 300M, 4096.
func ParseSize(s string) (Size, error) {
	t := strings.TrimSpace(s)
	mult := 1.0
	for _, u := range sizeUnits {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || v < 0 || v*mult > 1<<62 {
		return 0, fmt.Errorf("%q is not a size such as 2GiB or 512MiB", s)
	}
	return Size(v * mult), nil
}

// String renders the size in the largest binary unit that divides it.
func (z Size) String() string {
	switch {
	case z == 0:
		return "0"
	case z%(1<<30) == 0:
		return fmt.Sprintf("%dGiB", z>>30)
	case z%(1<<20) == 0:
		return fmt.Sprintf("%dMiB", z>>20)
	case z%(1<<10) == 0:
		return fmt.Sprintf("%dKiB", z>>10)
	}
	return strconv.FormatInt(int64(z), 10)
}

// MarshalText implements encoding.TextMarshaler.
func (z Size) MarshalText() ([]byte, error) { return []byte(z.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (z *Size) UnmarshalText(b []byte) error {
	v, err := ParseSize(string(b))
	if err != nil {
		return err
	}
	*z = v
	return nil
}
