-- Core helpers, the first prelude of every script (the loader puts the preludes a script uses,
-- in dependency order, between the script's `local K = { <name> = KEYS[i], ... }` line and its
-- body, so each script stays one atomic call). Locals only; it depends on no other prelude.

-- The Redis server's clock in whole milliseconds: the one clock every consumer shares.
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- Fails the call before any write when a queue key holds another type, so a foreign
-- key makes the operation fail without changing anything. Arguments: key, type, ...
local function check_types(...)
  local spec = { ... }
  for i = 1, #spec, 2 do
    local actual = redis.call('TYPE', spec[i])['ok']
    if actual ~= 'none' and actual ~= spec[i + 1] then
      error({ err = 'ACKQ_WRONGTYPE ' .. spec[i] .. ' ' .. actual .. ' ' .. spec[i + 1] })
    end
  end
end

-- The delivery number a lease token carries (tokens are <sequence>.<attempt>); nil for
-- none or a token of another form (a lease made before tokens carried it).
local function token_attempt(token)
  return token and tonumber(string.match(token, '%.(%d+)$')) or nil
end

-- A member of K.leased (score +inf: never due) and a field of K.tokens that no message id can
-- be (ids have at most 256 characters). Redis keeps a ZSET or HASH of up to 128 short entries
-- as a listpack, where every insert and look-up scans it: a reserve's ZADD of 50 leases cost
-- five times its skiplist price. One entry over 64 bytes keeps both in their hashed encodings.
local ENCODING_ANCHOR = string.rep('~', 257)

-- The leases in K.leased, the anchor left out.
local function lease_count()
  return redis.call('ZCOUNT', K.leased, '-inf', '(inf')
end

-- A stored body's enqueue time (ms), of either form push writes: JSON '{"t":<ms>,"p":...}', or
-- compact '<ms in base 36>|<payload>' (a message without headers, group or maxAttempts). nil for
-- another text (a completed record has its own).
local function enqueued_at(body)
  local t = string.match(body, '^{"t":(%d+)')
  if t then
    return tonumber(t)
  end
  t = string.match(body, '^(%w+)|')
  return t and tonumber(t, 36)
end

-- The enqueue time a stored body starts with, in each form push writes (see enqueued_at):
-- JSON '{"t":<ms>,' and compact '<ms in base 36>' (the body push is given follows it).
local function body_stamps(now)
  local compact, rest = '', now
  repeat
    local digit = rest % 36
    compact = string.sub('0123456789abcdefghijklmnopqrstuvwxyz', digit + 1, digit + 1) .. compact
    rest = (rest - digit) / 36
  until rest == 0
  return '{"t":' .. now .. ',', compact
end

-- Scores of K.delayed that are never due (sentinel-scores.ts holds them for TypeScript; a unit
-- test keeps both equal). FLOW_HELD, 2^53 - 1 (past any due time a Date can hold): a flow node
-- waiting for something other than time (a parent for its children, a child for its flow's root
-- to be stored). KEY_PARKED, just below it: a message waiting for its key's running one to end
-- (supersede with running 'keep'), listed as delayed after every message with a due time; look-ups
-- show no due time for either.
local FLOW_HELD = '9007199254740991'
local KEY_PARKED = '9007199254740990'

-- Leaves one wake-up token in K.wake for a blocked consumer; never more than one.
local function wake()
  if redis.call('LLEN', K.wake) == 0 then
    redis.call('RPUSH', K.wake, '1')
  end
end

-- After a push that made something due sooner: wakes blocked consumers unless the topic is
-- paused (they wait for resume's wake-up, not for every push). Returns whether it woke them (a
-- partitioned topic's consumers wait in its home slot: the caller passes the wake on). For
-- scripts given K.paused.
local function woken_by_push(must_wake)
  if not must_wake or redis.call('EXISTS', K.paused) == 1 then
    return false
  end
  wake()
  return true
end

-- The most values one command takes from unpack (Lua's stack has a limit): every script that
-- passes a list of any length goes through push_ids or steps by this.
local UNPACK_MAX = 1000

-- One command over many ids (HMGET, ZMSCORE), UNPACK_MAX at a time: the answers in the ids' order.
local function over_ids(command, key, ids)
  local out = {}
  for i = 1, #ids, UNPACK_MAX do
    local part = redis.call(command, key, unpack(ids, i, math.min(i + UNPACK_MAX - 1, #ids)))
    for k = 1, #part do
      out[i + k - 1] = part[k]
    end
  end
  return out
end

-- Pushes many ids with one command per UNPACK_MAX.
local function push_ids(command, key, ids)
  for i = 1, #ids, UNPACK_MAX do
    redis.call(command, key, unpack(ids, i, math.min(i + UNPACK_MAX - 1, #ids)))
  end
end

-- The oldest members of a ZSET scored by time that are beyond max_count or older than max_age,
-- at most 100 (so one call stays short): what a bounded record set drops next.
local function oldest_beyond(key, now, max_count, max_age)
  local aged = #redis.call('ZRANGE', key, '-inf', now - max_age, 'BYSCORE', 'LIMIT', 0, 100)
  local excess = math.min(math.max(redis.call('ZCARD', key) - max_count, 0), 100)
  local drop = math.max(aged, excess)
  return drop > 0 and redis.call('ZRANGE', key, 0, drop - 1) or {}
end

-- Splits the id/token pairs of ARGV (from index `first`) and checks every token in K.tokens
-- with one HMGET. Returns the ids whose lease is still the given one, and one flag per pair
-- (1 held, 0 stale).
local function held_leases(first)
  local ids, given, held, flags = {}, {}, {}, {}
  for i = first, #ARGV, 2 do
    ids[#ids + 1] = ARGV[i]
    given[#given + 1] = ARGV[i + 1]
  end
  if #ids == 0 then
    return held, flags
  end
  local current = redis.call('HMGET', K.tokens, unpack(ids))
  for i, id in ipairs(ids) do
    if current[i] == given[i] then
      held[#held + 1] = id
      flags[i] = 1
    else
      flags[i] = 0
    end
  end
  return held, flags
end
