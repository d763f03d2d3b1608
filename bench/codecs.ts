// Payload codecs (issue 42): what sealing costs a topic. The same method for each variant: a plain
// topic, the topic under createEncryptionCodec, and under chainCodecs(gzip with minBytes 0, encryption), with 1 KiB
// payloads (random text, so gzip finds little to take out, as with real ids and tokens). Each variant
// pushes COUNT messages with pushMany in batches of 500 to a fresh Redis (push/s over the whole
// push), then consumes them at concurrency 50 (consume+ack/s from the first handler start to the
// last), and measures what the stored bodies take: the messages hash field's length (HSTRLEN,
// averaged over every body) and MEMORY USAGE of the messages hash, per message. Variants take turns
// in ROUNDS interleaved rounds; the median of each figure is printed. A last part times the codec
// alone in this process (sealText and openText of the same 1 KiB body, and their steps) to show where
// a sealed message's time goes. CPU per message of this process and of redis-server is printed too:
// on a busy machine it moves less than the rates do.
// Run: npm run bench:codecs [-- --count=20000 --rounds=3 --bytes=1024]
import { createCipheriv, randomBytes } from 'node:crypto';
import { chainCodecs, createCompressionCodec, createEncryptionCodec } from '../lib/codecs/codecs';
import { openText, sealText } from '../lib/codecs/sealed-text';
import type { Codec } from '../lib/interfaces';
import { queueKeys } from '../lib/engine/keys/queue-keys';
import { RedisAckQueueService } from '../lib/service/redis-ack-queue.service';
import { now } from './adapter';
import { BenchRedis } from './redis-server';

const arg = (name: string, fallback: number) =>
  Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback);
const COUNT = arg('count', 20_000);
const ROUNDS = arg('rounds', 3);
const BYTES = arg('bytes', 1024);
const BATCH = 500;
const CONCURRENCY = 50;
const PREFIX = 'bench';

const KEY = randomBytes(32);
const encryption = () => createEncryptionCodec({ keys: { k1: KEY }, currentKeyId: 'k1' });
/** The codec of each variant (undefined: none). */
const VARIANTS: Record<string, () => Codec | undefined> = {
  plain: () => undefined,
  encrypted: encryption,
  'gzip + encrypted': () => chainCodecs(createCompressionCodec({ algorithm: 'gzip', minBytes: 0 }), encryption()),
};

/** A payload whose JSON text is about BYTES long: an id and random base64 text. */
function payload(n: number): { n: number; text: string } {
  return { n, text: randomBytes(Math.ceil((BYTES - 24) * 0.75)).toString('base64') };
}

interface Figures {
  pushRate: number;
  consumeRate: number;
  /** Average length of a stored body (the messages hash field), in bytes. */
  bodyBytes: number;
  /** MEMORY USAGE of the messages hash over the messages it holds. */
  hashBytes: number;
  /** CPU time per message (µs) of this process and of redis-server, over the push and over the consume. */
  pushNodeUs: number;
  pushRedisUs: number;
  consumeNodeUs: number;
  consumeRedisUs: number;
}

/** CPU µs this process has used. */
const nodeCpu = () => {
  const { user, system } = process.cpuUsage();
  return user + system;
};

async function bodyLengths(redis: BenchRedis, key: string): Promise<{ average: number; count: number }> {
  let cursor = '0';
  let total = 0;
  let count = 0;
  do {
    const [next, fields] = await redis.admin.hscan(key, cursor, 'COUNT', 1000);
    cursor = next;
    const pipeline = redis.admin.pipeline();
    for (let i = 0; i < fields.length; i += 2) pipeline.hstrlen(key, fields[i]);
    for (const [error, length] of (await pipeline.exec()) ?? []) {
      if (error) throw error;
      total += length as number;
      count++;
    }
  } while (cursor !== '0');
  return { average: total / count, count };
}

