-- topic-list: the topics of the prefix-wide registry, unordered.
--
-- KEYS[1] topicIndex  SET  the registered topics
-- ARGV    none
-- Returns  the topics (array of strings)
-- Errors   ACKQ_WRONGTYPE <key> <actual> <expected>
local K_TOPICS = KEYS[1]
check_types(K_TOPICS, 'set')
return redis.call('SMEMBERS', K_TOPICS)
