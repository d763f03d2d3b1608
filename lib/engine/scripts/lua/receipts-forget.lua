-- receipts-forget: forgets relay receipts (the outbox relay's, after its database commit deleted
-- their rows: no row can be pushed again under them).
--
-- K.relayReceipts
-- ARGV[1..] receipts    the receipts to forget
-- Returns  how many were held
-- Errors   ACKQ_WRONGTYPE <key> <actual> <expected>
check_types(K.relayReceipts, 'zset')
local forgotten = 0
for i = 1, #ARGV, UNPACK_MAX do
  forgotten = forgotten + redis.call('ZREM', K.relayReceipts, unpack(ARGV, i, math.min(i + UNPACK_MAX - 1, #ARGV)))
end
return forgotten
