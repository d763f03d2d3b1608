-- flow-clear: drops a child's outbox entry once its parent heard it, unless a later end of the
-- child replaced it meanwhile (that one is still to be heard).
--
-- K.flowOutbox K.flowOutboxDue
-- ARGV[1] id   the child
-- ARGV[2] seq  the sequence of the entry its parent heard
-- Returns 1 dropped, 0 not (gone, or replaced)
local entry = redis.call('HGET', K.flowOutbox, ARGV[1])
if not entry or string.match(entry, '^(%d+)') ~= ARGV[2] then
  return 0
end
redis.call('HDEL', K.flowOutbox, ARGV[1])
redis.call('ZREM', K.flowOutboxDue, ARGV[1])
return 1
