-- reply: answers a request once. Stores its reply under its id, with a TTL, and announces it
-- to its caller, only while the given token is still its lease and no reply was stored for it
-- before: a request delivered again (its server killed after replying, before the ack) is not
-- answered twice. A caller that asked for it hears the reply itself, so it need not fetch it;
-- an older caller hears the id, and takes the reply.
--
-- K.tokens K.replies
-- ARGV[1] id
-- ARGV[2] token
-- ARGV[3] reply    JSON text (the client bounds its size; JSON.stringify writes no newline)
-- ARGV[4] ttl      ms the reply is kept for its caller
-- ARGV[5] channel  the caller's pub/sub channel: it hears the id
-- ARGV[6] inline   '' or the caller's channel for whole replies: it hears '<reply>\n<id>' instead
-- Returns 1 stored and announced, 0 stale token, 2 answered before (nothing changed)
-- Errors  ACKQ_WRONGTYPE <key> <actual> <expected>
local id, token, channel, inline = ARGV[1], ARGV[2], ARGV[5], ARGV[6]
check_types(K.tokens, 'hash')

if redis.call('HGET', K.tokens, id) ~= token then
  return 0
end
local key = K.replies .. id
if not redis.call('SET', key, ARGV[3], 'NX', 'PX', ARGV[4]) then
  return 2
end
if inline ~= '' then
  redis.call('PUBLISH', inline, ARGV[3] .. '\n' .. id)
else
  redis.call('PUBLISH', channel, id)
end
return 1
