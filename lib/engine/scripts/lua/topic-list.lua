-- topic-list: the topics of the prefix-wide registry, unordered.
--
-- K.topicIndex
-- ARGV    none
-- Returns  the topics (array of strings)
-- Errors   ACKQ_WRONGTYPE <key> <actual> <expected>
check_types(K.topicIndex, 'set')
return redis.call('SMEMBERS', K.topicIndex)
