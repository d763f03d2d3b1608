// Preloaded by run.js (NODE_OPTIONS=--require): processes that the tests spawn, such as
// test/support/consumer-process.js with the built package, find @nestjs/* in Nest 11 too. Inside
// Jest, jest.config.js maps them (Jest resolves modules itself).
const Module = require('node:module');

const NEST = /^@nestjs\/(common|core|microservices|platform-express|platform-fastify|testing)(\/|$)/;
const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, parent, isMain, options) {
  const paths = NEST.test(request) ? [__dirname] : options?.paths;
  return resolve.call(this, request, parent, isMain, paths ? { ...options, paths } : options);
};
