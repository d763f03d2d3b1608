-- scaling-read: a topic's scaling signal (docs/scaling.md), computed and smoothed on the server's
-- clock, in its home slot. Arrival rate: the topic's `pushed` counter against the newest sample
-- at least 10 s old (samples, at most one a second, kept a minute), else the history's current
-- and previous minutes. Handling time: the history's mean of those minutes (else the last known).
-- Backlog: what metrics counts as ready (ready lists, grouped waiting, due delayed, expired
-- leases). Slots: the fewest whose Erlang C mean wait is within the target and that start the
-- backlog's last message within it; consumers = slots / concurrency, clamped. Smoothing: up at
-- once by more than 10 %, down only after `cooldownMs` more than 10 % lower. Writes only K.scaling,
-- and nothing for a topic without a target.
--
-- K.scaling K.history K.counters K.delayed K.leased K.groupQueue K.groupCount
-- ARGV[1] slots    the history's fields kept (minutes)
-- ARGV[2] backlog  of a partitioned topic, summed over its partitions ('' : read here, unpartitioned)
-- ARGV[3] pushed   of a partitioned topic, its `pushed` total summed over its partitions
-- Returns nil without a target, else { desired, computed, arrival per second (string), handling
--         ms (string, '' unknown), backlog, targetWaitMs, minConsumers, maxConsumers, concurrency,
--         cooldownMs, now }
-- Errors  ACKQ_WRONGTYPE <key> <actual> <expected>
check_types(K.scaling, 'hash', K.history, 'hash', K.counters, 'hash', K.delayed, 'zset', K.leased, 'zset')

local state = redis.call('HMGET', K.scaling, 'tw', 'mn', 'mx', 'cc', 'cd', 'd', 'lo', 's', 'x')
if not state[1] then
  return nil
end
local target, min_c, max_c = tonumber(state[1]), tonumber(state[2]), tonumber(state[3])
local per, cooldown = tonumber(state[4]), tonumber(state[5])
local desired, lower_since, known_s = tonumber(state[6]), tonumber(state[7]), tonumber(state[8])
local now = now_ms()

local backlog, pushed
if ARGV[2] == '' then
  backlog = ready_count() + redis.call('ZCARD', K.groupQueue) + (tonumber(redis.call('GET', K.groupCount)) or 0)
    + redis.call('ZCOUNT', K.delayed, '-inf', now) + redis.call('ZCOUNT', K.leased, '-inf', now)
  pushed = tonumber(redis.call('HGET', K.counters, 'pushed') or 0)
else
  backlog, pushed = tonumber(ARGV[2]), tonumber(ARGV[3])
end

