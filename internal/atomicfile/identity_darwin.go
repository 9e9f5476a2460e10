package atomicfile

import (
	"io/fs"
	"syscall"
)

func sysIdentity(fi fs.FileInfo, id *Identity) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return
	}
	id.Dev = uint64(st.Dev)
	id.Ino = st.Ino
	id.CtimeNs = st.Ctimespec.Nano()
}
