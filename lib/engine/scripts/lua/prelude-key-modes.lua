-- Keyed pushes (debounce, throttle, supersede by key), after prelude.lua: each key's state in
-- K.keyModes, each live keyed message's mode and key in K.keyOf, and what a key does when one of
-- its messages ends. For scripts given K.keyModes, K.keyOf, K.delayed and K.wake; locals only.

-- The fields of a state value, '\0' between them.
local function key_fields(value)
  local fields = {}
  for field in string.gmatch(value .. '\0', '([^%z]*)%z') do
    fields[#fields + 1] = field
  end
  return fields
end

-- A supersede key's state: the message that started and has not ended (cur), the one that has
-- not started (next) and the due time its last push gave it, and a cancelled predecessor
-- whose handler may still run (drain) until its lease deadline (drain_until).
local function supersede_state(field)
  local f = key_fields(redis.call('HGET', K.keyModes, field) or '')
  return {
    cur = f[1] or '',
    next = f[2] or '',
    next_due = tonumber(f[3]) or 0,
    drain = f[4] or '',
    drain_until = tonumber(f[5]) or 0,
  }
end

-- Stores a supersede key's state; one with no message left is removed.
local function supersede_save(field, s)
  if s.cur == '' and s.next == '' and s.drain == '' then
    redis.call('HDEL', K.keyModes, field)
    return
  end
  local value = table.concat({ s.cur, s.next, string.format('%d', s.next_due), s.drain, string.format('%d', s.drain_until) }, '\0')
  redis.call('HSET', K.keyModes, field, value)
end

-- The drained predecessor's handler has returned (or its successor started): forgotten.
local function drain_over(s)
  if s.drain ~= '' then
    redis.call('HDEL', K.keyOf, s.drain)
  end
  s.drain, s.drain_until = '', 0
end

-- A waiting message of a key may start at `due` (now at the earliest): reserve moves it when due.
local function key_release(id, due, now)
  redis.call('ZADD', K.delayed, math.max(due, now), id)
  wake()
end

-- A cancelled (superseded) message's consumer reports its handler returned, with an ack its
-- lease no longer holds: its key's next message need not wait for that lease's deadline.
local function key_drained(id)
  local value = redis.call('HGET', K.keyOf, id)
  if not value then
    return
  end
  local field = 's' .. string.sub(value, 2)
  local s = supersede_state(field)
  if s.drain ~= id then
    return
  end
  drain_over(s)
  if s.next ~= '' and s.cur == '' then
    local now = now_ms()
    local score = tonumber(redis.call('ZSCORE', K.delayed, s.next))
    if score and score > math.max(s.next_due, now) and score < tonumber(KEY_PARKED) then
      key_release(s.next, s.next_due, now)
    end
  end
  supersede_save(field, s)
end
