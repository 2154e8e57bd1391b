-- A Lua workload for bench/overhead.sh and bench/rt-accuracy.sh: binary
-- trees (allocation, pointer chasing), string building and a table sort,
-- so that the interpreter's dispatch, tables, strings and GC all run.
-- usage: lua bench.lua [SCALE]   (default 1)
local scale = tonumber(arg and arg[1]) or 1

local function bottomup(d)
	if d == 0 then return {} end
	d = d - 1
	return { bottomup(d), bottomup(d) }
end

local function check(t)
	if t[1] then return 1 + check(t[1]) + check(t[2]) end
	return 1
end

local nodes = 0
for _ = 1, 6 * scale do
	nodes = nodes + check(bottomup(14))
end

local parts = {}
for i = 1, 60000 * scale do
	parts[#parts + 1] = string.format("%d:%x", i, i * 2654435761 % 4294967296)
end
local s = table.concat(parts, ",")
local words = 0
for _ in s:gmatch("[^,]+") do words = words + 1 end

local t = {}
local x = 12345
for i = 1, 150000 * scale do
	x = (x * 1103515245 + 12345) % 2147483648
	t[i] = x
end
table.sort(t)

print(nodes, #s, words, t[1], t[#t])
