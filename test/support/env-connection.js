// The connection option of a test's child process, from its env: REDIS_CLUSTER (seeds as
// host:port,host:port...) or else REDIS_URL.
exports.connectionFromEnv = function connectionFromEnv() {
  if (!process.env.REDIS_CLUSTER) return process.env.REDIS_URL;
  const seeds = process.env.REDIS_CLUSTER.split(',').map((address) => ({
    host: address.split(':')[0],
    port: Number(address.split(':')[1]),
  }));
  return { cluster: seeds };
};
