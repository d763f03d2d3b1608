-- topic-add: records a topic in the prefix-wide registry of topics.
--
-- KEYS[1] topicIndex  SET  the registered topics
-- ARGV[1] topic       the topic
-- Returns  1 when the topic was new, 0 when it was registered already
-- Errors   ACKQ_WRONGTYPE <key> <actual> <expected>
local K_TOPICS = KEYS[1]
check_types(K_TOPICS, 'set')
return redis.call('SADD', K_TOPICS, ARGV[1])
