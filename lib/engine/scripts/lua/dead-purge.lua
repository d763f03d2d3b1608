-- dead-purge: deletes dead letters for good: the given ids, or else the oldest `limit`.
--
-- K.dead K.deadInfo K.messages K.attempts K.priority K.stepIds
-- ARGV[1] limit  how many of the oldest to take when no ids follow
-- ARGV[2..] ids (optional)
-- Returns { ids taken, dead letters deleted }
-- Errors  ACKQ_WRONGTYPE <key> <actual> <expected>
check_types(K.dead, 'zset', K.deadInfo, 'hash', K.messages, 'hash', K.attempts, 'hash', K.priority, 'hash',
  K.stepIds, 'set')

local ids = { unpack(ARGV, 2) }
if #ids == 0 then
  ids = redis.call('ZRANGE', K.dead, 0, tonumber(ARGV[1]) - 1)
end
local purged = {}
for _, id in ipairs(ids) do
  if redis.call('ZREM', K.dead, id) == 1 then
    purged[#purged + 1] = id
  end
end
if #purged > 0 then
  records_purged(purged)
end
return { #ids, #purged }
