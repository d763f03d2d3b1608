-- bulk-select: a bulk action's selection in one partition, at once: every id of the state that
-- the filter matches now goes into the action's snapshot (in the filter's walking order), and its
-- progress there starts at zero. Only these ids are ever acted on (a message pushed later never).
-- State 'any' (reencrypt) selects every id with a stored body or completed record, whatever its
-- state; the filter's other fields do not apply to it.
--
-- K.bulk K.bulkIds
-- ARGV[1]  bulk id
-- ARGV[2]  state ('ready', 'delayed', 'leased', 'dead', 'completed', 'waiting-children' or 'any')
-- ARGV[3]  tag, or '' for any
-- ARGV[4]  from (epoch ms, pushed at or after), or '' for any
-- ARGV[5]  to (epoch ms, pushed at or before), or '' for any
-- ARGV[6]  text the dead letter's last error contains, or '' for any
-- ARGV[7]  ttl (ms) of the snapshot and progress, renewed by every step
-- Returns  how many it selected here
-- Errors   ACKQ_WRONGTYPE <key> <actual> <expected>
local snapshot = K.bulkIds .. ARGV[1]
local progress = K.bulk .. ARGV[1]
local f = { state = ARGV[2] }
if ARGV[3] ~= '' then
  f.tag = ARGV[3]
end
if ARGV[4] ~= '' then
  f.from = tonumber(ARGV[4])
end
if ARGV[5] ~= '' then
  f.to = tonumber(ARGV[5])
end
if ARGV[6] ~= '' then
  f.error = ARGV[6]
end

-- Every id of K.messages, in hash order.
local function select_any()
  local ids = redis.call('HKEYS', K.messages)
  for i = 1, #ids, UNPACK_MAX / 2 do
    local pairs_ = {}
    for k = i, math.min(i + UNPACK_MAX / 2 - 1, #ids) do
      pairs_[#pairs_ + 1] = k
      pairs_[#pairs_ + 1] = ids[k]
    end
    local key = snapshot
    redis.call('ZADD', key, unpack(pairs_))
  end
  return #ids
end

local count, start = 0, 0
if f.state == 'any' then
  count = select_any()
  start = nil
end
while start ~= nil do
  local ids
  ids, start = filter_walk(f, start, 1000)
  for i = 1, #ids, UNPACK_MAX / 2 do
    local pairs_ = {}
    for k = i, math.min(i + UNPACK_MAX / 2 - 1, #ids) do
      pairs_[#pairs_ + 1] = count + k
      pairs_[#pairs_ + 1] = ids[k]
    end
    local key = snapshot
    redis.call('ZADD', key, unpack(pairs_))
  end
  count = count + #ids
end

local key = progress
redis.call('HSET', key, 'n', count, 'p', 0, 's', 0)
redis.call('PEXPIRE', key, ARGV[7])
if count > 0 then
  key = snapshot
  redis.call('PEXPIRE', key, ARGV[7])
end
return count
