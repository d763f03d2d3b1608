-- complete: acks leased messages of a topic that keeps completed messages: each one, while
-- the given token is still its lease, leaves the leased set, and its body is replaced by its
-- completed record (which keeps the body, for get and a bulk replay), kept under its id (a push of the same id stays a duplicate) and listed in
-- completed. The completed set is bounded like the dead letters: the oldest beyond maxCount,
-- or older than maxAgeMs, are deleted for good (at most 100 per call). With maxCount 0 it
-- keeps nothing and acks as ack.lua does, also deleting the progress that ack.lua leaves.
--
-- K.leased K.messages K.attempts K.tokens K.completed K.progress K.priority K.deferrals K.counters K.stepIds
-- ARGV[1] maxCount  completed records kept at most (the oldest go first); 0 keeps none
-- ARGV[2] maxAgeMs  completed records older than this are deleted
-- ARGV[3..] triples: id, token, extra (a JSON object text, '{}' or with "d" duration ms and
--           "r" result, whose members end the record)
-- Returns one integer per triple: 1 completed, 0 stale token, 2 already gone (no lease: completed
--         before, by this token if its lease was still live, e.g. a resent call; or removed);
--         then 1 if a freed group or concurrency slot woke consumers, else 0; then the outbox
--         entries written (child id, entry, ...: a flow's children acked, for the caller to pass on)
-- Errors  ACKQ_WRONGTYPE <key> <actual> <expected>
check_types(K.leased, 'zset', K.messages, 'hash', K.attempts, 'hash', K.tokens, 'hash', K.completed, 'zset',
  K.progress, 'hash', K.priority, 'hash', K.deferrals, 'hash', K.counters, 'hash')
check_types(K.stepIds, 'set')

local max_count, max_age = tonumber(ARGV[1]), tonumber(ARGV[2])
local now = now_ms()
local results, ended, extras = {}, {}, {}

-- Every lease checked with one read.
local ids = {}
for i = 3, #ARGV, 3 do
  ids[#ids + 1] = ARGV[i]
end
local tokens = redis.call('HMGET', K.tokens, unpack(ids))
for k, id in ipairs(ids) do
  local i = 3 * k
  local token, extra, current = ARGV[i + 1], ARGV[i + 2], tokens[k]
  if current == token and max_count == 0 then
    ended[#ended + 1], extras[#extras + 1] = id, extra
    results[#results + 1] = 1
  elseif current == token then
    -- The stored body holds its enqueue time (enqueued_at) and, in JSON, may end with ',"m":<n>}'.
    local body = redis.call('HGET', K.messages, id) or ''
    local record = string.format('{"c":%d,"t":%d,"a":%d', now, enqueued_at(body) or 0, token_attempt(token) or 0)
    local max_attempts = string.match(string.sub(body, -20), ',"m":(%d+)}$')
    if max_attempts then
      record = record .. ',"m":' .. max_attempts
    end
    -- The stored body, as a JSON string (its payload and headers, for get and a bulk replay):
    -- before "d" and "r", and no ',"d":' or ',"r":' can occur in a string, so a preview finds them.
    record = record .. ',"b":' .. cjson.encode(body)
    record = record .. (extra == '{}' and '}' or ',' .. string.sub(extra, 2))
    message_completed(id, record, now)
    ended[#ended + 1], extras[#extras + 1] = id, extra
    results[#results + 1] = 1
  elseif not current and (redis.call('ZSCORE', K.completed, id) or redis.call('HEXISTS', K.messages, id) == 0) then
    results[#results + 1] = 2
    -- Maybe a superseded message's consumer, saying its handler returned.
    key_drained(id)
  else
    results[#results + 1] = 0
  end
end

-- A flow's child hands its result (the extra's "r") to its parent; the group's next message may
-- start, a consumer waiting for a concurrency slot wakes. Kept no record: the messages go as
-- acked ones do, a few commands for the batch.
if #ended > 0 and max_count == 0 then
  messages_acked(ended, extras)
elseif #ended > 0 then
  ended_well(ended, extras)
end
-- Last: 1 when a freed group or concurrency slot woke consumers (the caller wakes a partitioned topic's home).
results[#results + 1] = freed_woke and 1 or 0
results[#results + 1] = flow_ended
if max_count > 0 then
  records_trim(K.completed, now, max_count, max_age)
end
return results
