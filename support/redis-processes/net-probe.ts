import { connect } from 'node:net';
import { connect as connectTls } from 'node:tls';
// The package's own probe (nestjs-redis-ack-queue/testing starts servers the same way).
import { freePort as unusedPort } from '../../lib/testing/redis-probe';

/** Ports this process handed out: the system may offer a port again once its probe closed. */
const handedOut = new Set<number>();

/**
 * A port nothing listens on right now, for a private server, and never one handed out before in
 * this process: servers started together (a cluster's data and bus ports) each get their own.
 */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = await unusedPort();
    if (handedOut.has(port)) continue;
    handedOut.add(port);
    return port;
  }
}

/**
 * Up means the server answers PING (NOAUTH counts: it answers) and is not loading its data.
 * A raw socket, not a client: a client's timers would outlive a failed probe.
 */
export function answersPing(port: number, tls?: { ca: Buffer }): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = tls ? connectTls({ port, host: '127.0.0.1', ca: tls.ca }) : connect(port, '127.0.0.1');
    const done = (up: boolean) => {
      socket.destroy();
      resolve(up);
    };
    socket.setTimeout(1_000, () => done(false));
    socket.on('error', () => done(false));
    socket.on(tls ? 'secureConnect' : 'connect', () => socket.write('PING\r\n'));
    socket.on('data', (data: Buffer) => done(/^(\+PONG|-NOAUTH)/.test(data.toString())));
  });
}
