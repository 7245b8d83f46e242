target remote | vgdb
break _exit
continue
monitor leak_check full reachable any
