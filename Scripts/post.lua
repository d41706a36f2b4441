-- wrk script: every request is a deferred query (Scripts/wrk-serve.sh, .ci/run).
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"_version":1,"app":{"version":"1"},"query":{"sender":"+15550101","message":{"text":"Your parcel is on hold, pay the fee"}}}'
