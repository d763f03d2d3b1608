-- topic-forget: removes a topic from the prefix-wide registry of topics (its messages stay).
--
-- K.topicIndex
-- ARGV[1] topic       the topic
-- Returns  1 when the topic was registered, 0 otherwise
-- Errors   ACKQ_WRONGTYPE <key> <actual> <expected>
check_types(K.topicIndex, 'set')
return redis.call('SREM', K.topicIndex, ARGV[1])
