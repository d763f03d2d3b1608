import { requirePeer } from '../observability/optional-peer';

// Imported first by this entry point (index.ts), before the files that import
// @nestjs/microservices: without the optional peer, importing `nestjs-redis-ack-queue/microservices`
// fails with a MissingPeerDependencyError that names it, not Node's bare "Cannot find module".
// The peer is loaded here for its check only; the transport's files load the same copy next.
requirePeer('@nestjs/microservices', 'The entry point nestjs-redis-ack-queue/microservices');
