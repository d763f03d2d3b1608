// The server side of bench/transport.ts, in a process of its own: a Nest microservice with an
// @EventPattern handler that counts and a @MessagePattern handler that adds, on this project's
// transport or on Nest's Transport.REDIS. Its parent drives it over IPC (bench/transport-protocol.ts)
// and sees it exit on its own after `close`: an open handle left by app.close() shows as a hang.
// Run by the driver: node bench/dist/bench/transport-server.js <ours|nest-redis> <redis url> <concurrency>
import 'reflect-metadata';
import { Controller, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { EventPattern, MessagePattern, type MicroserviceOptions, Payload, Transport } from '@nestjs/microservices';
import { RedisAckQueueServer } from '../lib/microservices';
import {
  EVENT_PATTERN,
  epochNow,
  REQUEST_PATTERN,
  type ServerCommand,
  type ServerReport,
  type TransportSystem,
} from './transport-protocol';

const [system, url, concurrency] = process.argv.slice(2) as [TransportSystem, string, string];

const report = (message: ServerReport) => process.send?.(message);

/** Events seen since the last `expect`, and when the last one was. */
let count = 0;
let expected = Infinity;
let lastAt = 0;

@Controller()
class BenchController {
  @EventPattern(EVENT_PATTERN)
  counted(@Payload() _event: unknown): void {
    count++;
    lastAt = epochNow();
    if (count === expected) report({ type: 'reached', at: lastAt });
  }

  @MessagePattern(REQUEST_PATTERN)
  sum(@Payload() [a, b]: [number, number]): number {
    return a + b;
  }
}

@Module({ controllers: [BenchController] })
class BenchModule {}

/** This project: its server with a handler concurrency; Nest's: host and port, handlers unbounded. */
function transport(): MicroserviceOptions {
  if (system === 'ours') {
    return { strategy: new RedisAckQueueServer({ connection: url, concurrency: Number(concurrency) }) };
  }
  const { hostname, port } = new URL(url);
  return { transport: Transport.REDIS, options: { host: hostname, port: Number(port) } };
}

async function main(): Promise<void> {
  const app = await NestFactory.createMicroservice<MicroserviceOptions>(BenchModule, {
    ...transport(),
    logger: ['error', 'warn'],
  });
  await app.listen();
  process.on('message', (command: ServerCommand) => {
    if (command.type === 'expect') {
      [count, expected, lastAt] = [0, command.n, 0];
      report({ type: 'expecting' });
    } else if (command.type === 'count') {
      report({ type: 'count', count, at: lastAt });
    } else if (command.type === 'cpu') {
      const { user, system } = process.cpuUsage();
      report({ type: 'cpu', us: user + system });
    } else {
      // The IPC channel goes last: the process then exits only if app.close() left nothing open.
      void app.close().then(() => process.disconnect());
    }
  });
  report({ type: 'ready' });
}

void main();
