package rawio

import "syscall"

// rawConnOf is c's descriptor, or nil when c has none.
func rawConnOf(c any) syscall.RawConn {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	return rc
}
