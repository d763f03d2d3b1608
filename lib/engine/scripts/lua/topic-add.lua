-- topic-add: records a topic in the prefix-wide registry of topics.
--
-- K.topicIndex
-- ARGV[1] topic       the topic
-- Returns  1 when the topic was new, 0 when it was registered already
-- Errors   ACKQ_WRONGTYPE <key> <actual> <expected>
check_types(K.topicIndex, 'set')
return redis.call('SADD', K.topicIndex, ARGV[1])
