-- wrk script for the create benchmark: POST the body in $BENCH_BODY_FILE
-- with the bearer token in $BENCH_TOKEN (empty for the bare baseline).
local f = assert(io.open(os.getenv("BENCH_BODY_FILE"), "rb"))
wrk.method = "POST"
wrk.body = f:read("*a")
f:close()
wrk.headers["Content-Type"] = "application/json"
local token = os.getenv("BENCH_TOKEN")
if token and token ~= "" then
  wrk.headers["Authorization"] = "Bearer " .. token
end
