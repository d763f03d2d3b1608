-- reserve: acks the leases given after ARGV[6] (exactly as ack does: a consumer acks what
-- finished and reserves more in one call), moves due delayed messages and expired leases
-- to ready (each to its priority level), then leases up to `count` ready messages, the
-- highest level first, grouped messages in their groups' turns (each group's head, groups taking
-- turns, half the batch when plain ones are ready too): each gets attempt + 1, a new token and a
-- deadline. A paused topic (partition) acks and moves but leases nothing, and says so with
-- nextDueInMs -2; a held one (rateLimited) or one at a fleet-wide limit leases no more than the
-- limit allows and answers when it opens.
-- A body that is not a JSON object goes to dead as 'malformed'; a message whose last
-- allowed attempt ended by lease expiry goes to dead as 'expired'.
--
-- KEYS[1]  ready      LIST  ids waiting, head first
-- KEYS[2]  delayed    ZSET  id -> due time (ms)
-- KEYS[3]  leased     ZSET  id -> lease deadline (ms)
-- KEYS[4]  messages   HASH  id -> stored body
-- KEYS[5]  attempts   HASH  id -> deliveries whose lease ended unacked (a lease's own is in its token)
-- KEYS[6]  tokens     HASH  id -> token of the current lease: <sequence>.<attempt>
-- KEYS[7]  dead       ZSET  id -> time of death (ms)
-- KEYS[8]  deadInfo   HASH  id -> JSON { r: reason, e: error, a: attempt, t: time }
-- KEYS[9]  sequence   STRING counter that makes tokens unique
-- KEYS[10] wake       LIST  wake-up token for blocked consumers
-- KEYS[11] paused     STRING present while the topic is paused
-- KEYS[12] priority   HASH  id -> priority level 1-9
-- KEYS[13] deferrals  HASH  id -> deferrals so far (deleted with the message)
-- KEYS[14] readyLevels ZSET level -> level, for the levels 1-9 whose ready LIST holds ids
-- KEYS[15] ready1     LIST  ids waiting at priority 1 (and so on up to ready9)
-- KEYS[16] ready2     LIST
-- KEYS[17] ready3     LIST
-- KEYS[18] ready4     LIST
-- KEYS[19] ready5     LIST
-- KEYS[20] ready6     LIST
-- KEYS[21] ready7     LIST
-- KEYS[22] ready8     LIST
-- KEYS[23] ready9     LIST
-- KEYS[24] groupQueue    ZSET   grouped messages waiting (prelude-flow.lua has the formats)
-- KEYS[25] groupWaiting  HASH   id -> groupQueue member
-- KEYS[26] groupActive   HASH   id -> group, started until ended
-- KEYS[27] groupSlots    HASH   group -> started messages not ended
-- KEYS[28] groupTurns    ZSET   group -> turn
-- KEYS[29] groupHeld     ZSET   group -> ms its rate limit holds it until
-- KEYS[30] groupSequence STRING counter of group order and turns
-- KEYS[31] limits        HASH   fleet-wide limits
-- KEYS[32] rateWindows   HASH   rate window per topic/group
-- KEYS[33] held          STRING present while rateLimited holds the topic
-- KEYS[34] wake          LIST   wake-up token (for the flow helpers)
-- KEYS[35] counters      HASH   acked -> messages acked so far (the acks given count there)
-- ARGV[1]  count        messages to lease at most (>= 1)
-- ARGV[2]  leaseMs      lease length in ms
-- ARGV[3]  maxAttempts  default when a message carries none ("m" in its body)
-- ARGV[4]  maxMoves     bound on delayed and expired entries moved per call
-- ARGV[5]  deadMaxCount dead letters kept at most (the oldest go first)
-- ARGV[6]  deadMaxAgeMs dead letters older than this are deleted
-- ARGV[7…] pairs: id, token of leases to ack first (none or up to 500)
-- Returns  { now, nextDueInMs (-1: none, -2: paused), deadline, n, n ack flags (as ack returns them),
--          then per leased message its id and '<token> <body>' (the token, <sequence>.<attempt>,
--          has no space; two reply items per message, not four, are cheaper to read) }
-- Errors   ACKQ_WRONGTYPE <key> <actual> <expected>
local K_READY, K_DELAYED, K_LEASED, K_MESSAGES, K_ATTEMPTS = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local K_TOKENS, K_DEAD, K_DEAD_INFO, K_SEQUENCE, K_WAKE = KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10]
local K_PAUSED, K_PRIORITY, K_DEFERRALS, K_LEVELS = KEYS[11], KEYS[12], KEYS[13], KEYS[14]
local LEVEL_KEYS, K_COUNTERS = 15, KEYS[35]
use_flow_keys(24)
local count, lease_ms = tonumber(ARGV[1]), tonumber(ARGV[2])
local default_max, max_moves = tonumber(ARGV[3]), tonumber(ARGV[4])
local dead_max_count, dead_max_age = tonumber(ARGV[5]), tonumber(ARGV[6])

