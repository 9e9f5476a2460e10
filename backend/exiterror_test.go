package backend

import "testing"

func TestExitErrorMessage(t *testing.T) {
	tests := []struct {
		err  ExitError
		want string
	}{
		{ExitError{Status: 3}, "teammate process exited with status 3"},
		{ExitError{Signal: 9}, "teammate process killed by signal 9"},
		{ExitError{Status: 2, Output: "starting\nflag provided but not defined: -x\n\n"}, "teammate process exited with status 2: flag provided but not defined: -x"},
		{ExitError{Status: 1, Output: "  \n"}, "teammate process exited with status 1"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("%+v.Error() = %q; want %q", tt.err, got, tt.want)
		}
	}
}
