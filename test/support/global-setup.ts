import { redisServerRelease } from '../../support/redis-processes/redis-binary';

/** Fails the run at once, with the fix, when the tests cannot start their own Redis. */
export default function globalSetup(): void {
  redisServerRelease();
}
