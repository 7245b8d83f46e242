-- cf_lua.lua - Lua code that makes the interpreter longjmp (2000 errors
-- caught by pcall, 50 Lua frames deep), resume coroutines, call a Lua
-- comparator from its C sort, and match strings (tests/e2e/74-cf-lua.t).
-- errors (longjmp inside lua), coroutines, sort with a Lua comparator, recursion, strings
local function fib(n) if n < 2 then return n end return fib(n-1) + fib(n-2) end
local t = {}
for i = 1, 20000 do t[i] = (i * 7919) % 10007 end
table.sort(t, function(a, b) return a > b end)
local caught = 0
for i = 1, 2000 do
  local ok, err = pcall(function() local function deep(k) if k == 0 then error("boom") end return deep(k-1) + 1 end return deep(50) end)
  if not ok then caught = caught + 1 end
end
local co = coroutine.wrap(function() for i = 1, 5000 do coroutine.yield(i) end end)
local s = 0
for i = 1, 5000 do s = s + co() end
local parts = {}
for w in string.gmatch(string.rep("alpha beta gamma ", 3000), "%a+") do parts[#parts+1] = w:upper() end
print(fib(24), t[1], t[#t], caught, s, #parts, table.concat(parts, ",", 1, 3))
