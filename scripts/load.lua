-- wrk script for scripts/load.sh: 80 % requests for named formats of the sample photos (cached
-- after their first request), 20 % for ad-hoc sizes picked at random (mostly uncached).
-- Counts responses by status class across all threads and prints them at the end.
local names = {}
for name in string.gmatch(os.getenv("EASEL_LOAD_NAMES") or "", "[^,]+") do names[#names + 1] = name end
local formats = { "thumb", "small", "square" }
local threads = {}

function setup(thread) threads[#threads + 1] = thread end

function init(args)
  counts = { s2 = 0, s3 = 0, s4 = 0, s429 = 0, s5 = 0 }
  math.randomseed(os.time() + math.floor(os.clock() * 1e6))
end

function request()
  local name = names[math.random(#names)]
  if math.random() < 0.8 then
    return wrk.format("GET", "/images/" .. formats[math.random(#formats)] .. "/" .. name)
  end
  return wrk.format("GET", "/images/w=" .. math.random(64, 640) .. ",h=" .. math.random(64, 640) .. "/" .. name)
end

function response(status, headers, body)
  if status >= 500 then counts.s5 = counts.s5 + 1
  elseif status == 429 then counts.s429 = counts.s429 + 1
  elseif status >= 400 then counts.s4 = counts.s4 + 1
  elseif status >= 300 then counts.s3 = counts.s3 + 1
  else counts.s2 = counts.s2 + 1 end
end

function done(summary, latency, requests)
  local total = { s2 = 0, s3 = 0, s4 = 0, s429 = 0, s5 = 0 }
  for _, thread in ipairs(threads) do
    local c = thread:get("counts")
    for k, v in pairs(c) do total[k] = total[k] + v end
  end
  io.write(string.format("statuses: 2xx %d, 3xx %d, 429 %d, other 4xx %d, 5xx %d\n", total.s2, total.s3, total.s429, total.s4, total.s5))
end
