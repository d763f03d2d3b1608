-- dead-list: pages through the dead letters, oldest first.
--
-- K.dead K.deadInfo K.messages
-- ARGV[1] offset  entries to skip (>= 0)
-- ARGV[2] limit   entries to return (>= 1)
-- ARGV[3] preview bytes of payload per letter; absent or 0: whole bodies
-- Returns { id, info or false, body or false, ... }; with a preview, 6 per letter: the body
--         without its payload, then the preview text or false, 1 when it was cut (else 0), the
--         payload's size in bytes
-- Errors  ACKQ_WRONGTYPE <key> <actual> <expected>
check_types(K.dead, 'zset', K.deadInfo, 'hash', K.messages, 'hash')

local offset, limit, preview = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]) or 0
local out = {}
for _, id in ipairs(redis.call('ZRANGE', K.dead, offset, offset + limit - 1)) do
  out[#out + 1] = id
  out[#out + 1] = redis.call('HGET', K.deadInfo, id)
  local body = redis.call('HGET', K.messages, id)
  if preview > 0 then
    local rest, text, cut, size = preview_row(body, preview)
    out[#out + 1] = rest
    out[#out + 1] = text
    out[#out + 1] = cut
    out[#out + 1] = size
  else
    out[#out + 1] = body
  end
end
return out
