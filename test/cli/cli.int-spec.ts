import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createEncryptionCodec } from '../../lib';
import type { CliIo } from '../../lib/cli/cli-io';
import { runCli } from '../../lib/cli/program';
import { CLI_MAIN, runCliBinary, runCliHere as run } from '../support/cli-runs';
import { eventually, uniqueTopic, useRedis } from '../support/queue-fixture';
import { OBJECT_NAMES, runNamedFlow } from '../support/named-flow';
import { DEFAULTS } from '../../lib/common/redis-ack-queue.constants';

/** `text` matched literally in a RegExp. */
const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe('redis-ack-queue CLI', () => {
  const fx = useRedis();
  let prefixes = 0;

  /** A fresh prefix and a service on it, so each test sees only its own topics. */
  async function setUp() {
    const prefix = `cli${++prefixes}`;
    const queue = await fx.service({ prefix, maxAttempts: 1 });
    const cli = (...args: string[]) => run(['--url', fx.server.url, '--prefix', prefix, ...args]);
    return { prefix, queue, cli };
  }

  /** Pushes messages that die at once (maxAttempts 1): returns their ids. */
  async function deadLetters(queue: Awaited<ReturnType<typeof setUp>>['queue'], topic: string, ids: string[]) {
    await queue.pushMany(
      topic,
      ids.map((id) => ({ id, payload: { id } })),
    );
    for (const message of await queue.reserve(topic, { count: ids.length, leaseMs: 60_000 }))
      await queue.nack(message, { error: new Error('boom') });
    return ids;
  }

  it('topics lists the pushed topics, sorted, as text and JSON', async () => {
    const { queue, cli } = await setUp();
    const [b, a] = [uniqueTopic('b'), uniqueTopic('a')];
    await queue.push(b, 1);
    await queue.push(a, 1);
    expect(await cli('topics')).toEqual({ code: 0, stdout: `${a}\n${b}\n`, stderr: '' });
    expect(JSON.parse((await cli('topics', '--json')).stdout)).toEqual([a, b]);
  });

  it('names the prefix when it has no topics, and exits 3 for stats of a topic it never saw instead of zeros', async () => {
    const { prefix, queue, cli } = await setUp();
    const none = `No topics registered under prefix "${prefix}".\n`;
    expect(await cli('topics')).toEqual({ code: 0, stdout: none, stderr: '' });
    expect(await cli('stats')).toEqual({ code: 0, stdout: none, stderr: '' });

    const unknown = await cli('stats', 'no.such.topic');
    expect(unknown.code).toBe(3);
    expect(unknown.stdout).toBe('');
    expect(unknown.stderr).toBe(
      `redis-ack-queue: no topic "no.such.topic" under prefix "${prefix}": nothing registered it and it holds no ` +
        'messages (check the name and --prefix; `topics` lists the registered ones)\n',
    );
    // A registered topic that holds nothing shows its zeros; so does a forgotten one that holds messages.
    const [done, forgotten] = [uniqueTopic('done'), uniqueTopic('forgotten')];
    await queue.push(done, 1);
    await queue.ack((await queue.reserve(done))[0]);
    expect(JSON.parse((await cli('stats', done, '--json')).stdout)).toMatchObject({ ready: 0, dead: 0 });
    await queue.push(forgotten, 1);
    expect(await queue.forgetTopic(forgotten)).toBe(true);
    expect(JSON.parse((await cli('stats', forgotten, '--json')).stdout)).toMatchObject({ ready: 1 });
  });

  it("stored-format shows the prefix's stored format and switches it, refusing another word", async () => {
    const { prefix, cli } = await setUp();
    expect(await cli('stored-format')).toEqual({ code: 0, stdout: 'Stored format: compact.\n', stderr: '' });
    expect(await cli('stored-format', 'json')).toEqual({ code: 0, stdout: 'Stored format: json.\n', stderr: '' });
    expect(await fx.redis.get(`{${prefix}:}:stored-format`)).toBe('json');
    expect((await cli('stored-format', '--json')).stdout).toContain('"storedFormat": "json"');
    const refused = await cli('stored-format', 'binary');
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("give 'compact' or 'json'");
    expect(await fx.redis.get(`{${prefix}:}:stored-format`)).toBe('json');
  });

  it('stats shows every registered topic as an aligned table, one topic as JSON, and pause/resume in it', async () => {
    const { queue, cli } = await setUp();
    const [t1, t2] = [uniqueTopic('s1'), uniqueTopic('s2')];
    await queue.pushMany(t1, [{ payload: 1 }, { payload: 2 }, { payload: 3, delayMs: 60_000 }]);
    await queue.push(t2, 1);
    const table = await cli('stats');
    expect(table.code).toBe(0);
    const lines = table.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^TOPIC\s+READY\s+DELAYED\s+LEASED\s+DEAD\s+PAUSED$/);
    expect(lines[1].split(/\s+/)).toEqual([t1, '2', '1', '0', '0', 'false']);
    expect(lines[2].split(/\s+/)).toEqual([t2, '1', '0', '0', '0', 'false']);
    // The READY count starts under its heading (the topic's name may hold a 2 itself: its pid).
    expect(lines[1].search(/(?<=\s)2/)).toBe(lines[0].indexOf('READY'));

    expect(await cli('pause', t1)).toEqual({ code: 0, stdout: `Paused ${t1}.\n`, stderr: '' });
    expect(JSON.parse((await cli('stats', t1, '--json')).stdout)).toEqual({
      topic: t1,
      ready: 2,
      delayed: 1,
      leased: 0,
      dead: 0,
      paused: true,
    });
    expect((await queue.stats(t1)).paused).toBe(true);
    expect((await cli('resume', t1, '--json')).stdout).toContain('"paused": false');
    expect((await queue.stats(t1)).paused).toBe(false);
  });

  it('finds a partitioned topic by its recorded partition count', async () => {
    const { prefix, cli } = await setUp();
    const topic = uniqueTopic('parted');
    const queue = await fx.service({ prefix, topics: { [topic]: { partitions: 3 } } });
    await queue.pushMany(
      topic,
      Array.from({ length: 6 }, (_, i) => ({ id: `p${i}`, payload: i })),
    );
    expect(JSON.parse((await cli('stats', topic, '--json')).stdout)).toMatchObject({ ready: 6 });
    expect(JSON.parse((await cli('get', topic, 'p4', '--json')).stdout)).toMatchObject({ id: 'p4', payload: 4 });
  });

  it('stats --watch prints a refresh and ends cleanly on SIGINT', async () => {
    const { queue, prefix } = await setUp();
    const topic = uniqueTopic('watched');
    await queue.push(topic, 1);
    const args = ['--url', fx.server.url, '--prefix', prefix, 'stats', '--watch'];
    // The binary: --watch runs until its process gets SIGINT.
    const child = execFile(process.execPath, [CLI_MAIN, ...args]);
    let stdout = '';
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    await new Promise<void>((resolve) =>
      child.stdout!.on('data', (chunk: string) => {
        stdout += chunk;
        if (stdout.includes(topic)) resolve();
      }),
    );
    child.kill('SIGINT');
    expect(await exited).toBe(0);
  });

  it('list, count and dead take --tag, --from, --to and --error-contains; get shows tags', async () => {
    const { queue, cli } = await setUp();
    const topic = uniqueTopic('tags');
    await queue.pushMany(topic, [
      { id: 't1', payload: 1, tags: ['tenant:42', 'spring'] },
      { id: 't2', payload: 2, tags: ['tenant:7'] },
      { id: 't3', payload: 3, maxAttempts: 1, tags: ['tenant:42'] },
    ]);
    const [first, second, third] = await queue.reserve(topic, { count: 3 });
    await queue.release(first);
    await queue.release(second);
    await queue.nack(third, { error: new Error('upstream timeout') });
    const listed = await cli('list', topic, 'ready', '--tag', 'tenant:42');
    expect(listed.stdout).toMatch(/^ID\s+ATTEMPT\s+ENQUEUED\s+DUE\s+PRIORITY\s+TAGS$/m);
    expect(listed.stdout).toMatch(/^t1\s.*tenant:42,spring$/m);
    expect(listed.stdout).not.toMatch(/^t2\s/m);
    expect((await cli('count', topic, 'ready', '--tag', 'tenant:42')).stdout).toBe('1\n');
    expect(JSON.parse((await cli('count', topic, 'dead', '--error-contains', 'timeout', '--json')).stdout)).toEqual({
      topic,
      state: 'dead',
      count: 1,
    });
    expect((await cli('count', topic, 'ready', '--from', new Date(Date.now() + 3_600_000).toISOString())).stdout).toBe(
      '0\n',
    );
    expect((await cli('count', topic, 'ready', '--to', String(Date.now() + 3_600_000))).stdout).toBe('2\n');
    expect((await cli('dead', topic, '--tag', 'tenant:42', '--error-contains', 'timeout')).stdout).toMatch(/^t3\s/m);
    expect((await cli('dead', topic, '--tag', 'tenant:7')).stdout).toBe(`No dead letters in ${topic}.\n`);
    expect((await cli('get', topic, 't1')).stdout).toMatch(/^tags:\s+tenant:42, spring$/m);
    expect((await cli('count', topic, 'ready', '--from', 'yesterday')).code).toBe(2);
    const refused = await cli('count', topic, 'ready', '--tag', 'x'.repeat(200));
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).not.toContain('x'.repeat(200));
  });

  it('shows values a codec sealed as encrypted, with their size and key id (the CLI has no codec)', async () => {
    const prefix = `cli${++prefixes}`;
    const codec = createEncryptionCodec({ keys: { v1: randomBytes(32) }, currentKeyId: 'v1' });
    const queue = await fx.service({ prefix, maxAttempts: 1, codec, keepCompleted: true });
    const cli = (...args: string[]) => run(['--url', fx.server.url, '--prefix', prefix, ...args]);
    const topic = uniqueTopic('sealed');
    await queue.push(topic, { card: 'CANARY-payload' }, { id: 's1', headers: { who: 'CANARY-header' } });
    await queue.push(topic, { card: 'CANARY-dead' }, { id: 's2' });
    const sealed = /encrypted, \d+ bytes, key v1 \(not opened: no codec\)/;

    const shown = await cli('get', topic, 's1');
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(new RegExp(`^payload:\\s+${sealed.source}$`, 'm'));
    expect(shown.stdout).not.toContain('CANARY');
    const json = JSON.parse((await cli('get', topic, 's1', '--json')).stdout) as Record<string, unknown>;
    expect(json).toMatchObject({ id: 's1', headers: {}, sealed: { keyId: 'v1', undecodable: 'no-codec' } });
    expect(json).not.toHaveProperty('payload');
    const listed = await cli('list', topic, 'ready');
    expect(listed.stdout).toMatch(/SEALED/);
    expect(listed.stdout).toMatch(new RegExp(`^s1\\s.*${sealed.source}`, 'm'));

    const [first] = await queue.reserve(topic);
    await queue.nack(first, { error: new Error('boom') });
    const dead = await cli('dead', topic);
    expect(dead.stdout).toMatch(new RegExp(`^s1\\s.*${sealed.source}.*boom`, 'm'));
    expect(`${shown.stdout}${listed.stdout}${dead.stdout}`).not.toContain('CANARY');
  });

  it('list and get show messages; get of a missing id exits 3', async () => {
    const { queue, cli } = await setUp();
    const topic = uniqueTopic('list');
    await queue.pushMany(topic, [
      { id: 'm1', payload: { n: 1 }, headers: { origin: 'test' } },
      { id: 'm2', payload: { n: 2 } },
    ]);
    const listed = await cli('list', topic, 'ready');
    expect(listed.code).toBe(0);
    expect(listed.stdout.split('\n').map((line) => line.split(/\s+/)[0])).toEqual(['ID', 'm1', 'm2', '']);
    expect(JSON.parse((await cli('list', topic, 'ready', '--offset', '1', '--limit', '1', '--json')).stdout)).toEqual([
      expect.objectContaining({ id: 'm2', state: 'ready', payload: { n: 2 } }),
    ]);
    const shown = await cli('get', topic, 'm1');
    expect(shown.stdout).toMatch(/^id:\s+m1$/m);
    expect(shown.stdout).toMatch(/^payload:\s+\{"n":1\}$/m);
    expect(JSON.parse((await cli('get', topic, 'm1', '--json')).stdout)).toMatchObject({
      id: 'm1',
      headers: { origin: 'test' },
    });
    const missing = await cli('get', topic, 'nope');
    expect([missing.code, missing.stdout]).toEqual([3, '']);

    // A message's durable steps, one line each, by name, their results cut short.
    const consumer = queue.consume(topic, async (_payload, context) => {
      await context.step('notify', () => undefined);
      await context.step('charge', () => ({ chargeId: 'ch_1' }));
      await context.step('receipt', () => 'r'.repeat(300));
      throw new Error('dies after its steps');
    });
    await eventually(async () => (await queue.get(topic, 'm1'))?.state === 'dead');
    await consumer.close();
    const stepped = (await cli('get', topic, 'm1')).stdout;
    expect(stepped.split('\n').filter((line) => line.startsWith('step '))).toEqual([
      'step charge:  {"chargeId":"ch_1"}',
      'step notify:  undefined',
      `step receipt: "${'r'.repeat(119)}… (302 characters)`,
    ]);
    expect(missing.stderr).toMatch(/^[^\n]*nope[^\n]*\n$/);
  });

  it('list and get show the mode and key of keyed messages, and a message waiting for its key', async () => {
    const { queue, cli } = await setUp();
    const topic = uniqueTopic('keyed');
    const debounced = await queue.push(topic, 1, { debounce: { key: 'doc 1', delayMs: 600_000 } });
    // The first of doc-9 runs (leased, never acked here); the second waits for it, with no due time.
    const supersede = { key: 'doc-9', running: 'keep' as const };
    await queue.push(topic, 'a', { supersede });
    const [running] = await queue.reserve(topic, { leaseMs: 600_000 });
    const waiting = await queue.push(topic, 'b', { supersede });

    const delayed = (await cli('list', topic, 'delayed')).stdout;
    expect(delayed).toMatch(/^ID\s+ATTEMPT\s+ENQUEUED\s+DUE\s+PRIORITY\s+MODE\s+KEY$/m);
    expect(delayed).toMatch(new RegExp(`^${debounced.id}\\s+0\\s+\\S+\\s+\\S+\\s+-\\s+debounce\\s+doc 1$`, 'm'));
    expect(delayed).toMatch(
      new RegExp(`^${waiting.id}\\s+0\\s+\\S+\\s+waiting-for-key\\s+-\\s+supersede\\s+doc-9$`, 'm'),
    );
    expect((await cli('list', topic, 'leased')).stdout).toMatch(
      new RegExp(`^${running.id}\\s.*\\ssupersede\\s+doc-9$`, 'm'),
    );
    const shown = (await cli('get', topic, waiting.id)).stdout;
    expect(shown).toMatch(/^state:\s+delayed$/m);
    expect(shown).toMatch(/^key:\s+doc-9$/m);
    expect(shown).toMatch(/^mode:\s+supersede$/m);
    expect(shown).toMatch(/^dueAt:\s+waiting-for-key$/m);
    expect((await cli('get', topic, debounced.id)).stdout).toMatch(/^key:\s+doc 1$/m);
    expect(JSON.parse((await cli('get', topic, debounced.id, '--json')).stdout)).toMatchObject({
      key: 'doc 1',
      mode: 'debounce',
    });
    // A page without keyed messages keeps its columns.
    await queue.push(topic, 'plain');
    expect((await cli('list', topic, 'ready')).stdout).toMatch(/^ID\s+ATTEMPT\s+ENQUEUED\s+DUE\s+PRIORITY$/m);
  });

  it("get shows a flow's parent and children, flow prints its tree, list and stats show the waiting parents", async () => {
    const { queue, cli } = await setUp();
    const [book, chapter, page] = [uniqueTopic('book'), uniqueTopic('chapter'), uniqueTopic('page')];
    await queue.pushFlow({
      topic: book,
      id: 'b1',
      payload: { book: 1 },
      children: [
        { topic: chapter, id: 'c1', payload: 1 },
        { topic: chapter, id: 'c2', payload: 2, options: { onChildFailure: 'continue' } },
        // Waits for its own child, on a topic nobody consumes: b1 keeps waiting.
        { topic: chapter, id: 'c3', payload: 3, children: [{ topic: page, id: 'g1', payload: 1 }] },
      ],
    });
    const consumer = queue.consume(chapter, (_: unknown, context: { id: string }) => {
      if (context.id === 'c2') throw new Error('out of ink');
      return { pages: 3 };
    });
    await eventually(async () => {
      const children = (await queue.get(book, 'b1'))?.children ?? [];
      return children.filter((child) => child.outcome !== 'pending').length === 2;
    }, 30_000);
    await consumer.close();

    const parent = await cli('get', book, 'b1');
    expect(parent.code).toBe(0);
    expect(parent.stdout).toMatch(/^state:\s+waiting-children$/m);
    expect(parent.stdout).toMatch(/^children:\s+3 \(1 failed, 1 pending, 1 acked\)$/m);
    expect(parent.stdout).toMatch(/^TOPIC\s+ID\s+OUTCOME\s+DETAIL$/m);
    const row = (id: string, rest: string) => new RegExp(`^${chapter.replace(/\./g, '\\.')}\\s+${id}\\s+${rest}$`, 'm');
    expect(parent.stdout).toMatch(row('c1', 'acked\\s+\\{"pages":3\\}'));
    expect(parent.stdout).toMatch(row('c2', 'failed\\s+failed: Error: out of ink'));
    expect(parent.stdout).toMatch(row('c3', 'pending\\s+-'));
    const child = await cli('get', chapter, 'c3');
    expect(child.stdout).toMatch(new RegExp(`^parent:\\s+${book.replace(/\./g, '\\.')} b1$`, 'm'));
    expect(child.stdout).toMatch(/^children:\s+1 \(1 pending\)$/m);
    expect(JSON.parse((await cli('get', chapter, 'c3', '--json')).stdout)).toMatchObject({
      parent: { topic: book, id: 'b1' },
      children: [{ topic: page, id: 'g1', outcome: 'pending' }],
    });

    const tree = await cli('flow', book, 'b1');
    expect(tree.code).toBe(0);
    const lines = tree.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe(`${book} b1  waiting-children`);
    expect(lines.slice(1, 5).sort()).toEqual(
      [
        `  ${chapter} c1  completed  {"pages":3}`,
        `  ${chapter} c2  dead  failed: Error: out of ink`,
        `  ${chapter} c3  waiting-children`,
        `    ${page} g1  ready`,
      ].sort(),
    );
    // A node's children follow it, one step further in.
    expect(lines[lines.indexOf(`  ${chapter} c3  waiting-children`) + 1]).toBe(`    ${page} g1  ready`);
    expect(lines.at(-1)).toMatch(/^5 nodes: /);
    expect(lines.at(-1)).toContain('2 waiting-children');
    expect(JSON.parse((await cli('flow', chapter, 'c3', '--json')).stdout)).toEqual({
      topic: chapter,
      id: 'c3',
      state: 'waiting-children',
      children: [{ topic: page, id: 'g1', state: 'ready', children: [] }],
    });
    const missing = await cli('flow', book, 'nope');
    expect([missing.code, missing.stdout]).toEqual([3, '']);
    expect(missing.stderr).toMatch(/^[^\n]*nope[^\n]*\n$/);
    for (const args of [
      ['flow', book],
      ['flow', 'bad topic', 'b1'],
      ['flow', book, 'x'.repeat(257)],
    ]) {
      const result = await cli(...args);
      expect({ args, code: result.code, stdout: result.stdout }).toEqual({ args, code: 2, stdout: '' });
    }

    const listed = await cli('list', book, 'waiting-children');
    expect(listed.stdout.split('\n').map((line) => line.split(/\s+/)[0])).toEqual(['ID', 'b1', '']);
    expect(JSON.parse((await cli('stats', book, '--json')).stdout)).toMatchObject({ waitingChildren: 1, delayed: 0 });
    expect((await cli('stats', book)).stdout.trimEnd().split('\n')[1].split(/\s+/).at(-1)).toBe('1');
  });

  it('flow prints a tree of 10,000 nodes, a line each and the count of each state', async () => {
    const { cli } = await setUp();
    const [top, middle, leaf] = [uniqueTopic('top'), uniqueTopic('middle'), uniqueTopic('leaf')];
    // Storing 10,000 nodes is not what is tried here: a bound no machine reaches.
    const writer = await fx.service({ prefix: `cli${prefixes}`, commandTimeoutMs: 120_000 });
    await writer.pushFlow({
      topic: top,
      id: 'root',
      payload: 0,
      children: Array.from({ length: 99 }, (_, p) => ({
        topic: middle,
        id: `m${p}`,
        payload: p,
        children: Array.from({ length: 100 }, (_, l) => ({ topic: leaf, id: `m${p}-l${l}`, payload: l })),
      })),
    });
    // That each page of the read is bounded on its own is flow-size.int-spec's; a loaded machine
    // must not fail this one by a page that waited longer than the default 3 s.
    const tree = await cli('flow', top, 'root', '--timeout', '60000');
    expect([tree.code, tree.stderr]).toEqual([0, '']);
    const lines = tree.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(10_001);
    expect(lines.at(-1)).toBe('10000 nodes: 100 waiting-children, 9900 ready.');
  });

  it('dead lists dead letters; requeue and purge need --yes off a terminal', async () => {
    const { queue, cli } = await setUp();
    const topic = uniqueTopic('dead');
    await deadLetters(queue, topic, ['d1', 'd2', 'd3']);
    const dead = await cli('dead', topic);
    expect(dead.stdout).toMatch(/^ID\s+ATTEMPT\s+REASON\s+DEADAT\s+ERROR$/m);
    // Listed by state, a dead letter's time is when it died, not a due time.
    expect((await cli('list', topic, 'dead')).stdout).toMatch(/^ID\s+ATTEMPT\s+ENQUEUED\s+DIED\s+PRIORITY$/m);
    expect(dead.stdout).toMatch(/^d1\s+1\s+failed\s+\S+\s+Error: boom$/m);

    const refused = await cli('purge', topic, '--all');
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/^[^\n]*--yes[^\n]*\n$/);
    expect((await queue.stats(topic)).dead).toBe(3);

    expect(await cli('requeue', topic, 'd1', '--yes')).toEqual({
      code: 0,
      stdout: `Requeued 1 dead letter of ${topic}.\n`,
      stderr: '',
    });
    expect(JSON.parse((await cli('purge', topic, '--all', '--yes', '--json')).stdout)).toEqual({ topic, purged: 2 });
    expect(await queue.stats(topic)).toMatchObject({ ready: 1, dead: 0 });
    expect((await cli('purge', topic, '--yes')).code).toBe(2);
  });

  it('prints what users control as inert text: ids, keys, step names and errors with escape sequences', async () => {
    const { queue, cli } = await setUp();
    // Sets the terminal's title, clears the screen; an 8-bit CSI; a right-to-left override.
    const esc = '\x1b]0;owned\x07\x1b[2J';
    const [topic, kids, keyed] = [uniqueTopic('inert'), uniqueTopic('kids'), uniqueTopic('keyed')];
    const ids = [`kid${esc}`, 'csi\u009b31m', 'txt\u202eexe.sh', ...OBJECT_NAMES];
    const steps = [`step${esc}`, 'tab\tstep', ...OBJECT_NAMES];
    await runNamedFlow(queue, {
      topic,
      childTopics: OBJECT_NAMES,
      kidsTopic: kids,
      childIds: ids,
      steps,
      error: `boom${esc}\nat line 2\u2028`,
    });
    const message = await queue.push(keyed, 1, { debounce: { key: `key${esc}`, delayMs: 600_000 } });
    await queue.push(keyed, 2, { id: `id${esc}`, delayMs: 600_000 });

    const runs = {
      get: await cli('get', topic, 'parent'),
      getJson: await cli('get', topic, 'parent', '--json'),
      flow: await cli('flow', topic, 'parent'),
      flowJson: await cli('flow', topic, 'parent', '--json'),
      dead: await cli('dead', topic),
      list: await cli('list', keyed, 'delayed'),
      getKeyed: await cli('get', keyed, message.id),
      missing: await cli('get', keyed, `none${esc}`),
      cancelled: await cli('cancel', keyed, `id${esc}`, '--yes'),
    };
    for (const [name, { stdout, stderr }] of Object.entries(runs)) {
      const raw = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u.exec(`${stdout}${stderr}`.replace(/\n/g, ''));
      expect({ name, raw: raw?.[0].codePointAt(0)?.toString(16) }).toEqual({ name, raw: undefined });
    }
    const shown = '\\x1b]0;owned\\x07\\x1b[2J';
    // A name as inert text; its value as JSON, which escapes C0 controls itself.
    expect(runs.get.stdout).toMatch(
      new RegExp(`^step step${escapeRegExp(shown)}: "step step\\\\u001b\\]0;owned\\\\u0007\\\\u001b\\[2J"$`, 'm'),
    );
    expect(runs.get.stdout).toContain('step tab\\tstep:');
    // The error's lines stay lines, under its field.
    expect(runs.get.stdout).toMatch(
      new RegExp(`^error:\\s+Error: boom${escapeRegExp(shown)}\n\\s+at line 2\\\\u\\{2028\\}\n`, 'm'),
    );
    for (const name of OBJECT_NAMES) {
      expect(runs.get.stdout).toMatch(new RegExp(`^step ${name}:\\s+"step ${name}"$`, 'm'));
      expect(runs.flow.stdout).toMatch(new RegExp(`^  ${name} child\\s`, 'm'));
      expect(runs.flow.stdout).toMatch(new RegExp(`^  ${escapeRegExp(kids)} ${name}\\s`, 'm'));
    }
    expect(runs.flow.stdout).toContain(`  ${kids} kid${shown}  `);
    expect(runs.flow.stdout).toContain(`  ${kids} csi\\x9b31m  `);
    expect(runs.flow.stdout).toContain(`  ${kids} txt\\u{202e}exe.sh  `);
    expect(runs.dead.stdout).toMatch(new RegExp(`^parent\\s.*Error: boom${escapeRegExp(shown)}$`, 'm'));
    expect(runs.list.stdout).toMatch(new RegExp(`^id${escapeRegExp(shown)}\\s`, 'm'));
    expect(runs.list.stdout).toMatch(new RegExp(`^${message.id}\\s.*debounce\\s+key${escapeRegExp(shown)}$`, 'm'));
    expect(runs.getKeyed.stdout).toMatch(new RegExp(`^key:\\s+key${escapeRegExp(shown)}$`, 'm'));
    expect(runs.missing).toMatchObject({ code: 3, stderr: `redis-ack-queue: no message none${shown} in ${keyed}\n` });
    expect(runs.cancelled.stdout).toBe(`Cancelled id${shown} of ${keyed} (was delayed).\n`);
    // JSON gives the same values back: the escapes are JSON's own.
    const parent = JSON.parse(runs.getJson.stdout) as { steps: Record<string, string>; error: string };
    expect(Object.keys(parent.steps).sort()).toEqual([...steps].sort());
    expect(parent.error).toMatch(new RegExp(`^Error: boom${escapeRegExp(esc)}\nat line 2\u2028`));
    const tree = JSON.parse(runs.flowJson.stdout) as { children: { id: string }[] };
    expect(tree.children.map((child) => child.id).sort()).toEqual([...ids, ...OBJECT_NAMES.map(() => 'child')].sort());
  });

  it('cancel removes a message with --yes, exits 3 when there is none, refuses without --yes', async () => {
    const { queue, cli } = await setUp();
    const topic = uniqueTopic('cancel');
    await queue.push(topic, 1, { id: 'c1', delayMs: 60_000 });
    expect((await cli('cancel', topic, 'c1')).code).toBe(2);
    expect(await cli('cancel', topic, 'c1', '--yes')).toEqual({
      code: 0,
      stdout: `Cancelled c1 of ${topic} (was delayed).\n`,
      stderr: '',
    });
    expect(await queue.get(topic, 'c1')).toBeNull();
    expect((await cli('cancel', topic, 'c1', '--yes')).code).toBe(3);
  });

  it('remove-schedule deletes a schedule with --yes, exits 3 when there is none, refuses without --yes', async () => {
    const { queue, cli } = await setUp();
    const topic = uniqueTopic('unscheduled');
    await queue.upsertSchedule(topic, 'hourly', { everyMs: 3_600_000 });
    expect((await cli('remove-schedule', topic, 'hourly')).code).toBe(2);
    expect(await cli('remove-schedule', topic, 'hourly', '--yes')).toEqual({
      code: 0,
      stdout: `Removed schedule hourly of ${topic}.\n`,
      stderr: '',
    });
    expect(await queue.schedules(topic)).toEqual([]);
    expect((await cli('remove-schedule', topic, 'hourly', '--yes')).code).toBe(3);
  });

  it('asks on a terminal: yes purges, anything else changes nothing', async () => {
    const { queue, prefix } = await setUp();
    const topic = uniqueTopic('asked');
    await deadLetters(queue, topic, ['a1', 'a2', 'a3']);
    const questions: string[] = [];
    const io = (answer: string): CliIo => ({
      out: () => undefined,
      err: () => undefined,
      interactive: true,
      ask: (question) => (questions.push(question), Promise.resolve(answer)),
    });
    const argv = ['node', 'redis-ack-queue', '--url', fx.server.url, '--prefix', prefix, 'purge', topic, '--all'];
    expect(await runCli(argv, io('n'), {})).toBe(0);
    expect((await queue.stats(topic)).dead).toBe(3);
    expect(await runCli(argv, io('y'), {})).toBe(0);
    expect((await queue.stats(topic)).dead).toBe(0);
    expect(questions).toEqual([`Purge 3 dead letters of ${topic}? [y/N] `, `Purge 3 dead letters of ${topic}? [y/N] `]);
  });

  it('schedules lists the schedules of a topic and of every topic', async () => {
    const { queue, cli } = await setUp();
    const topic = uniqueTopic('sched');
    await queue.upsertSchedule(topic, 'nightly', { cron: '0 3 * * *', payload: {} });
    const shown = await cli('schedules');
    expect(shown.stdout).toMatch(new RegExp(`^${topic.replace(/\./g, '\\.')}\\s+nightly\\s+0 3 \\* \\* \\*`, 'm'));
    expect(JSON.parse((await cli('schedules', topic, '--json')).stdout)).toEqual([
      expect.objectContaining({ topic, name: 'nightly', cron: '0 3 * * *' }),
    ]);
  });

  it('reads REDIS_URL when --url is not given', async () => {
    const { queue, prefix } = await setUp();
    const topic = uniqueTopic('env');
    await queue.push(topic, 1);
    // The binary: it reads its own process's environment.
    const result = await runCliBinary(['--prefix', prefix, 'topics'], { REDIS_URL: fx.server.url });
    expect(result).toEqual({ code: 0, stdout: `${topic}\n`, stderr: '' });
  });

  it('exits 2 on bad usage', async () => {
    const { cli } = await setUp();
    for (const args of [
      ['bogus'],
      ['get', 't'],
      ['list', 't', 'ready', '--limit', 'x'],
      ['list', 't', 'nowhere'],
      ['stats', 'bad topic'],
    ]) {
      const result = await cli(...args);
      expect({ args, code: result.code, stdout: result.stdout }).toEqual({ args, code: 2, stdout: '' });
      expect(result.stderr).not.toMatch(/\n\s+at /);
    }
  });

  it('exits 2 on a malformed database and 1 on one the server lacks, writing into database 0 in neither case', async () => {
    const { queue, cli } = await setUp();
    await queue.push(uniqueTopic('db0'), 1);
    const base = `redis://:pw@127.0.0.1:${fx.server.port}`;
    const malformed = await run(['--url', `${base}/abc`, 'topics']);
    expect(malformed).toMatchObject({ code: 2, stdout: '' });
    expect(malformed.stderr).toMatch(
      /^redis-ack-queue: Invalid connection database "abc": expected a whole number >= 0/,
    );
    const missing = await run(['--url', `${base}/99`, 'topics']);
    expect(missing).toMatchObject({ code: 1, stdout: '' });
    expect(missing.stderr).toMatch(
      /^redis-ack-queue: Cannot connect to Redis at redis:\/\/127\.0\.0\.1:\d+\/99: ERR DB index/,
    );
    for (const result of [malformed, missing]) expect(result.stderr).not.toContain(':pw@');
    expect((await cli('topics')).code).toBe(0);
  });

  it('exits 1 with one line and no stack or password when Redis is down, after its --timeout', async () => {
    // The binary: its process ends with the exit code, whatever a failed connection leaves behind.
    const result = await runCliBinary(['--url', 'redis://:s3cret@127.0.0.1:1', '--timeout', '500', 'stats']);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/^redis-ack-queue: [^\n]*127\.0\.0\.1:1[^\n]*\n$/);
    expect(result.stderr).not.toContain('s3cret');
    // Gave up after its --timeout of 500 ms, not the default connect timeout: the error names the bound
    // that ran out (a wall-clock bound here measured the machine's load, not the CLI).
    expect(result.stderr).toContain('(for 500 ms)');
    expect(result.stderr).not.toContain(`(for ${DEFAULTS.connectTimeoutMs} ms)`);
  });
});