local paused = redis.call('EXISTS', K_PAUSED) == 1
-- Groups, limits or a hold in use: one read, so a plain topic pays nothing more for them.
local flow = redis.call('EXISTS', K_LIMITS, K_GROUP_TURNS, K_GROUP_HELD, K_GROUP_WAITING, K_HELD) > 0

-- An idle consumer's periodic look: no acks, nothing ready, due or expired (or paused). A few
-- reads answer it, without the type checks: it writes nothing. A foreign key among those it
-- reads makes a read fail, and the full path below names that key; the others fail the first
-- call that has work (push checks them too).
if #ARGV == 6 and not flow then
  local now = now_ms()
  if paused then
    return { now, -2, now + lease_ms, 0 }
  end
  local ready = redis.pcall('LLEN', K_READY)
  if ready == 0 then
    ready = redis.pcall('ZCARD', K_LEVELS)
  end
  local first_delayed = redis.pcall('ZRANGE', K_DELAYED, 0, 0, 'WITHSCORES')
  local first_lease = redis.pcall('ZRANGE', K_LEASED, 0, 0, 'WITHSCORES')
  if ready == 0 and not first_delayed.err and not first_lease.err then
    local next_delayed = tonumber(first_delayed[2]) or math.huge
    local next_lease = tonumber(first_lease[2]) or math.huge
    if next_delayed > now and next_lease > now then
      local next_due = math.min(next_delayed, next_lease)
      return { now, next_due == math.huge and -1 or next_due - now, now + lease_ms, 0 }
    end
  end
end

check_types(K_READY, 'list', K_DELAYED, 'zset', K_LEASED, 'zset', K_MESSAGES, 'hash', K_ATTEMPTS, 'hash',
  K_TOKENS, 'hash', K_DEAD, 'zset', K_DEAD_INFO, 'hash', K_SEQUENCE, 'string', K_WAKE, 'list', K_LEVELS, 'zset',
  K_COUNTERS, 'hash')
if flow then
  check_types(K_GROUP_QUEUE, 'zset', K_GROUP_WAITING, 'hash', K_GROUP_ACTIVE, 'hash', K_GROUP_SLOTS, 'hash',
    K_GROUP_TURNS, 'zset', K_GROUP_HELD, 'zset', K_LIMITS, 'hash', K_RATE, 'hash')
end
-- The level LISTs in use, checked before any write; a plain topic has none. (priority and
-- deferrals are checked by push, nack and ack, which write them.)
local used = redis.call('ZRANGE', K_LEVELS, 0, -1)
for _, level in ipairs(used) do
  check_types(level_key(K_READY, LEVEL_KEYS, tonumber(level)), 'list')
end

local acked = ack_leases(K_LEASED, K_MESSAGES, K_ATTEMPTS, K_TOKENS, K_PRIORITY, K_DEFERRALS, K_COUNTERS, 7)
local now = now_ms()
local limits = flow and flow_limits() or {}
-- A level now in use: `used` just needs to be non-empty (pop_ready reads the levels itself).
if ready_due(K_READY, K_DELAYED, K_PRIORITY, K_LEVELS, LEVEL_KEYS, now, max_moves, flow, limits.gc or 1) then
  used = { '1' }
