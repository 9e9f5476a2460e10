package file

import "syscall"

// openNoATime asks open not to update the access time.
const openNoATime = syscall.O_NOATIME
