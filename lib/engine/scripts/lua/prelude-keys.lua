-- Keyed pushes (debounce, throttle, supersede by key), after prelude.lua: each key's state in
-- K.keys, each live keyed message's mode and key in K.keyOf, and what a key does when one of
-- its messages ends. For scripts given K.keys, K.keyOf, K.delayed and K.wake; locals only.

-- The score of a message that waits for its key's running one to end (supersede with
-- running 'keep'): never due. Just below FLOW_HELD, which `list` leaves out: listed as delayed,
-- after every message with a due time; look-ups show no due time for it.
local KEY_PARKED = '9007199254740990'

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
  local f = key_fields(redis.call('HGET', K.keys, field) or '')
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
    redis.call('HDEL', K.keys, field)
    return
  end
  local value = table.concat({ s.cur, s.next, string.format('%d', s.next_due), s.drain, string.format('%d', s.drain_until) }, '\0')
  redis.call('HSET', K.keys, field, value)
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

-- Messages that ended for good (acked, completed, dead, cancelled) leave their keys: a debounce
-- key forgets its pending message, a supersede key's waiting message may start once the one
-- it waited for ended, and a key with no message left is removed.
local function keys_ended(ids)
  if #ids == 0 or redis.call('EXISTS', K.keyOf) == 0 then
    return
  end
  local now
  local keyed = redis.call('HMGET', K.keyOf, unpack(ids))
  for i, value in ipairs(keyed) do
    if value then
      local id = ids[i]
      redis.call('HDEL', K.keyOf, id)
      local mode, key = string.sub(value, 1, 1), string.sub(value, 2)
      if mode == 'd' then
        local field = 'd' .. key
        if key_fields(redis.call('HGET', K.keys, field) or '')[1] == id then
          redis.call('HDEL', K.keys, field)
        end
      elseif mode == 'c' or mode == 'k' then
        local field = 's' .. key
        local s = supersede_state(field)
        if s.cur == id then
          s.cur = ''
          if s.next ~= '' and redis.call('ZSCORE', K.delayed, s.next) == KEY_PARKED then
            now = now or now_ms()
            key_release(s.next, math.max(s.next_due, s.drain_until), now)
          end
        elseif s.next == id then
          s.next = ''
          drain_over(s)
        end
        supersede_save(field, s)
      end
    end
  end
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
