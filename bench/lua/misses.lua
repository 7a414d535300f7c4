-- wrk script for thumbd misses. Request k (k = thread + threads * i, so no two threads ever
-- make the same k) asks for image k mod N of the corpus:
--   cold:    /thumb?url=<origin>/NAME?r=<tag>-<k>&w=<200 + k mod 200>&format=jpeg
--            a source URL never seen before on every request (nginx ignores the query string),
--            always JPEG (at thumbd's default quality, 80) as the libvips floor (bench/floor) encodes;
--   newsize: /thumb?url=<origin>/NAME?ns=<tag>&w=<200 + floor(k / N) mod 200>
--            the same (already cached) source per image, and no (image, width) pair repeats
--            for the first N * 200 requests.
-- usage: wrk ... -s bench/lua/misses.lua http://127.0.0.1:PORT -- MODE NAMES_FILE ORIGIN TAG THREADS
local dir = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
dofile(dir .. "common.lua")

local function enc(s)
  return (s:gsub("[^A-Za-z0-9%-%._~]", function(c) return string.format("%%%02X", c:byte()) end))
end

local mode, names, origin, tag, threads, i = nil, {}, nil, nil, 1, 0
function init(args)
  mode, origin, tag, threads = args[1], args[3], args[4], tonumber(args[5])
  for line in io.lines(args[2]) do
    if #line > 0 then names[#names + 1] = line end
  end
end

function request()
  local k = (tid or 0) + threads * i
  i = i + 1
  local n = #names
  local name = names[(k % n) + 1]
  local src, w, extra
  if mode == "cold" then
    src = origin .. "/" .. name .. "?r=" .. tag .. "-" .. k
    w = 200 + k % 200
    extra = "&format=jpeg"
  else
    src = origin .. "/" .. name .. "?ns=" .. tag
    w = 200 + math.floor(k / n) % 200
    extra = ""
  end
  return wrk.format("GET", "/thumb?url=" .. enc(src) .. "&w=" .. w .. extra)
end

done = bench_done