async function measure(redis: BenchRedis, variant: string, round: number): Promise<Figures> {
  const topic = `codecs.${round}.${Object.keys(VARIANTS).indexOf(variant)}`;
  await redis.admin.flushall();
  const codec = VARIANTS[variant]();
  const queue = new RedisAckQueueService({
    connection: redis.url,
    prefix: PREFIX,
    logLevel: 'error',
    history: false,
    ...(codec && { codec }),
  });
  await queue.connect();
  const payloads = Array.from({ length: COUNT }, (_, n) => payload(n));
  const pushStart = now();
  let node = nodeCpu();
  let server = await redis.cpuSeconds();
  for (let start = 0; start < COUNT; start += BATCH)
    await queue.pushMany(
      topic,
      payloads.slice(start, start + BATCH).map((p) => ({ payload: p })),
    );
  const pushRate = COUNT / ((now() - pushStart) / 1000);
  const pushNodeUs = (nodeCpu() - node) / COUNT;
  const pushRedisUs = (((await redis.cpuSeconds()) - server) * 1e6) / COUNT;
  const key = queueKeys(PREFIX, topic).messages;
  const bodies = await bodyLengths(redis, key);
  if (bodies.count !== COUNT) throw new Error(`${bodies.count} bodies stored, ${COUNT} pushed`);
  const hashBytes = Number(await redis.admin.call('MEMORY', 'USAGE', key, 'SAMPLES', '0')) / COUNT;
  node = nodeCpu();
  server = await redis.cpuSeconds();
  let seen = 0;
  let first = 0;
  let last = 0;
  let finished!: () => void;
  const done = new Promise<void>((resolve) => (finished = resolve));
  const consumer = queue.consume(
    topic,
    (message: { n: number; text: string }) => {
      if (typeof message.text !== 'string') throw new Error('payload not opened');
      last = now();
      if (seen++ === 0) first = last;
      if (seen === COUNT) finished();
    },
    { concurrency: CONCURRENCY },
  );
  await done;
  await queue.waitUntilIdle(topic);
  const consumeNodeUs = (nodeCpu() - node) / COUNT;
  const consumeRedisUs = (((await redis.cpuSeconds()) - server) * 1e6) / COUNT;
  await consumer.close();
  await queue.close();
  return {
    pushRate,
    consumeRate: ((COUNT - 1) * 1000) / (last - first),
    bodyBytes: bodies.average,
    hashBytes,
    pushNodeUs,
    pushRedisUs,
    consumeNodeUs,
    consumeRedisUs,
  };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/** Microseconds per call of `step`, over enough calls to take about half a second. */
async function timed(step: () => unknown): Promise<number> {
  for (let i = 0; i < 500; i++) await step();
  let calls = 0;
  const start = now();
  while (now() - start < 500) {
    for (let i = 0; i < 200; i++) await step();
    calls += 200;
  }
  return ((now() - start) * 1000) / calls;
}

/** Where a sealed body's time goes in this process: the codec's steps one by one. */
async function steps(): Promise<string[]> {
  const body = { p: payload(1), h: {} };
  const json = JSON.stringify(body);
  const data = Buffer.from(json, 'utf8');
  const codec = encryption();
  const sealed = await sealText(codec, json);
  const encoded = codec.encode(data) as Uint8Array;
  const base64 = Buffer.from(encoded).toString('base64');
  const rows: [string, () => unknown][] = [
    ['JSON.stringify of the body (done for a plain one too)', () => JSON.stringify(body)],
    ['randomBytes(12) (the IV)', () => randomBytes(12)],
    ['createCipheriv (key schedule)', () => createCipheriv('aes-256-gcm', KEY, randomBytes(12))],
    ['codec.encode (IV, cipher, update, final, tag, concat)', () => codec.encode(data)],
    ['base64 of the sealed bytes', () => Buffer.from(encoded).toString('base64')],
    ['sealText (encode + base64)', () => sealText(codec, json)],
    ['base64 decode', () => Buffer.from(base64, 'base64')],
    ['codec.decode', () => codec.decode(encoded)],
    ['openText (base64 decode + decode + utf8)', () => openText('t', codec, sealed)],
  ];
  const lines = [`| step, ${data.length}-byte body | µs per call |`, '| --- | --- |'];
  for (const [label, step] of rows) lines.push(`| ${label} | ${(await timed(step)).toFixed(2)} |`);
  return lines;
}

async function main(): Promise<void> {
  const redis = await BenchRedis.start();
  const results = new Map<string, Figures[]>(Object.keys(VARIANTS).map((name) => [name, []]));
  try {
    for (let round = 0; round < ROUNDS; round++)
      for (const variant of Object.keys(VARIANTS)) results.get(variant)!.push(await measure(redis, variant, round));
  } finally {
    await redis.stop();
  }
  const plain = results.get('plain')!;
  const m = (figures: Figures[], pick: (f: Figures) => number) => median(figures.map(pick));
  console.log(
    `${COUNT} messages of ${BYTES} bytes per variant, median of ${ROUNDS} interleaved rounds, ` +
      `redis-server ${redis.version()}, pushMany in batches of ${BATCH}, consume at concurrency ${CONCURRENCY}`,
  );
  console.log(
    '| variant | push/s | vs plain | consume/s | vs plain | stored body (bytes) | added per message | messages hash, bytes per message |',
  );
  console.log('| --- | --- | --- | --- | --- | --- | --- | --- |');
  for (const [variant, figures] of results) {
    const push = m(figures, (f) => f.pushRate);
    const consume = m(figures, (f) => f.consumeRate);
    const body = m(figures, (f) => f.bodyBytes);
    const added = body - m(plain, (f) => f.bodyBytes);
    const percent = (value: number, base: number) => `${((value / base) * 100).toFixed(0)}%`;
    console.log(
      `| ${variant} | ${push.toFixed(0)} | ${percent(
        push,
        m(plain, (f) => f.pushRate),
      )} | ${consume.toFixed(0)} | ` +
        `${percent(
          consume,
          m(plain, (f) => f.consumeRate),
        )} | ${body.toFixed(0)} | ${added >= 0 ? '+' : ''}${added.toFixed(0)} | ` +
        `${m(figures, (f) => f.hashBytes).toFixed(0)} |`,
    );
  }
  console.log('');
  console.log('CPU per message (µs; less sensitive to other load on the machine than the rates):');
  console.log('| variant | push: this process | push: redis-server | consume: this process | consume: redis-server |');
  console.log('| --- | --- | --- | --- | --- |');
  for (const [variant, figures] of results)
    console.log(
      `| ${variant} | ${m(figures, (f) => f.pushNodeUs).toFixed(1)} | ${m(figures, (f) => f.pushRedisUs).toFixed(1)} | ` +
        `${m(figures, (f) => f.consumeNodeUs).toFixed(1)} | ${m(figures, (f) => f.consumeRedisUs).toFixed(1)} |`,
    );
  console.log('');
  console.log('Each round, every variant (push/s, consume/s):');
  for (const [variant, figures] of results)
    console.log(
      `  ${variant}: ${figures.map((f) => `${f.pushRate.toFixed(0)}/${f.consumeRate.toFixed(0)}`).join('  ')}`,
    );
  console.log('');
  for (const line of await steps()) console.log(line);
}

void main();
