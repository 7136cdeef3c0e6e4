-- wrk script of the warm benchmarks (serve-vs-nginx.sh, serve-behind-varnish.sh,
-- tracing-cost.sh): GETs the comma-separated paths of the environment variable PATHS in turn.
local paths = {}
for p in string.gmatch(os.getenv("PATHS"), "[^,]+") do paths[#paths + 1] = p end
local i = 0
request = function()
  i = i % #paths + 1
  return wrk.format("GET", paths[i])
end