end
if ready_expired(K_READY, K_LEASED, K_ATTEMPTS, K_TOKENS, K_PRIORITY, K_LEVELS, LEVEL_KEYS, now, max_moves) then
  used = { '1' }
end

local deadline = now + lease_ms
local out = { now, -1, deadline, #acked }
for i = 1, #acked do
  out[#out + 1] = acked[i]
end
-- How many may start now, and when a limit that stops them opens (math.huge: none stops them).
local room, opens = paused and 0 or count, math.huge
if flow and not paused then
  release_held_groups(now, max_moves, limits.gc or 1)
  room, opens = flow_room(count, limits, now, K_LEASED)
end
local ids = room > 0 and take_ready(K_READY, K_LEVELS, LEVEL_KEYS, room, used, flow, limits, now)
if ids then
  -- One command per batch, not per message: bodies and attempts are read together.
  local bodies = redis.call('HMGET', K_MESSAGES, unpack(ids))
  local attempts = redis.call('HMGET', K_ATTEMPTS, unpack(ids))
  local token_base = redis.call('INCRBY', K_SEQUENCE, #ids) - #ids
  local lease_args, token_args = {}, {}
  -- Numbers passed to redis.call are formatted with %.17g, which costs more than the rest
  -- of a message's work: integers are formatted once here, and with %d.
  local deadline_text = string.format('%d', deadline)
  for i, id in ipairs(ids) do
    local body = bodies[i]
    local ok, max_attempts = false, nil
    if body and string.sub(body, 1, 5) == '{"t":' then
      -- Written by push: a JSON object whose "m", when set, is its last member. The client
      -- parses it anyway and buries it as malformed if someone else damaged the rest.
      ok, max_attempts = true, tonumber(string.match(string.sub(body, -20), ',"m":(%d+)}$'))
    elseif body then
      local decoded
      ok, decoded = pcall(cjson.decode, body)
      ok = ok and type(decoded) == 'table'
      max_attempts = ok and tonumber(decoded.m) or nil
    end
    local attempt = (tonumber(attempts[i]) or 0) + 1
    if not ok or attempt > (max_attempts or default_max) then
      redis.call('HDEL', K_ATTEMPTS, id)
      bury(K_DEAD, K_DEAD_INFO, K_MESSAGES, id, ok and 'expired' or 'malformed',
        ok and 'the lease of the last attempt expired' or
        (body and 'the stored body is not a JSON object' or 'the stored body is missing'),
        attempt - 1, now, dead_max_count, dead_max_age, K_PRIORITY, K_DEFERRALS)
    else
      -- The attempt travels in the token: no write to the attempts hash per delivery.
      local token = string.format('%d.%d', token_base + i, attempt)
      lease_args[#lease_args + 1] = deadline_text
      lease_args[#lease_args + 1] = id
      token_args[#token_args + 1] = id
      token_args[#token_args + 1] = token
      out[#out + 1] = id
      out[#out + 1] = token .. ' ' .. body
    end
  end
  if #lease_args > 0 then
    redis.call('ZADD', K_LEASED, unpack(lease_args))
    redis.call('HSET', K_TOKENS, unpack(token_args))
    if limits.rm then
      rate_use('', limits.rw, now, #lease_args / 2)
    end
  end
  -- Work is left: let another blocked consumer help.
  if plain_left(K_READY, K_LEVELS, used) or (flow and redis.call('ZCARD', K_GROUP_TURNS) > 0) then
    wake(K_WAKE)
  end
end

-- Paused: the consumer waits for resume's wake-up, not for due times.
if paused then
  out[2] = -2
  return out
end

-- The next moment something becomes ready without a push.
local next_due = next_due_at(K_READY, K_DELAYED, K_LEASED, K_LEVELS, used, flow, opens)
if next_due ~= math.huge then
  out[2] = math.max(0, next_due - now)
end
return out
