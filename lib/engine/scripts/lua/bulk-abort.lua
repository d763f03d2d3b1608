-- bulk-abort: stops a bulk action in one partition: its snapshot is deleted, so no step acts on
-- anything here after this call. In the topic's first partition (called first) it also marks
-- the record aborted, if it was running; its progress stays until the record expires.
--
-- K.bulk K.bulkIds
-- ARGV[1]  bulk id
-- ARGV[2]  '1' in the topic's first partition (the record's), else '0'
-- ARGV[3]  ttl (ms) of what stays (record, progress)
-- Returns  1 when the record was running (first partition) or a snapshot was deleted, else 0
local key = K.bulk .. ARGV[1]
local was = 0
if ARGV[2] == '1' then
  if redis.call('HGET', key, 'x') == 'running' then
    redis.call('HSET', key, 'x', 'aborted', 'f', now_ms())
    was = 1
  end
end
if redis.call('EXISTS', key) == 1 then
  redis.call('PEXPIRE', key, ARGV[3])
end
key = K.bulkIds .. ARGV[1]
if redis.call('DEL', key) == 1 and ARGV[2] ~= '1' then
  was = 1
end
return was
