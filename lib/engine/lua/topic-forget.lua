-- topic-forget: removes a topic from the prefix-wide registry of topics (its messages stay).
--
-- KEYS[1] topicIndex  SET  the registered topics
-- ARGV[1] topic       the topic
-- Returns  1 when the topic was registered, 0 otherwise
-- Errors   ACKQ_WRONGTYPE <key> <actual> <expected>
local K_TOPICS = KEYS[1]
check_types(K_TOPICS, 'set')
return redis.call('SREM', K_TOPICS, ARGV[1])
