// sig_cgo.go - a cgo program whose goroutines call C's strdup, strlen and
// free in a loop: samples land on goroutine stacks (a few KiB, grown by
// copying) and on the threads' C stacks.  Go requires SA_ONSTACK of every
// signal handler in the process; one that runs on a goroutine's stack
// corrupts it ("unexpected return pc", "fatal error: fault").
//
// stdout: each goroutine's checksum and the total, the same every run.
// It ends through C's exit: Go's own exit is a raw exit_group that runs
// no destructor, so a preloaded profiler would write no data file.  With
// the argument "goexit" it returns from main instead.
//
//	sig_cgo [goexit]
package main

/*
#include <stdlib.h>
#include <string.h>
*/
import "C"

import (
	"fmt"
	"os"
	"sync"
	"unsafe"
)

// dupLoop duplicates s n times through C, summing the copies' lengths.
func dupLoop(s *C.char, n int) uint64 {
	var sum uint64
	for i := 0; i < n; i++ {
		d := C.strdup(s)
		sum += uint64(C.strlen(d)) + uint64(i%7)
		C.free(unsafe.Pointer(d))
	}
	return sum
}

func worker(id, n int) uint64 {
	s := C.CString(fmt.Sprintf("goroutine %d says hello", id))
	defer C.free(unsafe.Pointer(s))
	return dupLoop(s, n)
}

func main() {
	const goroutines, rounds = 8, 150000
	sums := make([]uint64, goroutines)
	var wg sync.WaitGroup
	for i := 0; i < goroutines; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			sums[i] = worker(i, rounds)
		}(i)
	}
	wg.Wait()
	var total uint64
	for i, s := range sums {
		fmt.Printf("goroutine %d: %d\n", i, s)
		total += s
	}
	fmt.Printf("total %d\n", total)
	if len(os.Args) > 1 && os.Args[1] == "goexit" {
		return
	}
	C.exit(0)
}
