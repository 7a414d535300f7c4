-- wrk script: every request is the next path of a list file (one path per line), cycling.
-- Each wrk thread starts at a different offset.
-- usage: wrk ... -s bench/lua/cycle.lua http://127.0.0.1:PORT -- PATHS_FILE
local dir = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
dofile(dir .. "common.lua")

local paths, counter = {}, 0
function init(args)
  for line in io.lines(args[1]) do
    if #line > 0 then paths[#paths + 1] = line end
  end
  counter = (tid or 0) * 7
end

function request()
  local p = paths[(counter % #paths) + 1]
  counter = counter + 1
  return wrk.format("GET", p)
end

done = bench_done
