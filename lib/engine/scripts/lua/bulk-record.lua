-- bulk-record: a bulk action's record, in its topic's first partition (the HASH that also holds
-- that partition's progress, bulk-select.lua): made once every partition's selection is stored,
-- claimed by a runner under a lease (server clock), renewed as it steps, and marked done.
-- A record left `done` or `aborted` expires after the ttl.
--
-- K.bulk
-- ARGV[1]  bulk id
-- ARGV[2]  'create': ARGV[3] action, ARGV[4] state, ARGV[5] maxPerSecond, ARGV[6] partition
--          count, ARGV[7] how many it selected in all partitions (none: it is done at once),
--          ARGV[8] ttl (ms) while nobody claims it, ARGV[9] what a runner must have to run it
--          ('' for nothing: reencrypt's target key id, see bulk-store.ts)
--          'claim': ARGV[3] runner token, ARGV[4] lease (ms), ARGV[5] ttl (ms): taken when the
--          lease lapsed (or is this runner's), and the lease renewed
--          'finish': ARGV[3] runner token, ARGV[4] ttl (ms): done, if still this runner's
--          'release': ARGV[3] runner token: its lease given back (a runner that cannot run it),
--          if still this runner's
-- Returns  create: the server's time (ms), its createdAt
--          claim: { 'gone' } without a record; { 'done' | 'aborted' } when it stands so;
--          { 'held', ms until the lease lapses } while another runner holds it; else
--          { 'running', action, state, maxPerSecond, partition count, what a runner must have }
--          finish, release: 1 when done, 0 when it was no longer this runner's or running
local key = K.bulk .. ARGV[1]
local op = ARGV[2]
local now = now_ms()

if op == 'create' then
  local state = ARGV[7] == '0' and 'done' or 'running'
  redis.call('HSET', key, 'a', ARGV[3], 'st', ARGV[4], 'r', ARGV[5], 'k', ARGV[6], 'sel', ARGV[7], 'x', state,
    'c', now, 'o', '', 'l', 0, 'q', ARGV[9] or '')
  redis.call('PEXPIRE', key, ARGV[8])
  return now
end

local record = redis.call('HMGET', key, 'x', 'o', 'l', 'a', 'st', 'r', 'k', 'q')
local state, owner, lease = record[1], record[2], tonumber(record[3]) or 0
if op == 'claim' then
  if not state then
    return { 'gone' }
  end
  if state ~= 'running' then
    return { state }
  end
  if owner ~= ARGV[3] and lease > now then
    return { 'held', lease - now }
  end
  redis.call('HSET', key, 'o', ARGV[3], 'l', now + tonumber(ARGV[4]))
  redis.call('PEXPIRE', key, ARGV[5])
  return { 'running', record[4], record[5], record[6], record[7], record[8] or '' }
end

if op == 'release' then
  if state ~= 'running' or owner ~= ARGV[3] then
    return 0
  end
  redis.call('HSET', key, 'o', '', 'l', 0)
  return 1
end

-- finish
if state ~= 'running' or owner ~= ARGV[3] then
  return 0
end
redis.call('HSET', key, 'x', 'done', 'f', now)
redis.call('PEXPIRE', key, ARGV[4])
return 1