-- The history's current and previous minutes: pushed, handling sum and count, and since when.
local slots = tonumber(ARGV[1])
local minute = math.floor(now / 60000)
local h_pushed, h_sum, h_count, h_since = 0, 0, 0, minute * 60000
for m = minute - 1, minute do
  local record = redis.call('HGET', K.history, string.format('%d', m % slots))
  local fields = {}
  if record then
    for field in string.gmatch(record .. '|', '([^|]*)|') do
      fields[#fields + 1] = field
    end
  end
  if tonumber(fields[1]) == m then
    h_pushed = h_pushed + (tonumber(fields[2]) or 0)
    h_sum = h_sum + (tonumber(fields[8]) or 0)
    for count in string.gmatch(fields[10] or '', '%d+:(%d+)') do
      h_count = h_count + tonumber(count)
    end
    h_since = math.min(h_since, m * 60000)
  end
end
local handling = known_s
if h_count > 0 then
  handling = h_sum / h_count
end

-- Samples `<ms>:<pushed>` joined by ',', oldest first: the rate since the newest one 10 s old.
local samples, kept = {}, {}
for sample, at, total in string.gmatch(state[9] or '', '((%d+):(%d+))') do
  samples[#samples + 1] = { tonumber(at), tonumber(total), sample }
end
local base
for i = #samples, 1, -1 do
  if now - samples[i][1] >= 10000 then
    base = samples[i]
    break
  end
end
local arrival
if base and pushed >= base[2] then
  arrival = (pushed - base[2]) * 1000 / (now - base[1])
else
  -- A first read (or counters gone): the history's minutes, over the time they cover.
  if pushed < (samples[#samples] or { 0, 0 })[2] then
    samples = {}
  end
  arrival = h_pushed * 1000 / math.max(1000, now - h_since)
end
for i, sample in ipairs(samples) do
  if now - sample[1] <= 60000 or i == #samples then
    kept[#kept + 1] = sample[3]
  end
end
local newest = samples[#samples]
if not newest or now - newest[1] >= 1000 then
  kept[#kept + 1] = string.format('%d:%d', now, pushed)
end

-- Past this offered load the recursion below (one step per slot) would cost over 100 us; the
-- Halfin-Whitt approximation of Erlang C is within a slot or two of it there, in 200 steps at most.
local EXACT_LOAD = 2000

-- The normal distribution's CDF (Abramowitz and Stegun 7.1.26, within 1.5e-7) and density.
local function normal_cdf(x)
  local z = x / math.sqrt(2)
  local t = 1 / (1 + 0.3275911 * z)
  local poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
  return 1 - 0.5 * poly * math.exp(-z * z)
end
local function normal_pdf(x)
  return math.exp(-x * x / 2) / math.sqrt(2 * math.pi)
end

-- The fewest slots c = load + beta * sqrt(load) whose mean wait, with Erlang C taken as
-- 1 / (1 + beta * PHI(beta) / phi(beta)), is within the target (beta in steps of 0.025).
local function halfin_whitt(load, handling, target)
  local root = math.sqrt(load)
  for step = 1, 200 do
    local beta = step * 0.025
    local c = math.ceil(load + beta * root)
    beta = (c - load) / root
    local erlang_c = 1 / (1 + beta * normal_cdf(beta) / normal_pdf(beta))
    if erlang_c * handling / (c - load) <= target then
      return c
    end
  end
  return math.ceil(load + 5 * root)
end

-- The consumers needed now.
local cap = max_c * per
local computed
if arrival == 0 and backlog == 0 then
  computed = min_c
elseif not handling then
  computed = math.max(1, min_c)
else
  local load = arrival * handling / 1000
  local need
  if load >= cap then
    need = cap
  elseif load > EXACT_LOAD then
    need = math.min(cap, halfin_whitt(load, handling, target))
  else
    -- Erlang B by recursion, then C; the first c past the load whose mean wait is within the target.
    local b = 1
    need = cap
    for c = 1, cap do
      b = load * b / (c + load * b)
      if c > load then
        local erlang_c = c * b / (c - load * (1 - b))
        if erlang_c * handling / (c - load) <= target then
          need = c
          break
        end
      end
    end
  end
  need = math.max(need, math.ceil(backlog * handling / target))
  computed = math.ceil(need / per)
end
computed = math.min(max_c, math.max(min_c, computed))

-- Smoothing: up at once by more than 10 %, down after the cooldown more than 10 % lower.
if desired then
  desired = math.min(max_c, math.max(min_c, desired))
end
if not desired or (computed > desired and (desired == 0 or computed - desired > desired / 10)) then
  desired, lower_since = computed, nil
elseif computed < desired and desired - computed > desired / 10 then
  lower_since = lower_since or now
  if now - lower_since >= cooldown then
    desired, lower_since = computed, nil
  end
else
  lower_since = nil
end

redis.call('HSET', K.scaling, 'd', desired, 'x', table.concat(kept, ','))
if handling then
  redis.call('HSET', K.scaling, 's', string.format('%.3f', handling))
end
if lower_since then
  redis.call('HSET', K.scaling, 'lo', lower_since)
else
  redis.call('HDEL', K.scaling, 'lo')
end
return {
  desired, computed, string.format('%.3f', arrival), handling and string.format('%.3f', handling) or '', backlog,
  target, min_c, max_c, per, cooldown, now,
}
