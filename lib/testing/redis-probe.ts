import { connect, createServer } from 'node:net';

/** A port nothing listens on right now (the server may still lose it to another process: the caller retries). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/**
 * Sends one inline command (`PING`, `FLUSHALL`) to the server on `port` and resolves with the
 * first `lines` lines of its reply (joined by `\n`; an error reply is one line), or undefined when
 * it cannot be reached or does not answer within `timeoutMs`. A raw socket, not a client: nothing
 * outlives the call.
 */
export function sendCommand(port: number, command: string, timeoutMs = 1_000, lines = 1): Promise<string | undefined> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let reply = '';
    const done = (answer: string | undefined) => {
      socket.destroy();
      resolve(answer);
    };
    socket.setTimeout(timeoutMs, () => done(undefined));
    socket.on('error', () => done(undefined));
    // Closed by the server without a whole reply (SHUTDOWN closes without one).
    socket.on('close', () => done(undefined));
    socket.on('connect', () => socket.write(`${command}\r\n`));
    socket.on('data', (data: Buffer) => {
      reply += data.toString();
      const received = reply.split('\r\n').slice(0, -1);
      if (received[0]?.startsWith('-')) done(received[0]);
      else if (received.length >= lines) done(received.slice(0, lines).join('\n'));
    });
  });
}
