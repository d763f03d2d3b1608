// The connection option of a test's child process, from its env: REDIS_CLUSTER (seeds as
// host:port,host:port...), REDIS_SENTINELS (Sentinels as host:port,... with the master's name in
// REDIS_SENTINEL_NAME), or else REDIS_URL.
const addresses = (list) =>
  list.split(',').map((address) => ({ host: address.split(':')[0], port: Number(address.split(':')[1]) }));

exports.connectionFromEnv = function connectionFromEnv() {
  if (process.env.REDIS_CLUSTER) return { cluster: addresses(process.env.REDIS_CLUSTER) };
  if (process.env.REDIS_SENTINELS)
    return { sentinels: addresses(process.env.REDIS_SENTINELS), name: process.env.REDIS_SENTINEL_NAME };
  return process.env.REDIS_URL;
};
