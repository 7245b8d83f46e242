# calls.awk: `mprof dump` of a cfprof file -> "OFFSET CALLS" per function
# (the innermost frame of each path, less the main program's bias).
function hex(s,  i, v, d) {
	v = 0; s = tolower(s); sub(/^0x/, "", s)
	for (i = 1; i <= length(s); i++) { d = index("0123456789abcdef", substr(s, i, 1)) - 1; v = v * 16 + d }
	return v
}
$1 == "module" && !m { bias = hex($4); m = 1 }
$1 == "stack" { for (i = 1; i <= NF && $i != ":"; i++) ; if (i < NF) c[sprintf("%x", hex($(i + 1)) - bias)] += $4 }
END { for (k in c) if (c[k]) print k, c[k] }
