import { type Server, type Socket, connect, createServer } from 'node:net';

/**
 * A TCP proxy in front of a private redis-server that can lose one reply: once armed with a
 * marker, the next command carrying it reaches Redis (and runs there), but its reply is
 * dropped and the client's connection is cut, as when a network or a server dies between
 * the write and the answer. Later connections pass through untouched.
 */
export class ReplyDroppingProxy {
  private armed: string | undefined;
  /** After the drop, connections are held unanswered: the client can never reach Redis again. */
  private cutOffAfter = false;
  private cutOff = false;
  private readonly sockets = new Set<Socket>();
  /** How many replies were dropped. */
  dropped = 0;

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async start(redisPort: number): Promise<ReplyDroppingProxy> {
    // Clients connect only once the server listens, by when `proxy` is set.
    const server = createServer((client) => proxy.relay(client, redisPort));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const proxy = new ReplyDroppingProxy(server, (server.address() as { port: number }).port);
    return proxy;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /**
   * The next command whose bytes contain `marker` runs, but its client never hears back. With
   * `thenCutOff`, every connection after it is held without reaching Redis: as a process that
   * died right after that command, before it could send another.
   */
  dropReplyTo(marker: string, { thenCutOff = false } = {}): void {
    this.armed = marker;
    this.cutOffAfter = thenCutOff;
  }

  /** Ends a cut-off (`thenCutOff`): the held connections are closed, so their clients reconnect, and pass from now on. */
  reopen(): void {
    this.cutOff = false;
    this.cutOffAfter = false;
    this.cutConnections();
  }

  /**
   * Cuts every connection open now, both ends, as a network blip would: commands in flight get no
   * reply. Later connections pass. Returns how many sockets it closed.
   */
  cutConnections(): number {
    const count = this.sockets.size;
    this.sockets.forEach((socket) => socket.destroy());
    return count;
  }

  async close(): Promise<void> {
    this.sockets.forEach((socket) => socket.destroy());
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private relay(client: Socket, redisPort: number): void {
    if (this.cutOff) {
      this.sockets.add(client);
      client.on('close', () => this.sockets.delete(client)).on('error', () => undefined);
      return;
    }
    const upstream = connect(redisPort, '127.0.0.1');
    this.sockets.add(client).add(upstream);
    let cutting = false;
    client.on('data', (chunk) => {
      if (this.armed !== undefined && chunk.includes(this.armed)) {
        this.armed = undefined;
        cutting = true;
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk) => {
      if (!cutting) {
        client.write(chunk);
        return;
      }
      // The command ran (this is its reply): lose the reply and the connection.
      this.dropped++;
      if (this.cutOffAfter) this.cutOff = true;
      client.destroy();
      upstream.destroy();
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
      this.sockets.delete(client);
      this.sockets.delete(upstream);
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  }
}
