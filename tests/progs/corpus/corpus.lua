-- tests/e2e/61-corpus-more.t: Lua 5.4 tables, strings and a coroutine.
local t, n = {}, 0
for i = 0, 49999 do
	local k = "k" .. (i * 7919 % 1009)
	t[k] = (t[k] or "") .. string.char(97 + i % 26)
end
local keys = {}
for k, v in pairs(t) do keys[#keys + 1] = k; n = n + #v end
table.sort(keys)
local co = coroutine.wrap(function() for i = 1, 3 do coroutine.yield(keys[i]) end end)
print(#keys, n, co(), co(), co())
