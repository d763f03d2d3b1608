import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { redisServerBinary } from '../../support/redis-processes/redis-binary';
import { answersPing, freePort } from '../../support/redis-processes/net-probe';

/** A private redis-server that speaks only TLS, with a CA and certificate made here by openssl. */
export class TlsRedisServer {
  private constructor(
    readonly port: number,
    readonly dir: string,
    readonly ca: Buffer,
    private readonly child: ChildProcess,
  ) {}

  static async start(): Promise<TlsRedisServer> {
    const dir = mkdtempSync(join(tmpdir(), 'ackq-tls-'));
    const file = (name: string) => join(dir, name);
    const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'pipe' });
    openssl(
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=ackq-test-ca',
      '-keyout',
      file('ca.key'),
      '-out',
      file('ca.crt'),
    );
    openssl(
      'req',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-subj',
      '/CN=127.0.0.1',
      '-keyout',
      file('server.key'),
      '-out',
      file('server.csr'),
    );
    writeFileSync(file('san.ext'), 'subjectAltName=IP:127.0.0.1\n');
    openssl(
      'x509',
      '-req',
      '-in',
      file('server.csr'),
      '-CA',
      file('ca.crt'),
      '-CAkey',
      file('ca.key'),
      '-CAcreateserial',
      '-days',
      '1',
      '-extfile',
      file('san.ext'),
      '-out',
      file('server.crt'),
    );
    const port = await freePort();
    const child = spawn(
      redisServerBinary(),
      [
        '--port',
        '0',
        '--tls-port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--dir',
        dir,
        '--save',
        '',
        '--appendonly',
        'no',
        '--tls-cert-file',
        file('server.crt'),
        '--tls-key-file',
        file('server.key'),
        '--tls-ca-cert-file',
        file('ca.crt'),
        '--tls-auth-clients',
        'no',
        '--logfile',
        'redis.log',
      ],
      { stdio: 'ignore' },
    );
    const ca = readFileSync(file('ca.crt'));
    const server = new TlsRedisServer(port, dir, ca, child);
    for (let i = 0; i < 250 && !(await answersPing(port, { ca })); i++) await new Promise((r) => setTimeout(r, 20));
    return server;
  }

  get url(): string {
    return `rediss://127.0.0.1:${this.port}`;
  }

  async stop(): Promise<void> {
    if (this.child.exitCode === null) {
      const exited = new Promise((resolve) => this.child.once('exit', resolve));
      this.child.kill('SIGKILL');
      await exited;
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}
