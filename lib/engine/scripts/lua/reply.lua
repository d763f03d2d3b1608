-- reply: answers requests once each. Stores each reply under its request's id, with a TTL, and
-- announces it to its caller, only while the given token is still its lease and no reply was
-- stored for it before: a request delivered again (its server killed after replying, before
-- the ack) is not answered twice. A caller that asked for it hears the reply itself, so it need
-- not fetch it; an older caller hears the id, and takes the reply. The replies of one turn of a
-- server come in one call.
--
-- K.tokens K.replies
-- (each reply's key is made here, the replies prefix and its id: in the topic's hash tag)
-- ARGV, six per reply:
--   id
--   token
--   reply    JSON text (the client bounds its size; JSON.stringify writes no newline)
--   ttl      ms the reply is kept for its caller
--   channel  the caller's pub/sub channel: it hears the id
--   inline   '' or the caller's channel for whole replies: it hears '<reply>\n<id>' instead
-- Returns one code per reply: 1 stored and announced, 0 stale token, 2 answered before (nothing changed)
-- Errors  ACKQ_WRONGTYPE <key> <actual> <expected>
check_types(K.tokens, 'hash')

local results = {}
for i = 1, #ARGV, 6 do
  local id, reply, inline = ARGV[i], ARGV[i + 2], ARGV[i + 5]
  local key = K.replies .. id
  if redis.call('HGET', K.tokens, id) ~= ARGV[i + 1] then
    results[#results + 1] = 0
  elseif not redis.call('SET', key, reply, 'NX', 'PX', ARGV[i + 3]) then
    results[#results + 1] = 2
  else
    local channel, notice = ARGV[i + 4], id
    if inline ~= '' then
      channel, notice = inline, reply .. '\n' .. id
    end
    redis.call('PUBLISH', channel, notice)
    results[#results + 1] = 1
  end
end
return results
