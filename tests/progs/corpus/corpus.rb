# tests/e2e/61-corpus-more.t: Ruby hashes, arrays and strings.
h = Hash.new { |hash, k| hash[k] = [] }
30000.times { |i| h["k#{i * 7919 % 1009}"] << i.to_s * (i % 3) }
sizes = h.values.map { |v| v.join.size }
puts "#{h.size} #{sizes.sum} #{h.keys.sort.first(3).join(',')}"
