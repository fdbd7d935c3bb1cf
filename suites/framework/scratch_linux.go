package framework

import "syscall"

// tmpfsMagic is the f_type statfs(2) gives a tmpfs.
const tmpfsMagic = 0x01021994

// memoryScratch is /dev/shm when it is a tmpfs, else "".
func memoryScratch() string {
	var st syscall.Statfs_t
	if err := syscall.Statfs("/dev/shm", &st); err != nil || st.Type != tmpfsMagic {
		return ""
	}
	return "/dev/shm"
}
