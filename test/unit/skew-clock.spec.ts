import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { SKEW_CLOCK_PRELOAD, skewedClockEnv } from '../support/fake-clock';

const run = promisify(execFile);

/** What a child process with the preload sees of its clocks, and how long a 300 ms timer takes. */
const PROBE = `
const { performance } = require('node:perf_hooks');
const startedNs = process.hrtime.bigint();
const startedWall = Date.now();
setTimeout(() => {
  console.log(JSON.stringify({
    dateNow: startedWall,
    newDate: new Date().getTime(),
    dateString: Date(),
    monotonicWall: performance.timeOrigin + performance.now(),
    timerMonotonicMs: Number(process.hrtime.bigint() - startedNs) / 1e6,
    timerWallMs: Date.now() - startedWall,
    fromValue: new Date(0).getTime(),
    parsed: Date.parse('2020-01-01T00:00:00Z'),
    utc: Date.UTC(2020, 0, 1),
    isDate: new Date() instanceof Date && Object.prototype.toString.call(new Date()) === '[object Date]',
  }));
}, 300);
`;

interface Probe {
  dateNow: number;
  newDate: number;
  dateString: string;
  monotonicWall: number;
  timerMonotonicMs: number;
  timerWallMs: number;
  fromValue: number;
  parsed: number;
  utc: number;
  isDate: boolean;
}

describe('skew-clock preload (the clock-skew fault test runs consumers with it)', () => {
  it.each([-300_000, 300_000])(
    'shifts Date by %d ms in a child process; monotonic clocks and timers stay true',
    async (offsetMs) => {
      const before = Date.now();
      const { stdout } = await run(process.execPath, ['-e', PROBE], {
        env: { ...process.env, ...skewedClockEnv(offsetMs) },
      });
      const after = Date.now();
      const probe = JSON.parse(stdout) as Probe;

      // The child read its clocks between our two readings: shifted by exactly the offset.
      for (const read of [probe.dateNow, probe.newDate]) {
        expect(read).toBeGreaterThanOrEqual(before + offsetMs);
        expect(read).toBeLessThanOrEqual(after + offsetMs);
      }
      // Date() as a function: a string of the shifted time (whole seconds).
      const fromString = Date.parse(probe.dateString);
      expect(fromString).toBeGreaterThanOrEqual(before + offsetMs - 1_000);
      expect(fromString).toBeLessThanOrEqual(after + offsetMs);
      // The monotonic clock is not shifted.
      expect(probe.monotonicWall).toBeGreaterThanOrEqual(before - 5);
      expect(probe.monotonicWall).toBeLessThanOrEqual(after + 5);
      // A 300 ms timer fires after 300 ms, on both clocks: the offset is constant, not a drift.
      expect(probe.timerMonotonicMs).toBeGreaterThanOrEqual(299);
      expect(probe.timerMonotonicMs).toBeLessThan(1_000);
      expect(probe.timerWallMs).toBeGreaterThanOrEqual(299);
      expect(probe.timerWallMs).toBeLessThan(1_000);
      // Dates made from a value are what they say; a date is still a Date.
      expect(probe).toMatchObject({ fromValue: 0, parsed: 1_577_836_800_000, utc: 1_577_836_800_000, isDate: true });
    },
  );

  it('refuses to start without a usable offset, naming the variable', async () => {
    const env = {
      ...process.env,
      NODE_OPTIONS: `--require ${JSON.stringify(SKEW_CLOCK_PRELOAD)}`,
      ACKQ_CLOCK_SKEW_MS: '5 minutes',
    };
    await expect(run(process.execPath, ['-e', 'console.log("started")'], { env })).rejects.toMatchObject<
      Record<string, unknown>
    >({
      code: 1,
      stdout: '',
      stderr: expect.stringContaining('skew-clock.js needs ACKQ_CLOCK_SKEW_MS'),
    });
  });
});
