import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { Logger } from '@nestjs/common';

const logger = new Logger('SampleBilling');

/**
 * Starts the billing microservice (billing/main.js, built beside this file) as a child process on
 * the app's Redis. Its log goes to this terminal; over the IPC channel it learns when this process
 * dies without stopping it. `stop()` ends it (its handlers drain) and resolves once it exited.
 */
export function startBilling(redisUrl: string): { stop: () => Promise<void> } {
  const child = spawn(process.execPath, [join(__dirname, 'billing', 'main.js')], {
    env: { ...process.env, REDIS_URL: redisUrl },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  let stopping = false;
  const exited = new Promise<void>((resolve) => {
    child.once('exit', (code, signal) => {
      if (!stopping) {
        logger.error(
          `The billing microservice exited (${signal ?? `code ${code}`}): quotes and bills answer 504 ` +
            'until it runs again; order events wait for it in Redis',
        );
      }
      resolve();
    });
    child.once('error', (error) => {
      logger.error(`Cannot start the billing microservice: ${error.message}`);
      resolve();
    });
  });
  return {
    stop: () => {
      stopping = true;
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}
