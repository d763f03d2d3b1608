// Preloaded by run.js (NODE_OPTIONS=--require): processes that the tests spawn, such as
// test/support/consumer-process.js with the built package, load ioredis 5 too. Inside Jest,
// jest.config.js maps it (Jest resolves modules itself).
const Module = require('node:module');

const IOREDIS = /^ioredis(\/|$)/;
const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, parent, isMain, options) {
  const paths = IOREDIS.test(request) ? [__dirname] : options?.paths;
  return resolve.call(this, request, parent, isMain, paths ? { ...options, paths } : options);
};
