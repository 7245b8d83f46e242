# tests/e2e/61-corpus-more.t: Tcl lists and dicts.
set words {}
set counts [dict create]
for {set i 0} {$i < 20000} {incr i} {
	set w "w[expr {($i * 7919) % 997}]"
	lappend words $w
	dict incr counts $w
}
set top [lrange [lsort -dictionary [dict keys $counts]] 0 2]
set n 0
foreach w $top { incr n [dict get $counts $w] }
puts "[llength $words] [dict size $counts] $top $n"
